#include <ampx/amp/planner.hpp>
#include <ampx/amp/precision_cut.hpp>
#include <ampx/exec/node_desc.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace ampx {

std::string_view intent_reason_name(IntentReason r) {
  switch (r) {
    case IntentReason::kLevelO0:
      return "level-O0";
    case IntentReason::kWhiteList:
      return "white-list";
    case IntentReason::kNotWhiteListed:
      return "not-white-listed";
    case IntentReason::kBlackList:
      return "black-list";
    case IntentReason::kLevelDefault:
      return "policy";
    case IntentReason::kOverride:
      return "override";
    case IntentReason::kFollowsInput:
      return "follows-input";
    case IntentReason::kPromote:
      return "promote";
    case IntentReason::kNotFloat:
      return "not-float";
    case IntentReason::kExplicitCast:
      return "explicit-cast";
  }
  return "?";
}

std::string_view effective_reason_name(EffectiveReason r) {
  switch (r) {
    case EffectiveReason::kAsIntended:
      return "as-intended";
    case EffectiveReason::kNoNativeKernel:
      return "no-native-kernel";
    case EffectiveReason::kUnsupported16:
      return "unsupported-16bit";
    case EffectiveReason::kForcedEmulated:
      return "forced-emulated";
    case EffectiveReason::kCost:
      return "cost";
    case EffectiveReason::kDataMovement:
      return "data-movement";
    case EffectiveReason::kTuned:
      return "tuned";
  }
  return "?";
}

std::string NodePlan::reason() const {
  if (effective_reason != EffectiveReason::kAsIntended)
    return std::string(effective_reason_name(effective_reason));
  return std::string(intent_reason_name(intent_reason));
}

std::string_view placement_reason_name(PlacementReason r) {
  switch (r) {
    case PlacementReason::kFirstChoice:
      return "first-choice";
    case PlacementReason::kFallback:
      return "fallback";
    case PlacementReason::kCost:
      return "cost";
    case PlacementReason::kOverride:
      return "override";
  }
  return "?";
}

std::string NodePlan::placement_text() const {
  std::string s(placement_reason_name(placement));
  if (placement == PlacementReason::kFallback && !placement_note.empty())
    s += ": " + placement_note;
  return s;
}

namespace {

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
  Rewriter(const Graph& src, AmpPlan& plan, bool build_graph, CastDeviceFn cast_device)
      : src_(src),
        plan_(plan),
        build_(build_graph),
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
  CastDeviceFn cast_device_;
  std::vector<ValueId> home_;  // in plan_.graph; kNone without build_
  std::vector<DType> home_dtype_;
  std::unordered_map<uint64_t, ValueId> cast_cache_;
  bool names_built_ = false;
  std::unordered_set<std::string_view> taken_;  // views into src_ and owned_names_
  std::deque<std::string> owned_names_;         // deque: stable addresses
};

// Capability answers memoised by node signature (op, dtypes, shapes,
// attributes; never the name): a plugin answers for a node instance, so two
// nodes with one signature get one answer, and large graphs of repeated
// blocks cost one plugin call per distinct signature.
class MemoizedQuery {
 public:
  explicit MemoizedQuery(CapabilitySource& source) : source_(source) {}

  CapabilitySource::Answer operator()(const ampx_node_desc& d) {
    key_.clear();
    append(d.op_type, std::strlen(d.op_type) + 1);
    auto tensors = [&](const ampx_tensor_desc* t, size_t n) {
      append(&n, sizeof n);
      for (size_t i = 0; i < n; ++i) {
        append(&t[i].dtype, sizeof t[i].dtype);
        append(&t[i].rank, sizeof t[i].rank);
        append(t[i].dims, sizeof(int64_t) * static_cast<size_t>(t[i].rank));
      }
    };
    tensors(d.inputs, d.num_inputs);
    tensors(d.outputs, d.num_outputs);
    for (size_t i = 0; i < d.num_attrs; ++i) {
      const ampx_attr& a = d.attrs[i];
      append(a.name, std::strlen(a.name) + 1);
      append(&a.kind, sizeof a.kind);
      append(&a.i, sizeof a.i);
      append(&a.f, sizeof a.f);
      append(&a.count, sizeof a.count);
      if (a.kind == AMPX_ATTR_INTS) append(a.ints, sizeof(int64_t) * a.count);
      if (a.kind == AMPX_ATTR_FLOATS) append(a.floats, sizeof(double) * a.count);
      if (a.kind == AMPX_ATTR_STRING) append(a.s, std::strlen(a.s) + 1);
    }
    if (auto it = cache_.find(key_); it != cache_.end()) return it->second;
    auto answer = source_.query(d);
    cache_.emplace(key_, answer);
    return answer;
  }

 private:
  void append(const void* p, size_t n) { key_.append(static_cast<const char*>(p), n); }

