#include <ampx/amp/node_desc.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/memory_planner.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <unordered_set>

namespace ampx {

namespace {
ampx_buffer_view make_view(ampx_buffer* buffer, uint64_t offset) {
  ampx_buffer_view v{};
  v.struct_size = sizeof(ampx_buffer_view);
  v.buffer = buffer;
  v.offset = offset;
  return v;
}
}  // namespace

Executor::Executor(const Graph& graph, const plugins::Device& device,
                   std::span<const StateBinding> state, const ExecutorOptions& options)
    : graph_(graph), state_(state.begin(), state.end()) {
  const plugins::Device* one[] = {&device};
  layout(one, NodeDevices::kAllOnFirst);
  check_memory(needs_, devices_, options.memory);
  materialize();
}

Executor::Executor(const Graph& graph, std::span<const plugins::Device* const> devices,
                   std::span<const StateBinding> state, const ExecutorOptions& options)
    : graph_(graph), state_(state.begin(), state.end()) {
  layout(devices, NodeDevices::kFromNodes);
  check_memory(needs_, devices_, options.memory);
  materialize();
}

Executor::Executor(LayoutOnly, const Graph& graph, std::span<const StateBinding> state)
    : graph_(graph), state_(state.begin(), state.end()) {}

std::vector<DeviceMemoryNeed> Executor::memory_needs(
    const Graph& graph, std::span<const plugins::Device* const> devices,
    std::span<const StateBinding> state) {
  Executor e(LayoutOnly{}, graph, state);
  e.layout(devices, devices.size() == 1 ? NodeDevices::kAllOnFirst : NodeDevices::kFromNodes);
  return e.needs_;
}

int Executor::device_of(const Node& n) const {
  if (node_devices_ == NodeDevices::kAllOnFirst) return 0;
  if (n.device < 0 || static_cast<size_t>(n.device) >= devices_.size())
    throw std::invalid_argument("node '" + n.name + "' is placed on device " +
                                std::to_string(n.device) + ", but " +
                                std::to_string(devices_.size()) + " device(s) were given");
  return static_cast<int>(n.device);
}

void Executor::layout(std::span<const plugins::Device* const> devices, NodeDevices node_devices) {
  const Graph& graph = graph_;
  if (devices.empty()) throw std::invalid_argument("executor: no device");
  devices_.assign(devices.begin(), devices.end());
  node_devices_ = node_devices;
  const size_t nd = devices_.size();
  const size_t nv = graph.num_values();
  const auto dev_of = [this](const Node& n) { return device_of(n); };
  static_buffers_.resize(nd);
  for (auto& per_value : static_buffers_) per_value.resize(nv);
  arena_offset_.assign(nd, std::vector<int64_t>(nv, -1));
  arenas_.resize(nd);
  needs_.assign(nd, {});
  arena_peak_.assign(nd, 0);
  home_.assign(nv, -1);
  alias_of_.assign(nv, kNone);
  stats_.kernels_per_device.assign(nd, 0);
  is_state_input_.assign(graph.inputs().size(), false);
  is_state_output_.assign(graph.outputs().size(), false);
  std::vector<bool> state_value(nv, false);  // a state input: in a buffer of its own
  for (const StateBinding& b : state_) {
    if (b.input >= graph.inputs().size() || b.output >= graph.outputs().size() ||
        is_state_input_[b.input] || is_state_output_[b.output])
      throw std::invalid_argument("executor: invalid state binding (input " +
                                  std::to_string(b.input) + ", output " + std::to_string(b.output) +
                                  ")");
    const Value& in = graph.value(graph.inputs()[b.input]);
    if (in.type != graph.value(graph.outputs()[b.output]).type)
      throw std::invalid_argument("executor: state '" + in.name +
                                  "' and its new value differ in type");
    is_state_input_[b.input] = is_state_output_[b.output] = true;
    state_value[static_cast<size_t>(graph.inputs()[b.input])] = true;
  }
  const auto order = graph.topological_order();

  // Static values (constants, and what nodes fed only by them compute) are
  // put on every device that reads them, once: uploaded, or copied from a
  // device that has them (materialize() does it in this order).
  is_static_.assign(nv, false);
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v)
    is_static_[static_cast<size_t>(v)] = graph.value(v).is_constant();
  std::vector<std::vector<bool>> static_on(nd, std::vector<bool>(nv, false));
  auto place_static = [&](ValueId v, int d) {
    auto&& on = static_on[static_cast<size_t>(d)][static_cast<size_t>(v)];
    if (on) return;
    on = true;
    needs_[static_cast<size_t>(d)].constant_bytes += graph.value(v).byte_size();
    const int h = home_[static_cast<size_t>(v)];
    if (!graph.value(v).is_constant() && h != d &&
        devices_[static_cast<size_t>(h)]->plugin_name() !=
            devices_[static_cast<size_t>(d)]->plugin_name())
      needs_[static_cast<size_t>(d)].staging_bytes =
          std::max(needs_[static_cast<size_t>(d)].staging_bytes, graph.value(v).byte_size());
  };
  for (NodeId id : order) {
    const Node& n = graph.node(id);
    bool all_static = !n.inputs.empty();
    for (ValueId v : n.inputs) all_static = all_static && is_static_[static_cast<size_t>(v)];
    if (!all_static) {
      dynamic_nodes_.push_back(id);
      continue;
    }
    const int d = dev_of(n);
    for (ValueId v : n.inputs) place_static(v, d);
    for (ValueId v : n.outputs) {
      is_static_[static_cast<size_t>(v)] = true;
      home_[static_cast<size_t>(v)] = d;
      place_static(v, d);
    }
    folded_nodes_.push_back(id);
  }

