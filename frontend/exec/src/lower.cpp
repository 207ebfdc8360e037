#include <ampx/amp/load_time.hpp>
#include <ampx/amp/node_desc.hpp>
#include <ampx/exec/lower.hpp>
#include <ampx/exec/memory_planner.hpp>

#include <algorithm>
#include <stdexcept>

namespace ampx {

std::vector<LoweringDevice> lowering_devices(std::span<const plugins::Device* const> devices) {
  std::vector<LoweringDevice> out;
  for (const plugins::Device* d : devices) out.push_back({d->id(), d->plugin_name()});
  return out;
}

ExecutionPlan lower(const Graph& graph, std::span<const LoweringDevice> devices,
                    const LowerOptions& options) {
  if (devices.empty()) throw std::invalid_argument("executor: no device");
  ExecutionPlan p;
  p.graph = &graph;
  p.devices.assign(devices.begin(), devices.end());
  p.state.assign(options.state.begin(), options.state.end());
  const size_t nd = devices.size();
  const size_t nv = graph.num_values();
  p.node_device.assign(graph.num_nodes(), 0);
  if (options.placement == NodePlacement::kFromNodes)
    for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
      const Node& n = graph.node(id);
      if (n.device < 0 || static_cast<size_t>(n.device) >= nd)
        throw std::invalid_argument("node '" + n.name + "' is placed on device " +
                                    std::to_string(n.device) + ", but " + std::to_string(nd) +
                                    " device(s) were given");
      p.node_device[static_cast<size_t>(id)] = static_cast<int>(n.device);
    }
  p.needs.assign(nd, {});
  p.arena_bytes.assign(nd, 0);
  p.arena_offset.assign(nd, std::vector<int64_t>(nv, -1));
  p.alias_of.assign(nv, kNone);
  p.load_time_values.resize(nd);
  const auto dev_of = [&](NodeId id) { return p.node_device[static_cast<size_t>(id)]; };

  std::vector<bool> is_state_input(graph.inputs().size(), false);
  std::vector<bool> is_state_output(graph.outputs().size(), false);
  std::vector<bool> state_value(nv, false);  // a state input: in a buffer of its own
  for (const StateBinding& b : p.state) {
    if (b.input >= graph.inputs().size() || b.output >= graph.outputs().size() ||
        is_state_input[b.input] || is_state_output[b.output])
      throw std::invalid_argument("executor: invalid state binding (input " +
                                  std::to_string(b.input) + ", output " + std::to_string(b.output) +
                                  ")");
    const Value& in = graph.value(graph.inputs()[b.input]);
    if (in.type != graph.value(graph.outputs()[b.output]).type)
      throw std::invalid_argument("executor: state '" + in.name +
                                  "' and its new value differ in type");
    is_state_input[b.input] = is_state_output[b.output] = true;
    state_value[static_cast<size_t>(graph.inputs()[b.input])] = true;
  }

  Residency r = residency(graph, p.node_device);
  p.home = std::move(r.home);
  p.known_at_load = std::move(r.known_at_load);
  p.load_time_nodes = std::move(r.load_nodes);

  // Values known at load are put on every device that reads them, once:
  // uploaded, or copied from a device that has them (through host memory
  // between two plugins).
  std::vector<std::vector<bool>> static_on(nd, std::vector<bool>(nv, false));
  auto place_static = [&](ValueId v, int d) {
    auto&& on = static_on[static_cast<size_t>(d)][static_cast<size_t>(v)];
    if (on) return;
    on = true;
    p.load_time_values[static_cast<size_t>(d)].push_back(v);
    p.needs[static_cast<size_t>(d)].constant_bytes += graph.value(v).byte_size();
    const int h = p.home[static_cast<size_t>(v)];
    if (!graph.value(v).is_constant() && h != d &&
        p.devices[static_cast<size_t>(h)].plugin != p.devices[static_cast<size_t>(d)].plugin)
      p.needs[static_cast<size_t>(d)].staging_bytes =
          std::max(p.needs[static_cast<size_t>(d)].staging_bytes, graph.value(v).byte_size());
  };
  for (NodeId id : p.load_time_nodes) {
    const Node& n = graph.node(id);
    for (ValueId v : n.inputs) place_static(v, dev_of(id));
    for (ValueId v : n.outputs) place_static(v, dev_of(id));
  }

  // The steps: each copy before its first reader, then the kernel.
  size_t next_copy = 0;
  std::vector<size_t> step_of_node(graph.num_nodes(), 0);
  for (size_t i = 0; i < r.run_nodes.size(); ++i) {
    const NodeId id = r.run_nodes[i];
    const int d = dev_of(id);
    for (; next_copy < r.copies.size() && r.copies[next_copy].before == i; ++next_copy) {
      const Residency::Copy& c = r.copies[next_copy];
      const bool staged = p.devices[static_cast<size_t>(c.from)].plugin !=
                          p.devices[static_cast<size_t>(c.to)].plugin;
      if (staged)
        p.needs[static_cast<size_t>(c.to)].staging_bytes += graph.value(c.value).byte_size();
      p.steps.push_back(CopyStep{c.value, c.from, c.to, staged});
    }
    for (ValueId v : graph.node(id).inputs)
      if (p.known_at_load[static_cast<size_t>(v)]) place_static(v, d);
    step_of_node[static_cast<size_t>(id)] = p.steps.size();
    p.steps.push_back(KernelStep{id, d});
  }