  CapabilitySource& source_;
  std::string key_;  // reused: a hit allocates nothing
  std::unordered_map<std::string, CapabilitySource::Answer> cache_;
};

bool touches_float(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (is_float(g.value(v).type.dtype)) return true;
  for (ValueId v : n.outputs)
    if (is_float(g.value(v).type.dtype)) return true;
  return false;
}

// The node's source dtypes with every float dtype replaced by `d`.
void dtypes_as(const Graph& g, const Node& n, DType d, std::vector<DType>& ins,
               std::vector<DType>& outs) {
  ins.clear();
  outs.clear();
  auto conv = [&](DType t) { return is_float(t) ? d : t; };
  for (ValueId v : n.inputs) ins.push_back(conv(g.value(v).type.dtype));
  for (ValueId v : n.outputs) outs.push_back(conv(g.value(v).type.dtype));
}

// The node with every float tensor in dtype `d` (other tensors as in the
// source graph), lowered for a cost query.
double node_time(capability::CostModel& cost, LoweredNode& lowered, const Graph& g, const Node& n,
                 DType d) {
  std::vector<DType> ins, outs;
  dtypes_as(g, n, d, ins, outs);
  lowered.assign(g, n, ins, outs, false);
  return cost.node_us(lowered.desc());
}

double cast_time(capability::CostModel& cost, LoweredNode& lowered, const Graph& g, ValueId v,
                 DType from, DType to) {
  const Node cast{"cast", OpType::kCast, {v}, {v}, {{"to", static_cast<int64_t>(to)}}, {}};
  const DType in[] = {from}, out[] = {to};
  lowered.assign(g, cast, in, out, false);
  return cost.node_us(lowered.desc());
}

bool runs(ampx_support s) {
  return s == AMPX_SUPPORT_NATIVE || s == AMPX_SUPPORT_EMULATED;
}