  // Homes of the dynamic values: the producer's device; a graph input's is
  // the device of its first reader (as plan_copies() has it).
  for (NodeId id : dynamic_nodes_) {
    const Node& n = graph.node(id);
    for (ValueId v : n.inputs)
      if (home_[static_cast<size_t>(v)] < 0 && !is_static_[static_cast<size_t>(v)])
        home_[static_cast<size_t>(v)] = dev_of(n);
    for (ValueId v : n.outputs) home_[static_cast<size_t>(v)] = dev_of(n);
  }
  for (ValueId v : graph.inputs())
    if (home_[static_cast<size_t>(v)] < 0) home_[static_cast<size_t>(v)] = 0;

  // The steps: a copy before the first reader on each other device, then
  // the kernel.
  std::unordered_set<uint64_t> copied;
  for (NodeId id : dynamic_nodes_) {
    const Node& n = graph.node(id);
    const int d = dev_of(n);
    for (ValueId v : n.inputs) {
      if (is_static_[static_cast<size_t>(v)]) {
        place_static(v, d);
        continue;
      }
      const int h = home_[static_cast<size_t>(v)];
      if (h == d) continue;
      if (!copied.insert((static_cast<uint64_t>(v) << 32) | static_cast<uint32_t>(d)).second)
        continue;
      Step copy;
      copy.device = d;
      copy.copy_value = v;
      copy.copy_from = h;
      if (devices_[static_cast<size_t>(h)]->plugin_name() !=
          devices_[static_cast<size_t>(d)]->plugin_name())
        needs_[static_cast<size_t>(d)].staging_bytes += graph.value(v).byte_size();
      steps_.push_back(std::move(copy));
      ++stats_.copies;
      stats_.copy_bytes += graph.value(v).byte_size();
    }
    Step step;
    step.device = d;
    step.copy_value = id;  // the node, until the kernels are prepared in materialize()
    steps_.push_back(std::move(step));
  }

  // State: each state input in a buffer of its own on its home device; each
  // state output in place when it can be (an update writing its own state
  // input after every other reader of it), else copied back after the run.
  state_copy_back_.assign(state_.size(), true);
  for (size_t i = 0; i < state_.size(); ++i) {
    const ValueId in = graph.inputs()[state_[i].input];
    const ValueId out = graph.outputs()[state_[i].output];
    const int h = home_[static_cast<size_t>(in)];
    needs_[static_cast<size_t>(h)].state_bytes += graph.value(in).byte_size();
    const NodeId p = graph.value(out).producer;
    if (p == kNone || dev_of(graph.node(p)) != h) continue;
    const Node& pn = graph.node(p);
    const auto slot_out = static_cast<size_t>(std::find(pn.outputs.begin(), pn.outputs.end(), out) -
                                              pn.outputs.begin());
    const int alias_in = in_place_input(pn.op, slot_out, pn.inputs.size(), pn.attrs);
    if (alias_in < 0 || pn.inputs[static_cast<size_t>(alias_in)] != in) continue;
    // Every other reader of the state input must have run before the update.
    size_t update_step = 0;
    bool late_reader = false;
    for (size_t st = 0; st < steps_.size(); ++st)
      if (steps_[st].copy_from < 0 && steps_[st].copy_value == p) update_step = st;
    for (size_t st = update_step + 1; st < steps_.size(); ++st) {
      const Step& later = steps_[st];
      if (later.copy_from >= 0) {
        late_reader = late_reader || later.copy_value == in;
        continue;
      }
      const Node& n = graph.node(static_cast<NodeId>(later.copy_value));
      late_reader =
          late_reader || std::find(n.inputs.begin(), n.inputs.end(), in) != n.inputs.end();
    }
    if (late_reader) continue;
    alias_of_[static_cast<size_t>(out)] = in;
    state_copy_back_[i] = false;
    ++state_in_place_;
  }