  // State: each state input in a buffer of its own on its home device; each
  // state output in place when it can be (an update writing its own state
  // input after every other reader of it), else copied back after the run.
  const auto reads = [&](const ExecutionStep& s, ValueId v) {
    if (const auto* c = std::get_if<CopyStep>(&s)) return c->value == v;
    const Node& n = graph.node(std::get<KernelStep>(s).node);
    return std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end();
  };
  p.state_in_place.assign(p.state.size(), false);
  for (size_t i = 0; i < p.state.size(); ++i) {
    const ValueId in = graph.inputs()[p.state[i].input];
    const ValueId out = graph.outputs()[p.state[i].output];
    const int h = p.home[static_cast<size_t>(in)];
    p.needs[static_cast<size_t>(h)].state_bytes += graph.value(in).byte_size();
    if (out == in) {
      // State the run only reads (ZeRO-1's weights of another rank, written
      // between runs): its buffer already holds the output.
      p.state_in_place[i] = true;
      continue;
    }
    const NodeId prod = graph.value(out).producer;
    if (prod == kNone || p.known_at_load[static_cast<size_t>(out)] || dev_of(prod) != h) continue;
    const Node& pn = graph.node(prod);
    const auto slot_out = static_cast<size_t>(std::find(pn.outputs.begin(), pn.outputs.end(), out) -
                                              pn.outputs.begin());
    const int alias_in = in_place_input(pn.op, slot_out, pn.inputs.size(), pn.attrs);
    if (alias_in < 0 || pn.inputs[static_cast<size_t>(alias_in)] != in) continue;
    // Every other reader of the state input must have run before the update.
    bool late_reader = false;
    for (size_t st = step_of_node[static_cast<size_t>(prod)] + 1; st < p.steps.size(); ++st)
      late_reader = late_reader || reads(p.steps[st], in);
    if (late_reader) continue;
    p.alias_of[static_cast<size_t>(out)] = in;
    p.state_in_place[i] = true;
  }

  // Lifetimes of every (value, device) in step indices, then one arena per
  // device.
  const auto key = [nd](ValueId v, int d) {
    return static_cast<size_t>(v) * nd + static_cast<size_t>(d);
  };
  std::vector<int> first(nv * nd, -1), last(nv * nd, -1);
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    if (is_state_input[i]) continue;  // in a buffer of its own
    const ValueId v = graph.inputs()[i];
    const size_t k = key(v, p.home[static_cast<size_t>(v)]);
    first[k] = last[k] = 0;
  }
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const int si = static_cast<int>(s);
    if (const auto* c = std::get_if<CopyStep>(&p.steps[s])) {
      last[key(c->value, c->from)] = si;
      first[key(c->value, c->to)] = last[key(c->value, c->to)] = si;
      continue;
    }
    const KernelStep& k = std::get<KernelStep>(p.steps[s]);
    const Node& n = graph.node(k.node);
    for (ValueId v : n.inputs)
      if (!p.known_at_load[static_cast<size_t>(v)]) last[key(v, k.device)] = si;
    for (ValueId v : n.outputs) first[key(v, k.device)] = last[key(v, k.device)] = si;
  }
  const int end = static_cast<int>(p.steps.size());
  for (ValueId v : graph.outputs())
    if (!p.known_at_load[static_cast<size_t>(v)])
      last[key(v, p.home[static_cast<size_t>(v)])] = end;
  for (size_t d = 0; d < nd; ++d) {
    std::vector<BufferRequest> requests;
    std::vector<ValueId> request_value;
    for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
      const auto vi = static_cast<size_t>(v);
      const size_t k = key(v, static_cast<int>(d));
      if (p.known_at_load[vi] || first[k] < 0 ||
          (state_value[vi] && p.home[vi] == static_cast<int>(d)) || p.alias_of[vi] != kNone)
        continue;
      requests.push_back({graph.value(v).byte_size(), first[k], last[k]});
      request_value.push_back(v);
    }
    if (requests.empty()) continue;
    const MemoryPlan mem = plan_memory(requests);
    for (size_t i = 0; i < requests.size(); ++i)
      p.arena_offset[d][static_cast<size_t>(request_value[i])] =
          static_cast<int64_t>(mem.offsets[i]);
    p.arena_bytes[d] = std::max<uint64_t>(mem.peak_bytes, 1);
    p.needs[d].arena_bytes = p.arena_bytes[d];
    p.arena_peak_bytes += mem.peak_bytes;
    p.no_reuse_bytes += mem.no_reuse_bytes;
  }
  return p;
}

}  // namespace ampx
