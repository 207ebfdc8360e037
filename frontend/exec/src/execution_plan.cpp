#include <ampx/exec/execution_plan.hpp>
#include <ampx/exec/memory_budget.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace ampx {

int ExecutionPlan::kernels() const {
  int n = 0;
  for (const ExecutionStep& s : steps) n += std::holds_alternative<KernelStep>(s) ? 1 : 0;
  return n;
}

int ExecutionPlan::copies() const {
  return static_cast<int>(steps.size()) - kernels();
}

uint64_t ExecutionPlan::copy_bytes() const {
  uint64_t bytes = 0;
  for (const ExecutionStep& s : steps)
    if (const auto* c = std::get_if<CopyStep>(&s)) bytes += graph->value(c->value).byte_size();
  return bytes;
}

namespace {
std::string typed(const Graph& g, ValueId v) {
  const Value& val = g.value(v);
  return std::string(dtype_name(val.type.dtype)) + shape_str(val.type.shape);
}
}  // namespace

StepTiming describe_step(const Graph& graph, const ExecutionStep& step) {
  StepTiming t;
  if (const auto* c = std::get_if<CopyStep>(&step)) {
    t.device = c->to;
    t.name = graph.value(c->value).name;
    t.op = "Copy";
    t.copy_from = c->from;
    t.dtype = dtype_name(graph.value(c->value).type.dtype);
    t.shapes = typed(graph, c->value);
    return t;
  }
  const KernelStep& k = std::get<KernelStep>(step);
  const Node& n = graph.node(k.node);
  t.device = k.device;
  t.name = n.name;
  t.op = op_name(n.op);
  if (!n.outputs.empty()) t.dtype = dtype_name(graph.value(n.outputs[0]).type.dtype);
  for (size_t i = 0; i < n.inputs.size(); ++i)
    t.shapes += (i ? ", " : "") + typed(graph, n.inputs[i]);
  t.shapes += " ->";
  for (size_t i = 0; i < n.outputs.size(); ++i)
    t.shapes += (i ? ", " : " ") + typed(graph, n.outputs[i]);
  return t;
}

std::vector<ValueId> checked_data_inputs(const ExecutionPlan& plan,
                                         std::span<const HostTensorView> inputs) {
  const Graph& g = *plan.graph;
  std::vector<bool> is_state(g.inputs().size(), false);
  for (const StateBinding& b : plan.state) is_state[b.input] = true;
  std::vector<ValueId> data;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (!is_state[i]) data.push_back(g.inputs()[i]);
  if (inputs.size() != data.size())
    throw std::invalid_argument("graph '" + g.name + "' takes " + std::to_string(data.size()) +
                                " inputs, got " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& val = g.value(data[i]);
    if (inputs[i].type != val.type || inputs[i].data.size() != val.byte_size())
      throw std::invalid_argument(
          "input '" + val.name + "': expected " + std::string(dtype_name(val.type.dtype)) +
          shape_str(val.type.shape) + ", got " + std::string(dtype_name(inputs[i].type.dtype)) +
          shape_str(inputs[i].type.shape));
  }
  return data;
}

std::string to_text(const ExecutionPlan& plan) {
  const Graph& g = *plan.graph;
  std::string out = fmt::format("execution plan of '{}': {} steps ({} kernels, {} copies)\n",
                                g.name, plan.steps.size(), plan.kernels(), plan.copies());
  const auto dev = [&](int d) { return plan.devices[static_cast<size_t>(d)].id; };
  const auto where = [&](ValueId v, int d) -> std::string {
    if (plan.known_at_load[static_cast<size_t>(v)]) return "load";
    if (const ValueId a = plan.alias_of[static_cast<size_t>(v)]; a != kNone)
      return "in " + g.value(a).name;
    const int64_t off = plan.arena_offset[static_cast<size_t>(d)][static_cast<size_t>(v)];
    if (off < 0) return "own";
    return "@" + std::to_string(off);
  };
  if (!plan.load_time_nodes.empty()) {
    out += fmt::format("at load ({} nodes):\n", plan.load_time_nodes.size());
    for (NodeId id : plan.load_time_nodes) {
      const StepTiming t =
          describe_step(g, KernelStep{id, plan.node_device[static_cast<size_t>(id)]});
      out += fmt::format("  {} {} on {}: {}\n", t.op, t.name, dev(t.device), t.shapes);
    }
  }
  out += "per run:\n";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const ExecutionStep& s = plan.steps[i];
    if (const auto* c = std::get_if<CopyStep>(&s)) {
      out += fmt::format("  {:>4} Copy {} {} -> {}{}: {} B\n", i, g.value(c->value).name,
                         dev(c->from), dev(c->to), c->staged ? " (through host)" : "",
                         g.value(c->value).byte_size());
      continue;
    }
    const KernelStep& k = std::get<KernelStep>(s);
    const Node& n = g.node(k.node);
    std::string outs;
    for (ValueId v : n.outputs)
      outs += (outs.empty() ? "" : ", ") + g.value(v).name + " " + typed(g, v) + " " +
              where(v, k.device);
    out +=
        fmt::format("  {:>4} {} {} on {} -> {}\n", i, op_name(n.op), n.name, dev(k.device), outs);
  }
  for (size_t i = 0; i < plan.state.size(); ++i)
    out += fmt::format("state {} <- {}: {}\n", g.value(g.inputs()[plan.state[i].input]).name,
                       g.value(g.outputs()[plan.state[i].output]).name,
                       plan.state_in_place[i] ? "updated in place" : "copied back after the run");
  for (size_t d = 0; d < plan.devices.size(); ++d) {
    const DeviceMemoryNeed& m = plan.needs[d];
    out += fmt::format("device {}: arena {}, load-time values {} ({}), state {}, staging {}\n",
                       dev(static_cast<int>(d)), bytes_text(m.arena_bytes),
                       plan.load_time_values[d].size(), bytes_text(m.constant_bytes),
                       bytes_text(m.state_bytes), bytes_text(m.staging_bytes));
  }
  out += fmt::format("arenas: peak {} (without reuse {})\n", bytes_text(plan.arena_peak_bytes),
                     bytes_text(plan.no_reuse_bytes));
  return out;
}

void check_lowered_for(const ExecutionPlan& plan, std::span<const plugins::Device* const> devices) {
  if (devices.size() != plan.devices.size())
    throw std::invalid_argument("executor: the plan was lowered for " +
                                std::to_string(plan.devices.size()) + " device(s), " +
                                std::to_string(devices.size()) + " given");
}

}  // namespace ampx