  // Lifetimes of every (value, device) in step indices, then one arena per
  // device.
  const auto key = [nd](ValueId v, int d) {
    return static_cast<size_t>(v) * nd + static_cast<size_t>(d);
  };
  std::vector<int> first(nv * nd, -1), last(nv * nd, -1);
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    if (is_state_input_[i]) continue;  // in a buffer of its own
    const ValueId v = graph.inputs()[i];
    first[key(v, home_[static_cast<size_t>(v)])] = last[key(v, home_[static_cast<size_t>(v)])] = 0;
  }
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& st = steps_[s];
    const int si = static_cast<int>(s);
    if (st.copy_from >= 0) {
      last[key(st.copy_value, st.copy_from)] = si;
      first[key(st.copy_value, st.device)] = last[key(st.copy_value, st.device)] = si;
      continue;
    }
    const Node& n = graph.node(static_cast<NodeId>(st.copy_value));
    for (ValueId v : n.inputs)
      if (!is_static_[static_cast<size_t>(v)]) last[key(v, st.device)] = si;
    for (ValueId v : n.outputs) first[key(v, st.device)] = last[key(v, st.device)] = si;
  }
  const int end = static_cast<int>(steps_.size());
  for (ValueId v : graph.outputs())
    if (!is_static_[static_cast<size_t>(v)]) last[key(v, home_[static_cast<size_t>(v)])] = end;
  for (size_t d = 0; d < nd; ++d) {
    std::vector<BufferRequest> requests;
    std::vector<ValueId> request_value;
    for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
      const auto vi = static_cast<size_t>(v);
      const size_t k = key(v, static_cast<int>(d));
      if (is_static_[vi] || first[k] < 0 || (state_value[vi] && home_[vi] == static_cast<int>(d)) ||
          alias_of_[vi] != kNone)
        continue;
      requests.push_back({graph.value(v).byte_size(), first[k], last[k]});
      request_value.push_back(v);
    }
    if (requests.empty()) continue;
    const MemoryPlan mem = plan_memory(requests);
    for (size_t i = 0; i < requests.size(); ++i)
      arena_offset_[d][static_cast<size_t>(request_value[i])] =
          static_cast<int64_t>(mem.offsets[i]);
    arena_peak_[d] = std::max<uint64_t>(mem.peak_bytes, 1);
    needs_[d].arena_bytes = arena_peak_[d];
    stats_.arena_bytes += mem.peak_bytes;
    stats_.no_reuse_bytes += mem.no_reuse_bytes;
  }
}

