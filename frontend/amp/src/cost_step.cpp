#include "cost_step.hpp"
#include "plan_queries.hpp"

#include <ampx/amp/load_time.hpp>
#include <ampx/amp/node_desc.hpp>
#include <ampx/amp/precision_cut.hpp>

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace ampx::planner_detail {

// Which native 16-bit nodes to keep 16-bit, for the whole graph at once
// (precision_cut.hpp). `first` is the plan without cost decisions.
std::vector<bool> choose_by_cost(const Graph& g, const AmpPlan& first, DType half,
                                 PlanQueries& queries) {
  std::vector<int> node_device(g.num_nodes(), 0);
  for (const NodePlan& np : first.nodes) node_device[static_cast<size_t>(np.node)] = np.device;
  using P = PrecisionCutProblem;
  std::vector<int> cand(g.num_nodes(), P::kFixedF32);  // label per source node
  std::vector<NodeId> cand_node;
  PrecisionCutProblem problem;
  problem.time_f32.reserve(first.nodes.size());
  problem.time_16.reserve(first.nodes.size());
  problem.values.reserve(g.num_values());
  const std::vector<bool>& at_load = queries.at_load();
  std::vector<bool> float_node(g.num_nodes(), false);
  for (const NodePlan& np : first.nodes) {
    float_node[static_cast<size_t>(np.node)] = np.is_float_node;
    if (!np.is_float_node) continue;
    if (!is_16bit_float(np.effective)) continue;
    ClassCosts* cost = queries.costs(np.device);
    double t32 = cost ? cost->node_us(g, np.node, DType::kF32) : -1;
    double t16 = cost ? cost->node_us(g, np.node, half) : -1;
    if (t32 < 0 || t16 < 0) t32 = t16 = 0;  // unknown: a tie, which keeps 16-bit
    cand[static_cast<size_t>(np.node)] = static_cast<int>(cand_node.size());
    cand_node.push_back(np.node);
    problem.time_f32.push_back(t32);
    problem.time_16.push_back(t16);
  }
  if (cand_node.empty()) return std::vector<bool>(g.num_nodes(), false);

  auto label_of_dtype = [](DType d) { return is_16bit_float(d) ? P::kFixed16 : P::kFixedF32; };
  // Each value's float consumers in node order, as one array indexed by
  // value (no vector per value).
  std::vector<size_t> first_consumer(g.num_values() + 1, 0);
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    if (!float_node[static_cast<size_t>(id)]) continue;  // explicit Casts read any dtype
    for (ValueId v : g.node(id).inputs) ++first_consumer[static_cast<size_t>(v) + 1];
  }
  for (size_t v = 0; v < g.num_values(); ++v) first_consumer[v + 1] += first_consumer[v];
  std::vector<NodeId> consumers(first_consumer.back());
  {
    std::vector<size_t> fill(first_consumer.begin(), first_consumer.end() - 1);
    for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
      if (!float_node[static_cast<size_t>(id)]) continue;
      for (ValueId v : g.node(id).inputs) consumers[fill[static_cast<size_t>(v)]++] = id;
    }
  }
  std::vector<char> is_output(g.num_values(), 0);
  for (ValueId v : g.outputs()) is_output[static_cast<size_t>(v)] = 1;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& val = g.value(v);
    if (!is_float(val.type.dtype) || val.is_constant()) continue;
    if (val.producer != kNone && at_load[static_cast<size_t>(val.producer)]) continue;
    const std::span<const NodeId> readers(
        consumers.data() + first_consumer[static_cast<size_t>(v)],
        consumers.data() + first_consumer[static_cast<size_t>(v) + 1]);
    int producer = 0;
    if (val.producer == kNone) {
      producer = label_of_dtype(val.type.dtype);
    } else {
      const int c = cand[static_cast<size_t>(val.producer)];
      producer = c >= 0 ? c : label_of_dtype(val.type.dtype);
      // A non-candidate float node produces f32 in a cost-aware plan.
      if (c < 0 && float_node[static_cast<size_t>(val.producer)]) producer = P::kFixedF32;
    }
    bool touches_candidate = producer >= 0;
    for (NodeId c : readers)
      touches_candidate = touches_candidate || cand[static_cast<size_t>(c)] >= 0;
    if (!touches_candidate) continue;
    P::ValueTerm& term = problem.values.emplace_back();
    term.producer = producer;
    term.consumers.reserve(readers.size() + 1);
    for (NodeId c : readers) {
      const int label = cand[static_cast<size_t>(c)];
      term.consumers.push_back(label >= 0 ? label : P::kFixedF32);
    }
    // A graph output keeps its dtype (once per listing in the outputs).
    if (is_output[static_cast<size_t>(v)])
      for (ValueId o : g.outputs())
        if (o == v) term.consumers.push_back(label_of_dtype(val.type.dtype));
    // A Cast runs where the value is computed (or first read).
    int dev = val.producer != kNone ? node_device[static_cast<size_t>(val.producer)] : -1;
    if (dev < 0 && !readers.empty()) dev = node_device[static_cast<size_t>(readers.front())];
    ClassCosts* cost = queries.costs(std::max(dev, 0));
    if (cost) {
      term.cast_to_16 = std::max(0.0, cost->cast_us(g, v, DType::kF32, half));
      term.cast_to_f32 = std::max(0.0, cost->cast_us(g, v, half, DType::kF32));
    }
  }
  const PrecisionCutResult r = solve_precision_cut(problem);
  std::vector<bool> demoted(g.num_nodes(), false);
  for (size_t i = 0; i < cand_node.size(); ++i)
    demoted[static_cast<size_t>(cand_node[i])] = !r.use_16bit[i];
  return demoted;
}

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