std::string us_text(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

// "16-bit on cpu_ref:0 4.1 us < f32 on vulkan:0 9.0 us (copies and Casts included)"
std::string fmt_cost_note(const std::string& dev16, double t16, const std::string& dev32,
                          double t32) {
  return "16-bit on " + dev16 + " " + us_text(t16) + " < f32 on " + dev32 + " " + us_text(t32) +
         " (copies and Casts included)";
}

// Where a node goes and why (the placement step).
struct Placed {
  int device = 0;
  PlacementReason reason = PlacementReason::kFirstChoice;
  std::string note;
};

// The policy, placement and capability pass. `demoted` (by source NodeId,
// may be null): nodes the cost step keeps in f32 although they are native.
// `fixed` (by source NodeId, may be null): placements decided by an earlier
// pass, kept so that the cost step cannot move nodes.
AmpPlan plan_decisions(const Graph& g, const AmpPolicy& policy, std::span<const PlanDevice> devices,
                       const PlanOptions& options, std::span<const DevicePin> pins,
                       const std::vector<bool>* demoted, const std::vector<Placed>* fixed) {
  if (!is_16bit_float(policy.half))
    throw std::invalid_argument("16-bit dtype must be f16 or bf16, got " +
                                std::string(dtype_name(policy.half)));
  if (devices.empty()) throw std::invalid_argument("no device to plan for");
  AmpPlan plan;
  plan.policy = policy;
  int listed = 0, fallback = -1;
  for (size_t k = 0; k < devices.size(); ++k) {
    plan.devices.push_back(devices[k].caps->device_id());
    plan.fallback_only.push_back(devices[k].fallback_only);
    if (devices[k].fallback_only) {
      if (k + 1 != devices.size())
        throw std::invalid_argument("the fallback-only device must come last");
      fallback = static_cast<int>(k);
    } else {
      ++listed;
    }
  }
  if (listed == 0) throw std::invalid_argument("no device listed besides the fallback");
  for (size_t k = 0; k < plan.devices.size(); ++k)
    plan.device_id += (k ? "," : "") + plan.devices[k];
  if (devices.size() == 1) plan.device_id = plan.devices[0];
  plan.summary.nodes_per_device.assign(devices.size(), 0);

  PolicyStep policy_step(policy);
  std::vector<bool> pin_used(pins.size(), false);
  for (const DevicePin& pin : pins)
    if (pin.device < 0 || pin.device >= static_cast<int>(devices.size()))
      throw std::invalid_argument("pin '" + pin.pattern + "': no device " +
                                  std::to_string(pin.device));

  std::vector<MemoizedQuery> queries;
  queries.reserve(devices.size());
  for (const PlanDevice& d : devices) queries.emplace_back(*d.caps);
  LoweredNode lowered;
  std::vector<DType> ins, outs;
  // Home device of each source value: its producer's; -1 for graph inputs
  // and constants (uploaded where they are read).
  std::vector<int> value_device(g.num_values(), -1);

  // A Cast goes where its source is computed (a narrowing Cast then halves
  // the bytes a copy moves), else where it is read, else anywhere it runs.
  // Memoised by (candidate devices, dtypes): Casts repeat across blocks.
  std::unordered_map<uint64_t, int> cast_device_memo;
  auto cast_device = [&](ValueId v, DType from, DType to, int consumer) {
    if (devices.size() == 1) return 0;
    const int home = value_device[static_cast<size_t>(v)];
    const uint64_t key = (static_cast<uint64_t>(home + 1) << 40) |
                         (static_cast<uint64_t>(consumer + 1) << 24) |
                         (static_cast<uint64_t>(from) << 8) | static_cast<uint64_t>(to);
    if (auto it = cast_device_memo.find(key); it != cast_device_memo.end()) return it->second;
    int chosen = consumer >= 0 ? consumer : 0;
    const Node cast{"cast", OpType::kCast, {v}, {v}, {{"to", static_cast<int64_t>(to)}}, {}};
    const DType in[] = {from}, out[] = {to};
    LoweredNode l;
    l.assign(g, cast, in, out, false);
    for (int k : {home, consumer}) {
      if (k >= 0 && runs(queries[static_cast<size_t>(k)](l.desc()).support)) {
        chosen = k;
        break;
      }
    }
    cast_device_memo.emplace(key, chosen);
    return chosen;
  };
  Rewriter rw(g, plan, options.build_graph, cast_device);
  std::unordered_map<std::string, int32_t> note_ids;
  auto intern_note = [&](const std::string& note) {
    auto [it, added] = note_ids.try_emplace(note, static_cast<int32_t>(plan.notes.size()));
    if (added) plan.notes.push_back(note);
    return it->second;
  };
  const auto order = g.topological_order();
  plan.nodes.reserve(order.size());
  std::vector<std::string> unplaceable;  // "'name' (Op f32)"
  std::string first_unplaceable;         // its full message

  // The answer of device k for node n with float tensors in `d` (kInvalid:
  // a non-float node, with its inputs' home dtypes).
  auto ask = [&](int k, const Node& n, DType d) {
    if (d == DType::kInvalid) {
      ins.clear();
      outs.clear();
      for (ValueId v : n.inputs) ins.push_back(rw.home_dtype(v));
      for (ValueId v : n.outputs) outs.push_back(g.value(v).type.dtype);
    } else {
      dtypes_as(g, n, d, ins, outs);
    }
    lowered.assign(g, n, ins, outs, false);
    return queries[static_cast<size_t>(k)](lowered.desc());
  };
  // Listed devices before `k` that were passed over.
  auto passed_over = [&](int k) {
    std::string s = "unsupported on ";
    for (int j = 0; j < std::min(k, listed); ++j) s += (j ? ", " : "") + plan.devices[j];
    return s;
  };
  auto by_order = [&](int k) {
    if (k == 0) return Placed{0, PlacementReason::kFirstChoice, {}};
    return Placed{k, PlacementReason::kFallback, passed_over(k)};
  };
  // Predicted time of node n on device k in dtype d, with the copies and
  // Casts its inputs need there; < 0 when the device has no estimate.
  auto cost_on = [&](int k, const Node& n, DType d) {
    const PlanDevice& dev = devices[static_cast<size_t>(k)];
    double t = dev.cost ? node_time(*dev.cost, lowered, g, n, d) : ask(k, n, d).cost_us;
    if (t < 0) return -1.0;
    for (ValueId v : n.inputs) {
      const Value& val = g.value(v);
      if (val.is_constant() || !is_float(val.type.dtype)) continue;
      const int home = value_device[static_cast<size_t>(v)];
      if (home >= 0 && home != k)
        t += copy_cost_us(static_cast<uint64_t>(element_count(val.type.shape)) * dtype_size(d),
                          devices[static_cast<size_t>(home)].cost, dev.cost);
      if (rw.home_dtype(v) != d && dev.cost) {
        const double c = cast_time(*dev.cost, lowered, g, v, rw.home_dtype(v), d);
        if (c > 0) t += c;
      }
    }
    return t;
  };

  for (NodeId id : order) {
    const Node& n = g.node(id);
    NodePlan np;
    np.node = id;
    np.name = n.name;
    np.op = n.op;
    np.origin = n.origin;
    np.is_float_node = n.op != OpType::kCast && touches_float(g, n);
    const bool data_movement = is_data_movement(n.op);
    bool want16 = false;

    if (!np.is_float_node) {
      np.intent_reason =
          n.op == OpType::kCast ? IntentReason::kExplicitCast : IntentReason::kNotFloat;
      np.intended = np.effective = g.value(n.outputs.at(0)).type.dtype;
    } else {
      // 1. Policy.
      const PolicyStep::Intent intent =
          policy_step.intend(g, n, [&](ValueId v) { return rw.home_dtype(v); });
      want16 = intent.want16;
      np.intent_reason = intent.reason;
      np.intended = want16 ? policy.half : DType::kF32;
      np.effective = DType::kF32;
    }

    // 2. Placement (docs/PLACEMENT.md): pinned; else the first listed
    // device that runs the node in the wanted precision, 16-bit only where
    // that is real; where no listed device has a real 16-bit kernel first,
    // f32 on the first device that runs it against 16-bit on the first that
    // has one, by predicted time; else the fallback device.
    const DType want = !np.is_float_node ? DType::kInvalid : want16 ? policy.half : DType::kF32;
    Placed placed;
    bool placeable = true;
    int pin = -1;
    for (size_t i = pins.size(); i-- > 0;)
      if (pins[i].matches(n.name)) {
        if (pin < 0) pin = pins[i].device;
        pin_used[i] = true;
      }
    if (fixed) {
      placed = (*fixed)[static_cast<size_t>(id)];
    } else if (pin >= 0) {
      placed = {pin, PlacementReason::kOverride, {}};
    } else if (devices.size() > 1) {
      const int all = static_cast<int>(devices.size());
      int first_want = -1;  // first listed device running it in `want`
      for (int k = 0; k < listed && first_want < 0; ++k)
        if (runs(ask(k, n, want).support)) first_want = k;
      const bool real16 =
          first_want >= 0 && want16 &&
          (ask(first_want, n, want).support == AMPX_SUPPORT_NATIVE || options.capability_blind);
      if (first_want >= 0 && (!want16 || real16)) {
        placed = by_order(first_want);
      } else if (want16) {
        int f32_dev = -1, native16 = -1;
        for (int k = 0; k < listed && f32_dev < 0; ++k)
          if (runs(ask(k, n, DType::kF32).support)) f32_dev = k;
        for (int k = 0; k < all && native16 < 0; ++k)
          if (ask(k, n, want).support == AMPX_SUPPORT_NATIVE) native16 = k;
        if (f32_dev >= 0 && native16 >= 0) {
          const double t32 = cost_on(f32_dev, n, DType::kF32);
          const double t16 = cost_on(native16, n, want);
          if (t32 >= 0 && t16 >= 0 && t16 < t32)
            placed = {native16, PlacementReason::kCost,
                      fmt_cost_note(plan.devices[static_cast<size_t>(native16)], t16,
                                    plan.devices[static_cast<size_t>(f32_dev)], t32)};
          else
            placed = by_order(f32_dev);
        } else if (f32_dev >= 0) {
          placed = by_order(f32_dev);
        } else if (native16 >= 0) {
          placed = by_order(native16);
        } else if (fallback >= 0 && runs(ask(fallback, n, DType::kF32).support)) {
          placed = by_order(fallback);
        } else {
          placeable = false;
        }
      } else if (fallback >= 0 && runs(ask(fallback, n, want).support)) {
        placed = by_order(fallback);
      } else {
        placeable = false;
      }
    }
    np.device = placed.device;
    np.placement = placed.reason;
    np.placement_note = placed.note;
    const int dev = placed.device;

    if (!placeable) {
      // Every listed device refuses it in every precision: collect it (the
      // error lists them all) and go on as if the first device ran it f32.
      if (unplaceable.empty())
        first_unplaceable = "node '" + n.name + "' (" + std::string(op_name(n.op)) +
                            "): no device of " + plan.device_id + " can run it";
      unplaceable.push_back("'" + n.name + "' (" + std::string(op_name(n.op)) + " " +
                            std::string(dtype_name(np.is_float_node ? DType::kF32 : np.effective)) +
                            ")");
    } else if (np.is_float_node && want16) {
      // 3. What the chosen device really has for exactly this node in 16-bit.
      const auto answer = ask(dev, n, policy.half);
      np.support_16bit = answer.support;
      if (!answer.note.empty()) np.note = intern_note(answer.note);
      const bool demote = demoted && (*demoted)[static_cast<size_t>(id)];
      if (demote && options.tuned_f32) {
        np.effective_reason = EffectiveReason::kTuned;
      } else if (answer.support == AMPX_SUPPORT_NATIVE && demote) {
        np.effective_reason = EffectiveReason::kCost;
      } else if (answer.support == AMPX_SUPPORT_NATIVE) {
        np.effective = policy.half;
        np.effective_reason = EffectiveReason::kAsIntended;
      } else if (answer.support == AMPX_SUPPORT_EMULATED && options.capability_blind) {
        np.effective = policy.half;
        np.effective_reason = EffectiveReason::kForcedEmulated;
      } else if (answer.support == AMPX_SUPPORT_EMULATED && data_movement) {
        np.effective = policy.half;
        np.effective_reason = EffectiveReason::kDataMovement;
      } else {
        np.effective_reason = answer.support == AMPX_SUPPORT_EMULATED
                                  ? EffectiveReason::kNoNativeKernel
                                  : EffectiveReason::kUnsupported16;
      }
    }

    // 4. The host never assumes support: the variant that will run must be
    // answered too (16-bit native was just answered).
    if (placeable && !(np.is_float_node && is_16bit_float(np.effective))) {
      const auto answer = ask(dev, n, np.is_float_node ? np.effective : DType::kInvalid);
      if (answer.support == AMPX_SUPPORT_UNSUPPORTED) {
        const std::string why = "node '" + n.name + "' (" + std::string(op_name(n.op)) +
                                "): device " + plan.devices[static_cast<size_t>(dev)] +
                                " cannot run it in " + std::string(dtype_name(np.effective)) +
                                (answer.note.empty() ? "" : ": " + answer.note);
        if (pin >= 0) throw std::runtime_error(why + " (it is pinned there by --place)");
        if (unplaceable.empty()) first_unplaceable = why;
        unplaceable.push_back("'" + n.name + "' (" + std::string(op_name(n.op)) + " " +
                              std::string(dtype_name(np.effective)) + ")");
      }
    }

    // 5. Rewrite with Casts where an input's home dtype differs.
    std::vector<ValueId> new_inputs;
    if (options.build_graph) new_inputs.reserve(n.inputs.size());
    for (ValueId v : n.inputs) {
      if (np.is_float_node && is_float(g.value(v).type.dtype))
        new_inputs.push_back(rw.as(v, np.effective, dev));
      else
        new_inputs.push_back(rw.home(v));
    }
    rw.add(n, std::move(new_inputs), np.effective, np.is_float_node, dev);
    for (ValueId v : n.outputs) value_device[static_cast<size_t>(v)] = dev;
    plan.nodes.push_back(std::move(np));
  }

  // One node: its own message (with the device's note); more: all of them.
  if (unplaceable.size() == 1) throw std::runtime_error(first_unplaceable);
  if (!unplaceable.empty()) {
    std::string listed_ids;
    for (int k = 0; k < listed; ++k) listed_ids += (k ? ", " : "") + plan.devices[k];
    std::string list;
    for (const auto& u : unplaceable) list += (list.empty() ? "" : ", ") + u;
    throw std::runtime_error(
        std::to_string(unplaceable.size()) + " node" + (unplaceable.size() == 1 ? "" : "s") +
        " cannot run on " + listed_ids +
        (fallback >= 0 ? " nor on the fallback " + plan.devices[fallback] : " (no fallback)") +
        ": " + list);
  }
  policy_step.check_every_override_used(g.name);
  for (size_t i = 0; i < pins.size(); ++i)
    if (!pin_used[i])
      throw std::invalid_argument("--place '" + pins[i].pattern + "' matches no node in graph '" +
                                  g.name + "'");

  // Graph outputs keep their dtypes.
  for (ValueId v : g.outputs()) {
    const int home = value_device[static_cast<size_t>(v)];
    const ValueId out = rw.as(v, g.value(v).type.dtype, home >= 0 ? home : 0);
    if (options.build_graph) plan.graph.add_output(out);
  }

  PlanSummary& s = plan.summary;
  s.nodes = static_cast<int>(plan.nodes.size());
  for (const auto& np : plan.nodes) {
    s.float_nodes += np.is_float_node ? 1 : 0;
    const bool i16 = np.is_float_node && is_16bit_float(np.intended);
    const bool e16 = np.is_float_node && is_16bit_float(np.effective);
    s.intended_16bit += i16 ? 1 : 0;
    s.effective_16bit += e16 ? 1 : 0;
    const bool by_cost = np.effective_reason == EffectiveReason::kCost;
    const bool by_tuning = np.effective_reason == EffectiveReason::kTuned;
    s.kept_fp32_no_native += (i16 && !e16 && !by_cost && !by_tuning) ? 1 : 0;
    s.kept_fp32_cost += by_cost ? 1 : 0;
    s.kept_fp32_tuned += by_tuning ? 1 : 0;
    s.fallbacks += np.placement == PlacementReason::kFallback ? 1 : 0;
    s.placed_by_cost += np.placement == PlacementReason::kCost ? 1 : 0;
    s.pinned += np.placement == PlacementReason::kOverride ? 1 : 0;
    ++s.nodes_per_device[static_cast<size_t>(np.device)];
  }
  s.casts = static_cast<int>(plan.casts.size());
  for (const auto& c : plan.casts) s.casts_on_constants += c.on_constant ? 1 : 0;
  // An unused last resort is not part of the plan: a plan for one listed
  // device that needed no fallback is a single-device plan.
  if (fallback >= 0 && s.nodes_per_device[static_cast<size_t>(fallback)] == 0 &&
      std::none_of(plan.casts.begin(), plan.casts.end(),
                   [&](const CastRecord& c) { return c.device == fallback; })) {
    plan.devices.pop_back();
    plan.fallback_only.pop_back();
    s.nodes_per_device.pop_back();
    plan.device_id.clear();
    for (size_t k = 0; k < plan.devices.size(); ++k)
      plan.device_id += (k ? "," : "") + plan.devices[k];
  }
  if (options.build_graph) {
    plan.copies = plan_copies(plan.graph);
    s.copies = static_cast<int>(plan.copies.size());
    for (const auto& c : plan.copies) s.copy_bytes += c.bytes;
  }
  return plan;
}

// Nodes whose inputs are all weights (or computed from weights only): the
// executor evaluates them once at load.
std::vector<bool> load_time_nodes(const Graph& g) {
  std::vector<bool> constant(g.num_values(), false), at_load(g.num_nodes(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v)
    constant[static_cast<size_t>(v)] = g.value(v).is_constant();
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    bool all = !n.inputs.empty();
    for (ValueId v : n.inputs) all = all && constant[static_cast<size_t>(v)];
    at_load[static_cast<size_t>(id)] = all;
    for (ValueId v : n.outputs) constant[static_cast<size_t>(v)] = all;
  }
  return at_load;
}

// Which native 16-bit nodes to keep 16-bit, for the whole graph at once
// (precision_cut.hpp). `first` is the plan without cost decisions.
std::vector<bool> choose_by_cost(const Graph& g, const AmpPlan& first, DType half,
                                 std::span<capability::CostModel* const> costs) {
  std::vector<int> node_device(g.num_nodes(), 0);
  for (const NodePlan& np : first.nodes) node_device[static_cast<size_t>(np.node)] = np.device;
  using P = PrecisionCutProblem;
  std::vector<int> cand(g.num_nodes(), P::kFixedF32);  // label per source node
  std::vector<NodeId> cand_node;
  PrecisionCutProblem problem;
  LoweredNode lowered;
  const std::vector<bool> at_load = load_time_nodes(g);
  std::vector<bool> float_node(g.num_nodes(), false);
  for (const NodePlan& np : first.nodes) {
    float_node[static_cast<size_t>(np.node)] = np.is_float_node;
    if (!np.is_float_node) continue;
    if (!is_16bit_float(np.effective)) continue;
    const Node& n = g.node(np.node);
    capability::CostModel* cost = costs[static_cast<size_t>(np.device)];
    double t32 = cost ? node_time(*cost, lowered, g, n, DType::kF32) : -1;
    double t16 = cost ? node_time(*cost, lowered, g, n, half) : -1;
    if (t32 < 0 || t16 < 0) t32 = t16 = 0;  // unknown: a tie, which keeps 16-bit
    cand[static_cast<size_t>(np.node)] = static_cast<int>(cand_node.size());
    cand_node.push_back(np.node);
    problem.time_f32.push_back(t32);
    problem.time_16.push_back(t16);
  }
  if (cand_node.empty()) return std::vector<bool>(g.num_nodes(), false);

  auto label_of_dtype = [](DType d) { return is_16bit_float(d) ? P::kFixed16 : P::kFixedF32; };
  std::vector<std::vector<int>> consumers(g.num_values());
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    if (!float_node[static_cast<size_t>(id)]) continue;  // explicit Casts read any dtype
    for (ValueId v : g.node(id).inputs) consumers[static_cast<size_t>(v)].push_back(id);
  }
  std::vector<std::vector<int>> output_uses(g.num_values());
  for (ValueId v : g.outputs())
    output_uses[static_cast<size_t>(v)].push_back(label_of_dtype(g.value(v).type.dtype));
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& val = g.value(v);
    if (!is_float(val.type.dtype) || val.is_constant()) continue;
    if (val.producer != kNone && at_load[static_cast<size_t>(val.producer)]) continue;
    P::ValueTerm term;
    if (val.producer == kNone) {
      term.producer = label_of_dtype(val.type.dtype);
    } else {
      const int c = cand[static_cast<size_t>(val.producer)];
      term.producer = c >= 0 ? c : label_of_dtype(val.type.dtype);
      // A non-candidate float node produces f32 in a cost-aware plan.
      if (c < 0 && float_node[static_cast<size_t>(val.producer)]) term.producer = P::kFixedF32;
    }
    bool touches_candidate = term.producer >= 0;
    for (NodeId c : consumers[static_cast<size_t>(v)]) {
      const int label = cand[static_cast<size_t>(c)];
      term.consumers.push_back(label >= 0 ? label : P::kFixedF32);
      touches_candidate = touches_candidate || label >= 0;
    }
    for (int u : output_uses[static_cast<size_t>(v)]) term.consumers.push_back(u);
    if (!touches_candidate) continue;
    // A Cast runs where the value is computed (or first read).
    int dev = val.producer != kNone ? node_device[static_cast<size_t>(val.producer)] : -1;
    if (dev < 0 && !consumers[static_cast<size_t>(v)].empty())
      dev = node_device[static_cast<size_t>(consumers[static_cast<size_t>(v)].front())];
    capability::CostModel* cost = costs[static_cast<size_t>(std::max(dev, 0))];
    if (cost) {
      term.cast_to_16 = std::max(0.0, cast_time(*cost, lowered, g, v, DType::kF32, half));
      term.cast_to_f32 = std::max(0.0, cast_time(*cost, lowered, g, v, half, DType::kF32));
    }
    problem.values.push_back(std::move(term));
  }
  const PrecisionCutResult r = solve_precision_cut(problem);
  std::vector<bool> demoted(g.num_nodes(), false);
  for (size_t i = 0; i < cand_node.size(); ++i)
    demoted[static_cast<size_t>(cand_node[i])] = !r.use_16bit[i];
  return demoted;
}

}  // namespace

