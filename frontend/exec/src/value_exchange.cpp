#include <ampx/exec/value_exchange.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>

namespace ampx {
namespace {

bool step_reads(const Graph& g, const ExecutionStep& step, ValueId v) {
  if (const auto* c = std::get_if<CopyStep>(&step)) return c->value == v;
  const Node& n = g.node(std::get<KernelStep>(step).node);
  return std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end();
}

bool step_writes(const Graph& g, const ExecutionStep& step, ValueId v) {
  if (std::holds_alternative<CopyStep>(step)) return false;
  const Node& n = g.node(std::get<KernelStep>(step).node);
  return std::find(n.outputs.begin(), n.outputs.end(), v) != n.outputs.end();
}

}  // namespace

ExchangePoints exchange_points(const ExecutionPlan& plan, std::span<const ExchangedValue> values) {
  const Graph& g = *plan.graph;
  const size_t steps = plan.steps.size();
  ExchangePoints p{std::vector<std::vector<size_t>>(steps),
                   std::vector<std::vector<size_t>>(steps)};
  std::vector<size_t> producer(values.size(), steps);
  std::map<int, size_t> group_done;  // group -> its last producer step
  for (size_t i = 0; i < values.size(); ++i) {
    const ValueId v = values[i].value;
    if (v < 0 || static_cast<size_t>(v) >= g.num_values())
      throw std::invalid_argument("exchanged value " + std::to_string(v) + " is not in graph '" +
                                  g.name + "'");
    for (size_t s = 0; s < steps; ++s)
      if (step_writes(g, plan.steps[s], v)) producer[i] = s;
    if (producer[i] == steps || plan.known_at_load[static_cast<size_t>(v)])
      throw std::invalid_argument("exchanged value '" + g.value(v).name +
                                  "' is not computed by a step of the run");
    size_t& done = group_done[values[i].group];
    done = std::max(done, producer[i]);
  }
  // Each value's first reader after its group is made; a value no step
  // reads then (the update guard's statistics, a step output) is made
  // current with its group, before the group's first reader.
  std::vector<size_t> reader(values.size(), steps);
  std::map<int, size_t> group_reader;
  for (size_t i = 0; i < values.size(); ++i) {
    size_t s = group_done.at(values[i].group) + 1;
    while (s < steps && !step_reads(g, plan.steps[s], values[i].value)) ++s;
    reader[i] = s;
    auto [it, added] = group_reader.emplace(values[i].group, s);
    if (!added) it->second = std::min(it->second, s);
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const ValueId v = values[i].value;
    if (reader[i] >= steps) reader[i] = group_reader.at(values[i].group);
    if (reader[i] >= steps)
      throw std::invalid_argument("exchanged value '" + g.value(v).name +
                                  "' is not read after its group is made");
    // A copy to another device in between would carry the rank's own value
    // there, where the exchanged one never arrives.
    for (size_t s = producer[i] + 1; s < reader[i]; ++s)
      if (std::holds_alternative<CopyStep>(plan.steps[s]) && step_reads(g, plan.steps[s], v))
        throw std::invalid_argument("exchanged value '" + g.value(v).name +
                                    "' is copied to another device before its group is made");
    p.after[producer[i]].push_back(i);
    p.before[reader[i]].push_back(i);
  }
  return p;
}

}  // namespace ampx