void Executor::materialize() {
  const Graph& graph = graph_;
  const size_t nv = graph.num_values();
  std::vector<std::byte> load_staging;
  auto ensure_static = [&](ValueId v, int d) {
    auto& slot = static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)];
    if (slot) return;
    const Value& val = graph.value(v);
    slot = devices_[static_cast<size_t>(d)]->allocate(val.byte_size());
    stats_.constant_bytes += val.byte_size();
    if (val.is_constant()) {
      devices_[static_cast<size_t>(d)]->copy_to_device(*slot, 0, *val.constant);
      return;
    }
    copy_value(v, home_[static_cast<size_t>(v)], d, load_staging);
  };
  for (NodeId id : folded_nodes_) {
    const Node& n = graph.node(id);
    const int d = device_of(n);
    const plugins::Device& device = *devices_[static_cast<size_t>(d)];
    const LoweredNode lowered(graph, id);
    plugins::Kernel kernel = device.prepare(lowered.desc());
    std::vector<ampx_buffer_view> ins, outs;
    for (ValueId v : n.inputs) {
      ensure_static(v, d);
      ins.push_back(
          make_view(static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)]->handle(), 0));
    }
    for (ValueId v : n.outputs) {
      plugins::Buffer buf = device.allocate(graph.value(v).byte_size());
      outs.push_back(make_view(buf.handle(), 0));
      stats_.constant_bytes += graph.value(v).byte_size();
      static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)] = std::move(buf);
    }
    kernel.launch(ins, outs);
    device.synchronize();
    ++stats_.folded_nodes;
  }
  for (Step& step : steps_) {
    if (step.copy_from >= 0) {
      if (devices_[static_cast<size_t>(step.copy_from)]->plugin_name() !=
          devices_[static_cast<size_t>(step.device)]->plugin_name())
        step.staging.resize(graph.value(step.copy_value).byte_size());
      continue;
    }
    for (ValueId v : graph.node(static_cast<NodeId>(step.copy_value)).inputs)
      if (is_static_[static_cast<size_t>(v)]) ensure_static(v, step.device);
  }
  for (size_t i = 0; i < state_.size(); ++i) {
    const ValueId in = graph.inputs()[state_[i].input];
    const int h = home_[static_cast<size_t>(in)];
    auto& slot = static_buffers_[static_cast<size_t>(h)][static_cast<size_t>(in)];
    slot = devices_[static_cast<size_t>(h)]->allocate(graph.value(in).byte_size());
    stats_.state_bytes += graph.value(in).byte_size();
    // Zeros until written.
    devices_[static_cast<size_t>(h)]->copy_to_device(
        *slot, 0, std::vector<std::byte>(graph.value(in).byte_size()));
  }
  for (size_t d = 0; d < devices_.size(); ++d)
    if (arena_peak_[d]) arenas_[d] = devices_[d]->allocate(arena_peak_[d]);

  // Values computed at load (16-bit weight Casts, say) reach kernel_prepare
  // as constant data, exactly like the graph's own weights, so a backend can
  // pre-pack them once instead of at every launch. Read back once each, and
  // dropped after the kernels are prepared.
  std::vector<std::vector<std::byte>> known(nv);
  for (Step& step : steps_) {
    if (step.copy_from >= 0) continue;
    const NodeId id = static_cast<NodeId>(step.copy_value);
    step.copy_value = kNone;
    const Node& n = graph.node(id);
    for (ValueId v : n.inputs) {
      const auto vi = static_cast<size_t>(v);
      if (!is_static_[vi] || graph.value(v).is_constant()) continue;
      ++stats_.load_time_constant_inputs;
      if (!known[vi].empty()) continue;
      known[vi].resize(graph.value(v).byte_size());
      const Location l = where(v, home_[vi]);
      devices_[static_cast<size_t>(home_[vi])]->copy_to_host(known[vi], *l.buffer, l.offset);
    }
    const LoweredNode lowered(graph, id, known);
    step.kernel = devices_[static_cast<size_t>(step.device)]->prepare(lowered.desc());
    step.node = id;
    for (ValueId v : n.inputs) step.inputs.push_back(view(v, step.device));
    for (ValueId v : n.outputs) step.outputs.push_back(view(v, step.device));
    ++stats_.kernels;
    ++stats_.kernels_per_device[static_cast<size_t>(step.device)];
  }
  for (const Step& step : steps_) step_info_.push_back(describe(step));
  spdlog::debug(
      "executor on {} device(s): {} kernels, {} folded at load, {} copies ({} B) per "
      "run, arenas {} B (no reuse {} B)",
      devices_.size(), stats_.kernels, stats_.folded_nodes, stats_.copies, stats_.copy_bytes,
      stats_.arena_bytes, stats_.no_reuse_bytes);
}

Executor::Location Executor::where(ValueId v, int d) const {
  if (const ValueId a = alias_of_[static_cast<size_t>(v)]; a != kNone) v = a;
  if (const auto& b = static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)])
    return {&*b, 0};
  const int64_t off = arena_offset_[static_cast<size_t>(d)][static_cast<size_t>(v)];
  if (off < 0 || !arenas_[static_cast<size_t>(d)])
    throw std::logic_error("executor: value '" + graph_.value(v).name + "' is not on device " +
                           devices_[static_cast<size_t>(d)]->id());
  return {&*arenas_[static_cast<size_t>(d)], static_cast<uint64_t>(off)};
}