void predict_placed(AmpPlan& plan, std::span<capability::CostModel* const> costs,
                    PlannedFrom* from) {
  LoweredNode lowered;
  std::vector<DType> ins, outs;
  const Graph& pg = plan.graph;
  const std::vector<bool> at_load = load_time_nodes(pg);
  // The planner adds each source node's Casts and then the node, so one
  // cursor over plan.nodes and one over plan.casts find every planned node
  // by name in order; only a graph in another order needs an index of all
  // names (built on the first miss).
  size_t next_node = 0, next_cast = 0;
  std::unordered_map<std::string_view, size_t> by_name, cast_by_name;
  auto locate = [&](const std::string& name) -> std::pair<NodePlan*, CastRecord*> {
    if (next_node < plan.nodes.size() && plan.nodes[next_node].name == name)
      return {&plan.nodes[next_node++], nullptr};
    if (next_cast < plan.casts.size() && plan.casts[next_cast].name == name)
      return {nullptr, &plan.casts[next_cast++]};
    if (by_name.empty() && cast_by_name.empty()) {
      for (size_t i = 0; i < plan.nodes.size(); ++i) by_name.emplace(plan.nodes[i].name, i);
      for (size_t i = 0; i < plan.casts.size(); ++i) cast_by_name.emplace(plan.casts[i].name, i);
    }
    if (auto it = by_name.find(name); it != by_name.end())
      return {&plan.nodes[it->second], nullptr};
    if (auto c = cast_by_name.find(name); c != cast_by_name.end())
      return {nullptr, &plan.casts[c->second]};
    return {nullptr, nullptr};
  };
  double total = 0;
  int known = 0;
  plan.predicted_measured = plan.predicted_probe = plan.predicted_hint = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(pg.num_nodes()); ++id) {
    const Node& n = pg.node(id);
    const auto [node_plan, cast_record] = locate(n.name);
    if (at_load[static_cast<size_t>(id)]) continue;
    capability::CostModel* cost = costs[static_cast<size_t>(n.device)];
    if (!cost) continue;
    capability::CostEstimate e;
    if (from && node_plan && node_plan->is_float_node) {
      // The source node with every float tensor in its effective dtype.
      e = from->queries.costs(n.device)->estimate(from->source, node_plan->node,
                                                  node_plan->effective);
    } else if (from && cast_record) {
      const ValueId v = from->cast_sources[static_cast<size_t>(cast_record - plan.casts.data())];
      e = from->queries.costs(n.device)->cast_estimate(from->source, v, cast_record->from,
                                                       cast_record->to);
    } else {
      ins.clear();
      outs.clear();
      for (ValueId v : n.inputs) ins.push_back(pg.value(v).type.dtype);
      for (ValueId v : n.outputs) outs.push_back(pg.value(v).type.dtype);
      lowered.assign(pg, n, ins, outs, false);
      e = cost->estimate(lowered.desc());
    }
    const double t = e.us;
    if (t > 0) total += t;
    known += t >= 0 ? 1 : 0;
    plan.predicted_measured += e.origin == capability::CostOrigin::kMeasured ? 1 : 0;
    plan.predicted_probe += e.origin == capability::CostOrigin::kProbe ? 1 : 0;
    plan.predicted_hint += e.origin == capability::CostOrigin::kHint ? 1 : 0;
    if (node_plan) {
      node_plan->predicted_us = t;
      node_plan->cost_origin = e.origin;
    } else if (cast_record) {
      cast_record->predicted_us = t;
      cast_record->cost_origin = e.origin;
    }
  }
  // A device's per-run cost beyond its nodes, where it was measured.
  std::vector<bool> used(costs.size(), false);
  int64_t steps = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(pg.num_nodes()); ++id)
    if (!at_load[static_cast<size_t>(id)]) {
      used[static_cast<size_t>(pg.node(id).device)] = true;
      ++steps;
    }
  const capability::NodeSpec run = run_description(pg, steps);
  for (size_t k = 0; k < costs.size(); ++k)
    if (used[k] && costs[k])
      if (const auto o = costs[k]->run_overhead_us(run.desc())) total = std::max(0.0, total + *o);
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

}  // namespace ampx::planner_detail
