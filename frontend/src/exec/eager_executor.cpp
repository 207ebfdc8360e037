#include <ampx/exec/eager_executor.hpp>
#include <ampx/exec/node_desc.hpp>

#include <algorithm>
#include <stdexcept>

namespace ampx {

namespace {
ampx_buffer_view whole(const plugins::Buffer& b) {
  ampx_buffer_view v{};
  v.struct_size = sizeof v;
  v.buffer = b.handle();
  v.offset = 0;
  return v;
}
}  // namespace

EagerExecutor::EagerExecutor(const Graph& graph, std::span<const plugins::Device* const> devices,
                             std::span<const StateBinding> state)
    : graph_(graph), devices_(devices.begin(), devices.end()), state_(state.begin(), state.end()) {
  if (devices_.empty()) throw std::invalid_argument("eager executor: no device");
  const size_t nv = graph.num_values();
  constants_.resize(devices_.size());  // move-only buffers: no copies of a prototype
  for (auto& per_value : constants_) per_value.resize(nv);
  device_of_.assign(graph.num_nodes(), 0);
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const int d = graph.node(id).device;
    if (d < 0 || static_cast<size_t>(d) >= devices_.size())
      throw std::invalid_argument("node '" + graph.node(id).name + "' is placed on device " +
                                  std::to_string(d) + ", but " + std::to_string(devices_.size()) +
                                  " device(s) were given");
    device_of_[static_cast<size_t>(id)] = d;
  }
  is_state_input_.assign(graph.inputs().size(), false);
  is_state_output_.assign(graph.outputs().size(), false);
  for (const StateBinding& b : state_) {
    if (b.input >= graph.inputs().size() || b.output >= graph.outputs().size())
      throw std::invalid_argument("eager executor: invalid state binding");
    is_state_input_[b.input] = is_state_output_[b.output] = true;
  }
  // Each state input on the device of its first reader, zeros until written.
  const auto order = graph.topological_order();
  for (const StateBinding& b : state_) {
    const ValueId v = graph.inputs()[b.input];
    int home = 0;
    for (NodeId id : order) {
      const Node& n = graph.node(id);
      if (std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end()) {
        home = device_of_[static_cast<size_t>(id)];
        break;
      }
    }
    state_home_.push_back(home);
    const uint64_t bytes = graph.value(v).byte_size();
    state_buffers_.push_back(
        devices_[static_cast<size_t>(home)]->allocate(std::max<uint64_t>(bytes, 1)));
    devices_[static_cast<size_t>(home)]->copy_to_device(*state_buffers_.back(), 0,
                                                        std::vector<std::byte>(bytes));
  }
}

const plugins::Buffer& EagerExecutor::on_device(ValueId v, int d,
                                                std::vector<std::optional<plugins::Buffer>>& live,
                                                std::vector<int>& where) {
  const Value& val = graph_.value(v);
  auto& dev = *devices_[static_cast<size_t>(d)];
  if (val.is_constant()) {  // a weight: uploaded once per device
    auto& slot = constants_[static_cast<size_t>(d)][static_cast<size_t>(v)];
    if (!slot) {
      slot = dev.allocate(std::max<uint64_t>(val.byte_size(), 1));
      dev.copy_to_device(*slot, 0, *val.constant);
    }
    return *slot;
  }
  auto& slot = live[static_cast<size_t>(v)];
  if (!slot) throw std::logic_error("eager executor: value '" + val.name + "' has no data");
  const int h = where[static_cast<size_t>(v)];
  if (h == d) return *slot;
  // Another device: through the host (a framework's .to(device)), the value
  // moves for good.
  std::vector<std::byte> staging(val.byte_size());
  devices_[static_cast<size_t>(h)]->copy_to_host(staging, *slot, 0);
  plugins::Buffer moved = dev.allocate(std::max<uint64_t>(val.byte_size(), 1));
  dev.copy_to_device(moved, 0, staging);
  slot = std::move(moved);
  where[static_cast<size_t>(v)] = d;
  return *slot;
}