ampx_buffer_view Executor::view(ValueId v, int d) const {
  const Location l = where(v, d);
  return make_view(l.buffer->handle(), l.offset);
}

void Executor::copy_value(ValueId v, int from, int to, std::vector<std::byte>& staging) const {
  const plugins::Device& src = *devices_[static_cast<size_t>(from)];
  const plugins::Device& dst = *devices_[static_cast<size_t>(to)];
  const Location s = where(v, from), t = where(v, to);
  const uint64_t bytes = graph_.value(v).byte_size();
  if (src.plugin_name() == dst.plugin_name()) {
    dst.copy_device_to_device(*t.buffer, t.offset, *s.buffer, s.offset, bytes);
    return;
  }
  // No shared path between two plugins: device -> host -> device.
  staging.resize(bytes);
  src.copy_to_host(staging, *s.buffer, s.offset);
  dst.copy_to_device(*t.buffer, t.offset, staging);
}

StepTiming Executor::describe(const Step& s) const {
  const auto typed = [&](ValueId v) {
    const Value& val = graph_.value(v);
    return std::string(dtype_name(val.type.dtype)) + shape_str(val.type.shape);
  };
  StepTiming t;
  t.device = s.device;
  if (s.copy_from >= 0) {
    t.name = graph_.value(s.copy_value).name;
    t.op = "Copy";
    t.copy_from = s.copy_from;
    t.dtype = dtype_name(graph_.value(s.copy_value).type.dtype);
    t.shapes = typed(s.copy_value);
    return t;
  }
  const Node& n = graph_.node(s.node);
  t.name = n.name;
  t.op = op_name(n.op);
  if (!n.outputs.empty()) t.dtype = dtype_name(graph_.value(n.outputs[0]).type.dtype);
  for (size_t i = 0; i < n.inputs.size(); ++i) t.shapes += (i ? ", " : "") + typed(n.inputs[i]);
  t.shapes += " ->";
  for (size_t i = 0; i < n.outputs.size(); ++i) t.shapes += (i ? ", " : " ") + typed(n.outputs[i]);
  return t;
}

void Executor::write_state(size_t i, std::span<const std::byte> bytes) {
  const ValueId v = graph_.inputs()[state_.at(i).input];
  const Value& val = graph_.value(v);
  if (bytes.size() != val.byte_size())
    throw std::invalid_argument("state '" + val.name + "': " + std::to_string(bytes.size()) +
                                " bytes, expected " + std::to_string(val.byte_size()));
  const int h = home_[static_cast<size_t>(v)];
  const Location l = where(v, h);
  devices_[static_cast<size_t>(h)]->copy_to_device(*l.buffer, l.offset, bytes);
  devices_[static_cast<size_t>(h)]->synchronize();
}

HostTensor Executor::read_state(size_t i) const {
  const ValueId v = graph_.inputs()[state_.at(i).input];
  const Value& val = graph_.value(v);
  HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
  const int h = home_[static_cast<size_t>(v)];
  const Location l = where(v, h);
  devices_[static_cast<size_t>(h)]->copy_to_host(t.data, *l.buffer, l.offset);
  return t;
}

void Executor::copy_state_back(size_t i) {
  const ValueId in = graph_.inputs()[state_[i].input];
  const ValueId out = graph_.outputs()[state_[i].output];
  const int from = home_[static_cast<size_t>(out)], to = home_[static_cast<size_t>(in)];
  const plugins::Device& src = *devices_[static_cast<size_t>(from)];
  const plugins::Device& dst = *devices_[static_cast<size_t>(to)];
  const Location s = where(out, from), t = where(in, to);
  const uint64_t bytes = graph_.value(in).byte_size();
  if (src.plugin_name() == dst.plugin_name()) {
    dst.copy_device_to_device(*t.buffer, t.offset, *s.buffer, s.offset, bytes);
  } else {
    std::vector<std::byte> staging(bytes);
    src.copy_to_host(staging, *s.buffer, s.offset);
    dst.copy_to_device(*t.buffer, t.offset, staging);
  }
  dst.synchronize();
}

std::vector<HostTensor> Executor::run(std::span<const HostTensor> inputs) {
  return run_steps(inputs, nullptr);
}