namespace {

// A tuned plan's f32 nodes by source NodeId.
std::vector<bool> tuned_demotions(const Graph& g, const std::vector<std::string>& names) {
  std::unordered_map<std::string_view, NodeId> by_name;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id)
    by_name.emplace(g.node(id).name, id);
  std::vector<bool> demoted(g.num_nodes(), false);
  for (const std::string& name : names) {
    const auto it = by_name.find(name);
    if (it == by_name.end())
      throw std::invalid_argument("tuned plan: graph '" + g.name + "' has no node '" + name + "'");
    demoted[static_cast<size_t>(it->second)] = true;
  }
  return demoted;
}

// Fills the predictions of a built plan from each node's device's model;
// the per-run copies are added at copy_cost_us().
void predict_placed(AmpPlan& plan, std::span<capability::CostModel* const> costs) {
  LoweredNode lowered;
  const Graph& pg = plan.graph;
  const std::vector<bool> at_load = load_time_nodes(pg);
  std::unordered_map<std::string_view, size_t> by_name, cast_by_name;
  for (size_t i = 0; i < plan.nodes.size(); ++i) by_name.emplace(plan.nodes[i].name, i);
  for (size_t i = 0; i < plan.casts.size(); ++i) cast_by_name.emplace(plan.casts[i].name, i);
  double total = 0;
  int known = 0;
  plan.predicted_measured = plan.predicted_probe = plan.predicted_hint = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(pg.num_nodes()); ++id) {
    if (at_load[static_cast<size_t>(id)]) continue;
    const Node& n = pg.node(id);
    capability::CostModel* cost = costs[static_cast<size_t>(n.device)];
    if (!cost) continue;
    std::vector<DType> ins, outs;
    for (ValueId v : n.inputs) ins.push_back(pg.value(v).type.dtype);
    for (ValueId v : n.outputs) outs.push_back(pg.value(v).type.dtype);
    lowered.assign(pg, n, ins, outs, false);
    const capability::CostEstimate e = cost->estimate(lowered.desc());
    const double t = e.us;
    if (t > 0) total += t;
    known += t >= 0 ? 1 : 0;
    plan.predicted_measured += e.origin == capability::CostOrigin::kMeasured ? 1 : 0;
    plan.predicted_probe += e.origin == capability::CostOrigin::kProbe ? 1 : 0;
    plan.predicted_hint += e.origin == capability::CostOrigin::kHint ? 1 : 0;
    if (auto it = by_name.find(n.name); it != by_name.end()) {
      plan.nodes[it->second].predicted_us = t;
      plan.nodes[it->second].cost_origin = e.origin;
    } else if (auto c = cast_by_name.find(n.name); c != cast_by_name.end()) {
      plan.casts[c->second].predicted_us = t;
      plan.casts[c->second].cost_origin = e.origin;
    }
  }
  for (const CopyRecord& c : plan.copies)
    total +=
        copy_cost_us(c.bytes, costs[static_cast<size_t>(c.from)], costs[static_cast<size_t>(c.to)]);
  // Nothing known (a plugin without cost hints): no prediction, not 0 us.
  plan.predicted_us = known > 0 || pg.num_nodes() == 0 ? total : -1;
  std::string source;
  for (size_t k = 0; k < costs.size(); ++k) {
    if (!costs[k]) continue;
    const std::string s =
        costs.size() == 1 ? costs[k]->source() : plan.devices[k] + ": " + costs[k]->source();
    source += (source.empty() ? "" : "; ") + s;
  }
  plan.cost_source = source;
}