std::vector<HostTensor> EagerExecutor::run(std::span<const HostTensor> inputs) {
  const Graph& g = graph_;
  const size_t nv = g.num_values();
  std::vector<std::optional<plugins::Buffer>> live(nv);
  std::vector<int> where(nv, -1);
  // Data inputs: uploaded to device 0, moved where they are read.
  size_t k = 0;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const ValueId v = g.inputs()[i];
    if (is_state_input_[i]) continue;
    if (k >= inputs.size()) throw std::invalid_argument("eager executor: too few inputs");
    const Value& val = g.value(v);
    if (inputs[k].type != val.type || inputs[k].data.size() != val.byte_size())
      throw std::invalid_argument("input '" + val.name + "': wrong type or size");
    live[static_cast<size_t>(v)] = devices_[0]->allocate(std::max<uint64_t>(val.byte_size(), 1));
    devices_[0]->copy_to_device(*live[static_cast<size_t>(v)], 0, inputs[k].data);
    where[static_cast<size_t>(v)] = 0;
    ++k;
  }
  if (k != inputs.size()) throw std::invalid_argument("eager executor: too many inputs");
  // State inputs read from their own buffers (copied, so that the update
  // writing the new value never aliases the old one).
  for (size_t i = 0; i < state_.size(); ++i) {
    const ValueId v = g.inputs()[state_[i].input];
    auto& dev = *devices_[static_cast<size_t>(state_home_[i])];
    live[static_cast<size_t>(v)] = dev.allocate(std::max<uint64_t>(g.value(v).byte_size(), 1));
    dev.copy_device_to_device(*live[static_cast<size_t>(v)], 0, *state_buffers_[i], 0,
                              g.value(v).byte_size());
    where[static_cast<size_t>(v)] = state_home_[i];
  }
  // Last reader of every value, to free buffers as a framework's refcounts do.
  const auto order = g.topological_order();
  std::vector<size_t> last_use(nv, 0);
  for (size_t s = 0; s < order.size(); ++s)
    for (ValueId v : g.node(order[s]).inputs) last_use[static_cast<size_t>(v)] = s;
  std::vector<bool> is_output(nv, false);
  for (ValueId v : g.outputs()) is_output[static_cast<size_t>(v)] = true;

  last_run_kernels_ = 0;
  for (size_t s = 0; s < order.size(); ++s) {
    const Node& n = g.node(order[s]);
    const int d = device_of_[static_cast<size_t>(order[s])];
    auto& dev = *devices_[static_cast<size_t>(d)];
    const LoweredNode lowered(g, order[s]);
    plugins::Kernel kernel = dev.prepare(lowered.desc());  // at every dispatch
    ++last_run_kernels_;
    std::vector<ampx_buffer_view> ins, outs;
    for (ValueId v : n.inputs) ins.push_back(whole(on_device(v, d, live, where)));
    for (ValueId v : n.outputs) {
      live[static_cast<size_t>(v)] = dev.allocate(std::max<uint64_t>(g.value(v).byte_size(), 1));
      where[static_cast<size_t>(v)] = d;
      outs.push_back(whole(*live[static_cast<size_t>(v)]));
    }
    kernel.launch(ins, outs);
    dev.synchronize();
    for (ValueId v : n.inputs)
      if (last_use[static_cast<size_t>(v)] == s && !is_output[static_cast<size_t>(v)] &&
          !g.value(v).is_constant())
        live[static_cast<size_t>(v)].reset();
  }
  for (size_t i = 0; i < state_.size(); ++i) {
    const ValueId out = g.outputs()[state_[i].output];
    const plugins::Buffer& src = on_device(out, state_home_[i], live, where);
    devices_[static_cast<size_t>(state_home_[i])]->copy_device_to_device(
        *state_buffers_[i], 0, src, 0, g.value(out).byte_size());
  }
  std::vector<HostTensor> outputs;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    if (is_state_output_[i]) continue;
    const ValueId v = g.outputs()[i];
    const Value& val = g.value(v);
    HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
    const int d = val.is_constant() ? 0 : where[static_cast<size_t>(v)];
    devices_[static_cast<size_t>(d)]->copy_to_host(t.data, on_device(v, d, live, where), 0);
    outputs.push_back(std::move(t));
  }
  for (const auto* dev : devices_) dev->synchronize();
  return outputs;
}

void EagerExecutor::write_state(size_t i, std::span<const std::byte> bytes) {
  const Value& val = graph_.value(graph_.inputs()[state_.at(i).input]);
  if (bytes.size() != val.byte_size())
    throw std::invalid_argument("state '" + val.name + "': wrong size");
  auto& dev = *devices_[static_cast<size_t>(state_home_[i])];
  dev.copy_to_device(*state_buffers_[i], 0, bytes);
  dev.synchronize();
}

HostTensor EagerExecutor::read_state(size_t i) const {
  const Value& val = graph_.value(graph_.inputs()[state_.at(i).input]);
  HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
  devices_[static_cast<size_t>(state_home_[i])]->copy_to_host(t.data, *state_buffers_[i], 0);
  return t;
}

}  // namespace ampx