std::vector<HostTensor> Executor::run(std::span<const HostTensor> inputs, RunProfile& profile) {
  profile = {};
  profile.steps.reserve(steps_.size());
  return run_steps(inputs, &profile);
}

std::vector<HostTensor> Executor::run_steps(std::span<const HostTensor> inputs,
                                            RunProfile* profile) {
  // The plain path reads no clock for the profile (it only times copies).
  const auto run_start =
      profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const auto since_start = [&] {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - run_start)
        .count();
  };
  // The data inputs: every graph input but the state.
  std::vector<ValueId> graph_inputs;
  for (size_t i = 0; i < graph_.inputs().size(); ++i)
    if (!is_state_input_[i]) graph_inputs.push_back(graph_.inputs()[i]);
  if (inputs.size() != graph_inputs.size())
    throw std::invalid_argument("graph '" + graph_.name + "' takes " +
                                std::to_string(graph_inputs.size()) + " inputs, got " +
                                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& val = graph_.value(graph_inputs[i]);
    if (inputs[i].type != val.type || inputs[i].data.size() != val.byte_size())
      throw std::invalid_argument(
          "input '" + val.name + "': expected " + std::string(dtype_name(val.type.dtype)) +
          shape_str(val.type.shape) + ", got " + std::string(dtype_name(inputs[i].type.dtype)) +
          shape_str(inputs[i].type.shape));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueId v = graph_inputs[i];
    const int h = home_[static_cast<size_t>(v)];
    const Location l = where(v, h);
    devices_[static_cast<size_t>(h)]->copy_to_device(*l.buffer, l.offset, inputs[i].data);
  }
  // Work launched and not yet waited for, per device. A copy waits for its
  // source (the producer's results) and its destination (a kernel still
  // reading the arena bytes the copy is about to reuse).
  std::vector<bool> pending(devices_.size(), false);
  auto settle = [&](int d) {
    if (!pending[static_cast<size_t>(d)]) return;
    devices_[static_cast<size_t>(d)]->synchronize();
    pending[static_cast<size_t>(d)] = false;
  };
  double copy_us = 0;
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    if (s.copy_from < 0) {
      if (!profile) {
        s.kernel->launch(s.inputs, s.outputs);
        pending[static_cast<size_t>(s.device)] = true;
        continue;
      }
      StepTiming t = step_info_[i];
      t.start_us = since_start();
      const plugins::Kernel::Timing timing = s.kernel->launch_timed(s.inputs, s.outputs);
      t.us = timing.us;
      t.method = timing.method;
      // After the launch has finished: what it ran on, and what it reordered.
      if (const std::optional<plugins::Kernel::Report> r = s.kernel->report()) {
        t.implementation = r->implementation;
        t.reorders = r->reorders;
        t.reorder_us = r->reorder_us;
        t.casts = r->casts;
      }
      profile->steps.push_back(std::move(t));
      continue;
    }
    // Waiting for the producer is compute, not copy time.
    settle(s.copy_from);
    settle(s.device);
    const auto t0 = std::chrono::steady_clock::now();
    copy_value(s.copy_value, s.copy_from, s.device, s.staging);
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    copy_us += us;
    if (profile) {
      StepTiming t = step_info_[i];
      t.start_us = since_start() - us;
      t.us = us;  // a copy includes its synchronisation: always the host clock
      profile->steps.push_back(std::move(t));
    }
  }
  for (size_t d = 0; d < devices_.size(); ++d) settle(static_cast<int>(d));
  for (size_t i = 0; i < state_.size(); ++i)
    if (state_copy_back_[i]) copy_state_back(i);
  stats_.last_run_copy_us = copy_us;
  std::vector<HostTensor> outputs;
  for (size_t oi = 0; oi < graph_.outputs().size(); ++oi) {
    if (is_state_output_[oi]) continue;
    const ValueId v = graph_.outputs()[oi];
    const Value& val = graph_.value(v);
    HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
    int d = home_[static_cast<size_t>(v)];
    if (d < 0) {  // a constant output: any device that holds it
      d = 0;
      while (!static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)]) ++d;
    }
    const Location l = where(v, d);
    devices_[static_cast<size_t>(d)]->copy_to_host(t.data, *l.buffer, l.offset);
    outputs.push_back(std::move(t));
  }
  if (profile) profile->total_us = since_start();
  return outputs;
}

}  // namespace ampx
