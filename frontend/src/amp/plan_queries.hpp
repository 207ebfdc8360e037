// Internal to the planner (frontend/src/amp): capability and cost queries of one node in a
// candidate dtype, memoised.
#pragma once

#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/planner.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace ampx::planner_detail {

// Capability answers memoised by node signature (op, dtypes, shapes,
// attributes; never the name): a plugin answers for a node instance, so two
// nodes with one signature get one answer, and large graphs of repeated
// blocks cost one plugin call per distinct signature.
class MemoizedQuery {
 public:
  explicit MemoizedQuery(CapabilitySource& source) : source_(source) {}

  CapabilitySource::Answer operator()(const ampx_node_desc& d);

 private:
  void append(const void* p, size_t n) { key_.append(static_cast<const char*>(p), n); }

  CapabilitySource& source_;
  std::string key_;  // reused: a hit allocates nothing
  std::unordered_map<std::string, CapabilitySource::Answer> cache_;
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

// The node with every float tensor in dtype `d` (other tensors as in the
// source graph), lowered for a cost query.
inline double node_time(capability::CostModel& cost, LoweredNode& lowered, const Graph& g,
                        const Node& n, DType d) {
  std::vector<DType> ins, outs;
  dtypes_as(g, n, d, ins, outs);
  lowered.assign(g, n, ins, outs, false);
  return cost.node_us(lowered.desc());
}

inline double cast_time(capability::CostModel& cost, LoweredNode& lowered, const Graph& g,
                        ValueId v, DType from, DType to) {
  const Node cast{"cast", OpType::kCast, {v}, {v}, {{"to", static_cast<int64_t>(to)}}, {}, {}};
  const DType in[] = {from}, out[] = {to};
  lowered.assign(g, cast, in, out, false);
  return cost.node_us(lowered.desc());
}

inline bool runs(ampx_support s) {
  return s == AMPX_SUPPORT_NATIVE || s == AMPX_SUPPORT_EMULATED;
}

}  // namespace ampx::planner_detail