AmpPlan plan_with_costs(const Graph& g, const AmpPolicy& policy,
                        std::span<const PlanDevice> devices, const PlanOptions& options,
                        std::span<const DevicePin> pins) {
  std::vector<capability::CostModel*> costs;
  bool any_cost = false;
  for (const PlanDevice& d : devices) {
    costs.push_back(d.cost);
    any_cost = any_cost || d.cost;
  }
  const bool multi = devices.size() > 1;
  if (!any_cost && options.tuned_f32) {
    PlanOptions inner = options;
    inner.build_graph = options.build_graph || multi;
    const std::vector<bool> demoted = tuned_demotions(g, *options.tuned_f32);
    return plan_decisions(g, policy, devices, inner, pins, &demoted, nullptr);
  }
  if (!any_cost) {
    PlanOptions inner = options;
    // Copies are found on the planned graph: a multi-device plan keeps it
    // (freeing it again would cost as much as building it).
    inner.build_graph = options.build_graph || multi;
    return plan_decisions(g, policy, devices, inner, pins, nullptr, nullptr);
  }
  PlanOptions inner = options;
  inner.build_graph = true;  // predictions are made on the planned graph
  std::vector<bool> demoted;
  std::vector<Placed> placed;
  if (options.tuned_f32) {
    demoted = tuned_demotions(g, *options.tuned_f32);
  } else if (!options.capability_blind) {
    PlanOptions first_options = options;
    first_options.build_graph = false;
    const AmpPlan first = plan_decisions(g, policy, devices, first_options, pins, nullptr, nullptr);
    demoted = choose_by_cost(g, first, policy.half, costs);
    placed.resize(g.num_nodes());
    for (const NodePlan& np : first.nodes)
      placed[static_cast<size_t>(np.node)] = {np.device, np.placement, np.placement_note};
  }
  AmpPlan plan =
      plan_decisions(g, policy, devices, inner, pins, demoted.empty() ? nullptr : &demoted,
                     placed.empty() ? nullptr : &placed);
  predict_placed(plan, costs);
  // The times the cost step compared, for explanations.
  if (!demoted.empty()) {
    LoweredNode lowered;
    for (NodePlan& np : plan.nodes) {
      if (!np.is_float_node || np.support_16bit != AMPX_SUPPORT_NATIVE) continue;
      if (!is_16bit_float(np.intended)) continue;
      capability::CostModel* cost = costs[static_cast<size_t>(np.device)];
      if (!cost) continue;
      const Node& n = g.node(np.node);
      np.time_f32_us = node_time(*cost, lowered, g, n, DType::kF32);
      np.time_16_us = node_time(*cost, lowered, g, n, policy.half);
    }
  }
  if (!options.build_graph && !multi) plan.graph = Graph{};
  return plan;
}

}  // namespace

