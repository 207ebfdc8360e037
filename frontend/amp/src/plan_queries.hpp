// Internal to the planner (frontend/amp/src): capability and cost queries of one node in a
// candidate dtype, memoised.
#pragma once

#include "node_classes.hpp"

#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>

#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ampx::planner_detail {

// The node signature a device's answer and a cost model's prediction
// depend on, as bytes: op, dtypes, shapes, attributes; never the name (nor
// constant bytes, which the planner does not attach). Written into `key`
// (cleared first), so a reused key allocates nothing.
void signature_key(const ampx_node_desc& d, std::string& key);

// Capability answers memoised by node signature: a plugin answers for a
// node instance, so two nodes with one signature get one answer, and large
// graphs of repeated blocks cost one plugin call per distinct signature.
class MemoizedQuery {
 public:
  explicit MemoizedQuery(CapabilitySource& source) : source_(source) {}

  CapabilitySource::Answer operator()(const ampx_node_desc& d);

 private:
  CapabilitySource& source_;
  std::string key_;  // reused: a hit allocates nothing
  std::unordered_map<std::string, CapabilitySource::Answer> cache_;
};

// A cost model's predictions memoised by node signature for one planning
// call, as MemoizedQuery does for answers: a calibrated model builds a text
// signature per prediction, and a plan asks for each node several times
// (the cost step, its explanations, the predictions), each Cast of each
// value twice. The model does not change while a plan is made. Everything
// else is passed through.
class MemoizedCost final : public capability::CostModel {
 public:
  explicit MemoizedCost(capability::CostModel& inner) : inner_(inner) {}

  double node_us(const ampx_node_desc& node) override;
  capability::CostEstimate estimate(const ampx_node_desc& node) override;
  std::optional<double> run_overhead_us(const ampx_node_desc& run) override {
    return inner_.run_overhead_us(run);
  }
  std::string source() const override { return inner_.source(); }
  bool measured() const override { return inner_.measured(); }
  double copy_us(uint64_t bytes, bool to_device) override {
    return inner_.copy_us(bytes, to_device);
  }

 private:
  // node_us and estimate are kept apart: the model answers each itself.
  struct Entry {
    std::optional<double> us;
    std::optional<capability::CostEstimate> estimate;
  };
  Entry& entry(const ampx_node_desc& node);

  capability::CostModel& inner_;
  std::string key_;
  std::unordered_map<std::string, Entry> cache_;
};

inline bool touches_float(const Graph& g, const Node& n) {
  for (ValueId v : n.inputs)
    if (is_float(g.value(v).type.dtype)) return true;
  for (ValueId v : n.outputs)
    if (is_float(g.value(v).type.dtype)) return true;
  return false;
}

// The node's source dtypes with every float dtype replaced by `d`.
inline void dtypes_as(const Graph& g, const Node& n, DType d, std::vector<DType>& ins,
                      std::vector<DType>& outs) {
  ins.clear();
  outs.clear();
  auto conv = [&](DType t) { return is_float(t) ? d : t; };
  for (ValueId v : n.inputs) ins.push_back(conv(g.value(v).type.dtype));
  for (ValueId v : n.outputs) outs.push_back(conv(g.value(v).type.dtype));
}

// Lowers nodes for queries. Its buffers are reused, so lowering a node
// again allocates nothing (a plan lowers each node several times).
class QueryLowering {
 public:
  // Node n with every float tensor in dtype `d` (other tensors as in the
  // source graph).
  const ampx_node_desc& node_as(const Graph& g, const Node& n, DType d) {
    dtypes_as(g, n, d, ins_, outs_);
    lowered_.assign(g, n, ins_, outs_, false);
    return lowered_.desc();
  }
  // A Cast of value v from `from` to `to`.
  const ampx_node_desc& cast_of(const Graph& g, ValueId v, DType from, DType to) {
    cast_.inputs[0] = cast_.outputs[0] = v;
    cast_.attrs.begin()->second = static_cast<int64_t>(to);
    const DType in[] = {from}, out[] = {to};
    lowered_.assign(g, cast_, in, out, false);
    return lowered_.desc();
  }

 private:
  LoweredNode lowered_;
  std::vector<DType> ins_, outs_;
  Node cast_{"cast", OpType::kCast, {kNone}, {kNone}, {{"to", int64_t{0}}}, {}, {}};
};

// Predicted time of node n with every float tensor in dtype `d`.
inline double node_time(capability::CostModel& cost, QueryLowering& lowering, const Graph& g,
                        const Node& n, DType d) {
  return cost.node_us(lowering.node_as(g, n, d));
}

inline double cast_time(capability::CostModel& cost, QueryLowering& lowering, const Graph& g,
                        ValueId v, DType from, DType to) {
  return cost.node_us(lowering.cast_of(g, v, from, to));
}

