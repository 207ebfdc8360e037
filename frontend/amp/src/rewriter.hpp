// Internal to the planner (frontend/amp/src): the rewrite step.
#pragma once

#include <ampx/amp/planner.hpp>

#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace ampx::planner_detail {

// What a planning pass keeps besides the decisions: everything, or only
// what the cost step reads (each node's dtype and device: no names, no
// Cast records), for the first pass of a cost-aware plan, which the second
// pass replaces.
enum class PassDetail { kFull, kForCostStep };

// Builds the rewritten graph: values keep a "home" version (the dtype their
// producer emits) and at most one Cast per (value, target dtype), always
// taken from the home version, so Cast->Cast chains cannot arise.
class Rewriter {
 public:
  // Without `build_graph` only the decisions are kept (home dtypes and the
  // Cast records); plan.graph stays empty.
  // `cast_device(v, from, to, consumer)`: the device a Cast of source value
  // `v` runs on (the planner asks the devices).
  using CastDeviceFn = std::function<int(ValueId, DType, DType, int)>;
  Rewriter(const Graph& src, AmpPlan& plan, bool build_graph, CastDeviceFn cast_device,
           PassDetail detail = PassDetail::kFull)
      : src_(src),
        plan_(plan),
        build_(build_graph),
        records_(detail == PassDetail::kFull || build_graph),
        cast_device_(std::move(cast_device)),
        home_(src.num_values(), kNone),
        home_dtype_(src.num_values(), DType::kInvalid) {
    for (ValueId v = 0; v < static_cast<ValueId>(src.num_values()); ++v)
      home_dtype_[static_cast<size_t>(v)] = src.value(v).type.dtype;
    if (!build_) return;
    Graph& pg = plan_.graph;
    pg.name = src.name;
    // Room for a Cast on about a quarter of the values without regrowing.
    pg.reserve(src.num_nodes() + src.num_values() / 4, src.num_values() * 5 / 4);
    for (ValueId v : src.inputs())
      home_[static_cast<size_t>(v)] = pg.add_input(src.value(v).name, src.value(v).type);
    for (ValueId v = 0; v < static_cast<ValueId>(src.num_values()); ++v) {
      const Value& val = src.value(v);
      if (val.is_constant())
        home_[static_cast<size_t>(v)] = pg.add_constant(val.name, val.type, val.constant);
    }
  }

  DType home_dtype(ValueId v) const { return home_dtype_[static_cast<size_t>(v)]; }
  // The source value of each Cast, in AmpPlan::casts order.
  const std::vector<ValueId>& cast_sources() const { return cast_sources_; }
  ValueId home(ValueId v) const { return home_[static_cast<size_t>(v)]; }

  // `v` (a source value) in dtype `d` for a consumer on device `consumer`,
  // inserting a Cast at most once (shared by consumers on every device).
  ValueId as(ValueId v, DType d, int consumer) {
    const ValueId h = home(v);
    const DType from = home_dtype(v);
    if (from == d) return h;
    const uint64_t key = (static_cast<uint64_t>(v) << 8) | static_cast<uint64_t>(d);
    if (auto it = cast_cache_.find(key); it != cast_cache_.end()) return it->second;
    const Value& sv = src_.value(v);
    if (!records_) {
      // The device is still asked (and its refusal still fails the plan).
      (void)cast_device_(v, from, d, consumer);
      cast_cache_.emplace(key, kNone);
      return kNone;
    }
    std::string name = fresh(sv.name + ".to_" + std::string(dtype_name(d)));
    const int device = cast_device_(v, from, d, consumer);
    ValueId out = kNone;
    if (build_) {
      const NodeId id = plan_.graph.add_node(name, OpType::kCast, {h}, {{d, sv.type.shape}},
                                             {{"to", static_cast<int64_t>(d)}});
      plan_.graph.node(id).device = device;
      out = plan_.graph.node(id).outputs[0];
    }
    plan_.casts.push_back(CastRecord{std::move(name), sv.name, from, d, sv.is_constant(), device});
    cast_sources_.push_back(v);
    cast_cache_.emplace(key, out);
    return out;
  }

  // Adds source node `n` reading `inputs`. Its float outputs take `compute`
  // (the dtype rule of docs/OPS.md); other outputs keep their dtype. No
  // re-inference: the node is the source node with dtypes changed, and the
  // tests verify planned graphs.
  void add(const Node& n, std::vector<ValueId> inputs, DType compute, bool float_node, int device) {
    for (ValueId v : n.outputs) {
      const DType t = src_.value(v).type.dtype;
      home_dtype_[static_cast<size_t>(v)] = float_node && is_float(t) ? compute : t;
    }
    if (!build_) return;
    Graph& pg = plan_.graph;
    std::vector<TensorType> out_types;
    out_types.reserve(n.outputs.size());
    for (ValueId v : n.outputs) {
      TensorType t = src_.value(v).type;
      if (float_node && is_float(t.dtype)) t.dtype = compute;
      out_types.push_back(std::move(t));
    }
    const NodeId id = pg.add_node(n.name, n.op, std::move(inputs), std::move(out_types), n.attrs);
    pg.node(id).origin = n.origin;
    pg.node(id).grad_of = n.grad_of;
    pg.node(id).keep_f32 = n.keep_f32;
    pg.node(id).device = device;
    const auto& outs = pg.node(id).outputs;
    for (size_t i = 0; i < outs.size(); ++i) {
      pg.value(outs[i]).name = src_.value(n.outputs[i]).name;
      home_[static_cast<size_t>(n.outputs[i])] = outs[i];
    }
  }

 private:
  // A name no source node or value has. Generated names all contain ".to_",
  // so only source names containing it can collide: the index holds just
  // those (usually none), built on the first Cast.
  std::string fresh(const std::string& base) {
    if (!names_built_) {
      auto note = [&](const std::string& name) {
        if (name.find(".to_") != std::string::npos) taken_.insert(name);
      };
      for (const Value& v : src_.values()) note(v.name);
      for (const Node& n : src_.nodes()) note(n.name);
      names_built_ = true;
    }
    std::string name = base;
    for (int i = 1; taken_.contains(name); ++i) name = base + "_" + std::to_string(i);
    taken_.insert(owned_names_.emplace_back(name));
    return name;
  }

  const Graph& src_;
  AmpPlan& plan_;
  bool build_;
  bool records_;  // Cast records and names (PassDetail::kFull)
  CastDeviceFn cast_device_;
  std::vector<ValueId> home_;  // in plan_.graph; kNone without build_
  std::vector<DType> home_dtype_;
  std::unordered_map<uint64_t, ValueId> cast_cache_;
  std::vector<ValueId> cast_sources_;
  bool names_built_ = false;
  std::unordered_set<std::string_view> taken_;  // views into src_ and owned_names_
  std::deque<std::string> owned_names_;         // deque: stable addresses
};

}  // namespace ampx::planner_detail