void predict_plan(AmpPlan& plan, capability::CostModel& cost) {
  std::vector<capability::CostModel*> costs(std::max<size_t>(plan.devices.size(), 1), &cost);
  predict_placed(plan, costs);
}

void predict_plan(AmpPlan& plan, std::span<capability::CostModel* const> costs) {
  if (costs.size() != plan.devices.size())
    throw std::invalid_argument("predict_plan: one cost model per plan device");
  predict_placed(plan, costs);
}

AmpPlan plan_amp(const Graph& g, const AmpPolicy& policy, CapabilitySource& device,
                 const PlanOptions& options) {
  const PlanDevice one[] = {{&device, options.cost, false}};
  return plan_with_costs(g, policy, one, options, {});
}

AmpPlan plan_amp(const Graph& g, const AmpPolicy& policy, std::span<const PlanDevice> devices,
                 const PlanOptions& options, std::span<const DevicePin> pins) {
  return plan_with_costs(g, policy, devices, options, pins);
}

HalfChoice choose_half_dtype(const Graph& graph, const AmpPolicy& policy,
                             CapabilitySource& device) {
  const PlanDevice one[] = {{&device, nullptr, false}};
  return choose_half_dtype(graph, policy, one);
}

HalfChoice choose_half_dtype(const Graph& graph, const AmpPolicy& policy,
                             std::span<const PlanDevice> devices) {
  HalfChoice c;
  AmpPolicy p = policy;
  // Placement without costs: which dtype is native where the nodes land.
  std::vector<PlanDevice> plain(devices.begin(), devices.end());
  for (PlanDevice& d : plain) d.cost = nullptr;
  p.half = DType::kF16;
  c.f16_effective =
      plan_amp(graph, p, plain, PlanOptions{.build_graph = false}).summary.effective_16bit;
  p.half = DType::kBF16;
  c.bf16_effective =
      plan_amp(graph, p, plain, PlanOptions{.build_graph = false}).summary.effective_16bit;
  c.any_native = c.f16_effective > 0 || c.bf16_effective > 0;
  c.half = c.bf16_effective > c.f16_effective ? DType::kBF16 : DType::kF16;
  return c;
}

}  // namespace ampx