// One device's answers for the source graph's nodes by (node class, float
// dtype): after a node class's first question in a dtype, asking again is a
// table lookup (no lowering, no signature key). A miss lowers the node and
// goes through the MemoizedQuery, which every other question (a Cast, a
// node with its inputs' home dtypes) uses directly: the device is asked
// exactly what it was asked without the table.
class ClassAnswers {
 public:
  ClassAnswers(CapabilitySource& source, const NodeClasses& classes)
      : memo_(source), classes_(classes), index_(classes.classes() * kDTypeSlots, -1) {}

  // Node `id` of `g` (the graph `classes` were made of) with every float
  // tensor in `d`. The reference is valid while this object lives.
  const CapabilitySource::Answer& node_as(const Graph& g, NodeId id, DType d) {
    const int slot = dtype_slot(d);
    if (slot < 0) {
      scratch_ = memo_(lowering_.node_as(g, g.node(id), d));
      return scratch_;
    }
    int32_t& i = index_[static_cast<size_t>(classes_.of(id)) * kDTypeSlots + slot];
    if (i < 0) {
      answers_.push_back(memo_(lowering_.node_as(g, g.node(id), d)));
      i = static_cast<int32_t>(answers_.size() - 1);
    }
    return answers_[static_cast<size_t>(i)];
  }
  // Any other description.
  CapabilitySource::Answer operator()(const ampx_node_desc& d) { return memo_(d); }

 private:
  MemoizedQuery memo_;
  const NodeClasses& classes_;
  QueryLowering lowering_;
  std::vector<int32_t> index_;                    // into answers_, -1: not asked yet
  std::deque<CapabilitySource::Answer> answers_;  // deque: stable references
  CapabilitySource::Answer scratch_;
};

// One device's cost model (memoised: MemoizedCost) by (node class, float
// dtype) and, for Casts, by (value shape, from, to), as ClassAnswers does
// for answers. node_us and estimate are kept apart, as the model answers
// each itself.
class ClassCosts {
 public:
  ClassCosts(capability::CostModel& memoised, const NodeClasses& classes)
      : model_(memoised),
        classes_(classes),
        nodes_(classes.classes() * kDTypeSlots),
        casts_(classes.shapes() * kDTypeSlots * kDTypeSlots) {}

  capability::CostModel& model() { return model_; }

  double node_us(const Graph& g, NodeId id, DType d) {
    Slot* s = node_slot(id, d);
    if (!s) return model_.node_us(lowering_.node_as(g, g.node(id), d));
    if (!s->us) s->us = model_.node_us(lowering_.node_as(g, g.node(id), d));
    return *s->us;
  }
  capability::CostEstimate estimate(const Graph& g, NodeId id, DType d) {
    Slot* s = node_slot(id, d);
    if (!s) return model_.estimate(lowering_.node_as(g, g.node(id), d));
    if (!s->estimate) s->estimate = model_.estimate(lowering_.node_as(g, g.node(id), d));
    return *s->estimate;
  }
  // A Cast of source value v from `from` to `to`.
  double cast_us(const Graph& g, ValueId v, DType from, DType to) {
    Slot* s = cast_slot(v, from, to);
    if (!s) return model_.node_us(lowering_.cast_of(g, v, from, to));
    if (!s->us) s->us = model_.node_us(lowering_.cast_of(g, v, from, to));
    return *s->us;
  }
  capability::CostEstimate cast_estimate(const Graph& g, ValueId v, DType from, DType to) {
    Slot* s = cast_slot(v, from, to);
    if (!s) return model_.estimate(lowering_.cast_of(g, v, from, to));
    if (!s->estimate) s->estimate = model_.estimate(lowering_.cast_of(g, v, from, to));
    return *s->estimate;
  }

 private:
  struct Slot {
    std::optional<double> us;
    std::optional<capability::CostEstimate> estimate;
  };
  Slot* node_slot(NodeId id, DType d) {
    const int slot = dtype_slot(d);
    if (slot < 0) return nullptr;
    return &nodes_[static_cast<size_t>(classes_.of(id)) * kDTypeSlots + slot];
  }
  Slot* cast_slot(ValueId v, DType from, DType to) {
    const int a = dtype_slot(from), b = dtype_slot(to);
    const int32_t shape = classes_.shape_of(v);
    if (a < 0 || b < 0 || shape < 0) return nullptr;
    return &casts_[(static_cast<size_t>(shape) * kDTypeSlots + a) * kDTypeSlots + b];
  }

  capability::CostModel& model_;
  const NodeClasses& classes_;
  QueryLowering lowering_;
  std::vector<Slot> nodes_, casts_;
};

inline bool runs(ampx_support s) {
  return s == AMPX_SUPPORT_NATIVE || s == AMPX_SUPPORT_EMULATED;
}

}  // namespace ampx::planner_detail
