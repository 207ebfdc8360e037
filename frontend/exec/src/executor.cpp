#include <ampx/amp/node_desc.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/lower.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <stdexcept>

namespace ampx {

Executor::Executor(ExecutionPlan plan, std::span<const plugins::Device* const> devices,
                   const ExecutorOptions& options)
    : plan_(std::move(plan)), graph_(*plan_.graph), devices_(devices.begin(), devices.end()) {
  check_lowered_for(plan_, devices_);
  check_memory(plan_.needs, devices_, options.memory);
  materialize();
}

Executor::Executor(const Graph& graph, const plugins::Device& device,
                   std::span<const StateBinding> state, const ExecutorOptions& options)
    : Executor(lower(graph, std::array{LoweringDevice{device.id(), device.plugin_name()}},
                     {.state = state, .placement = NodePlacement::kAllOnFirst}),
               std::array<const plugins::Device*, 1>{&device}, options) {}

Executor::Executor(const Graph& graph, std::span<const plugins::Device* const> devices,
                   std::span<const StateBinding> state, const ExecutorOptions& options)
    : Executor(lower(graph, lowering_devices(devices), {.state = state}), devices, options) {}

std::vector<DeviceMemoryNeed> Executor::memory_needs(
    const Graph& graph, std::span<const plugins::Device* const> devices,
    std::span<const StateBinding> state) {
  return lower(graph, lowering_devices(devices),
               {.state = state,
                .placement =
                    devices.size() == 1 ? NodePlacement::kAllOnFirst : NodePlacement::kFromNodes})
      .needs;
}

void Executor::materialize() {
  const Graph& graph = graph_;
  const size_t nv = graph.num_values();
  const size_t nd = devices_.size();
  const auto& home = plan_.home;
  const auto& is_static = plan_.known_at_load;
  static_buffers_.resize(nd);
  for (auto& per_value : static_buffers_) per_value.resize(nv);
  arenas_.resize(nd);
  stats_.kernels_per_device.assign(nd, 0);
  stats_.arena_bytes = plan_.arena_peak_bytes;
  stats_.no_reuse_bytes = plan_.no_reuse_bytes;
  is_state_input_.assign(graph.inputs().size(), false);
  is_state_output_.assign(graph.outputs().size(), false);
  for (size_t i = 0; i < plan_.state.size(); ++i) {
    is_state_input_[plan_.state[i].input] = is_state_output_[plan_.state[i].output] = true;
    state_in_place_ += plan_.state_in_place[i] ? 1 : 0;
  }
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
    copy_value(v, home[static_cast<size_t>(v)], d, load_staging);
  };
  for (NodeId id : plan_.load_time_nodes) {
    const Node& n = graph.node(id);
    const int d = plan_.node_device[static_cast<size_t>(id)];
    const plugins::Device& device = *devices_[static_cast<size_t>(d)];
    const LoweredNode lowered(graph, id);
    plugins::Kernel kernel = device.prepare(lowered.desc());
    std::vector<ampx_buffer_view> ins, outs;
    for (ValueId v : n.inputs) {
      ensure_static(v, d);
      ins.push_back(static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)]->view());
    }
    for (ValueId v : n.outputs) {
      plugins::Buffer buf = device.allocate(graph.value(v).byte_size());
      outs.push_back(buf.view());
      stats_.constant_bytes += graph.value(v).byte_size();
      static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)] = std::move(buf);
    }
    kernel.launch(ins, outs);
    device.synchronize();
    ++stats_.folded_nodes;
  }
  for (const ExecutionStep& es : plan_.steps) {
    Step step;
    if (const auto* c = std::get_if<CopyStep>(&es)) {
      step.device = c->to;
      step.copy_value = c->value;
      step.copy_from = c->from;
      if (c->staged) step.staging.resize(graph.value(c->value).byte_size());
      ++stats_.copies;
      stats_.copy_bytes += graph.value(c->value).byte_size();
    } else {
      const KernelStep& k = std::get<KernelStep>(es);
      step.device = k.device;
      step.node = k.node;
      for (ValueId v : graph.node(k.node).inputs)
        if (is_static[static_cast<size_t>(v)]) ensure_static(v, step.device);
    }
    steps_.push_back(std::move(step));
  }
  for (const StateBinding& b : plan_.state) {
    const ValueId in = graph.inputs()[b.input];
    const int h = home[static_cast<size_t>(in)];
    auto& slot = static_buffers_[static_cast<size_t>(h)][static_cast<size_t>(in)];
    slot = devices_[static_cast<size_t>(h)]->allocate(graph.value(in).byte_size());
    stats_.state_bytes += graph.value(in).byte_size();
    // Zeros until written.
    devices_[static_cast<size_t>(h)]->copy_to_device(
        *slot, 0, std::vector<std::byte>(graph.value(in).byte_size()));
  }
  for (size_t d = 0; d < nd; ++d)
    if (plan_.arena_bytes[d]) arenas_[d] = devices_[d]->allocate(plan_.arena_bytes[d]);

  // Values computed at load (16-bit weight Casts, say) reach kernel_prepare
  // as constant data, exactly like the graph's own weights, so a backend can
  // pre-pack them once instead of at every launch. Read back once each, and
  // dropped after the kernels are prepared.
  std::vector<std::vector<std::byte>> known(nv);
  for (Step& step : steps_) {
    if (step.copy_from >= 0) continue;
    const NodeId id = step.node;
    const Node& n = graph.node(id);
    for (ValueId v : n.inputs) {
      const auto vi = static_cast<size_t>(v);
      if (!is_static[vi] || graph.value(v).is_constant()) continue;
      ++stats_.load_time_constant_inputs;
      if (!known[vi].empty()) continue;
      known[vi].resize(graph.value(v).byte_size());
      const Location l = where(v, home[vi]);
      devices_[static_cast<size_t>(home[vi])]->copy_to_host(known[vi], *l.buffer, l.offset);
    }
    const LoweredNode lowered(graph, id, known);
    step.kernel = devices_[static_cast<size_t>(step.device)]->prepare(lowered.desc());
    for (ValueId v : n.inputs) step.inputs.push_back(view(v, step.device));
    for (ValueId v : n.outputs) step.outputs.push_back(view(v, step.device));
    ++stats_.kernels;
    ++stats_.kernels_per_device[static_cast<size_t>(step.device)];
  }
  for (const ExecutionStep& es : plan_.steps) step_info_.push_back(describe_step(graph, es));
  spdlog::debug(
      "executor on {} device(s): {} kernels, {} folded at load, {} copies ({} B) per "
      "run, arenas {} B (no reuse {} B)",
      devices_.size(), stats_.kernels, stats_.folded_nodes, stats_.copies, stats_.copy_bytes,
      stats_.arena_bytes, stats_.no_reuse_bytes);
}

Executor::Location Executor::where(ValueId v, int d) const {
  if (const ValueId a = plan_.alias_of[static_cast<size_t>(v)]; a != kNone) v = a;
  if (const auto& b = static_buffers_[static_cast<size_t>(d)][static_cast<size_t>(v)])
    return {&*b, 0};
  const int64_t off = plan_.arena_offset[static_cast<size_t>(d)][static_cast<size_t>(v)];
  if (off < 0 || !arenas_[static_cast<size_t>(d)])
    throw std::logic_error("executor: value '" + graph_.value(v).name + "' is not on device " +
                           devices_[static_cast<size_t>(d)]->id());
  return {&*arenas_[static_cast<size_t>(d)], static_cast<uint64_t>(off)};
}

ampx_buffer_view Executor::view(ValueId v, int d) const {
  const Location l = where(v, d);
  return l.buffer->view(l.offset);
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

void Executor::write_state(size_t i, std::span<const std::byte> bytes) {
  const ValueId v = graph_.inputs()[plan_.state.at(i).input];
  const Value& val = graph_.value(v);
  if (bytes.size() != val.byte_size())
    throw std::invalid_argument("state '" + val.name + "': " + std::to_string(bytes.size()) +
                                " bytes, expected " + std::to_string(val.byte_size()));
  const int h = plan_.home[static_cast<size_t>(v)];
  const Location l = where(v, h);
  devices_[static_cast<size_t>(h)]->copy_to_device(*l.buffer, l.offset, bytes);
  devices_[static_cast<size_t>(h)]->synchronize();
}

HostTensor Executor::read_state(size_t i) const {
  const ValueId v = graph_.inputs()[plan_.state.at(i).input];
  const Value& val = graph_.value(v);
  HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
  const int h = plan_.home[static_cast<size_t>(v)];
  const Location l = where(v, h);
  devices_[static_cast<size_t>(h)]->copy_to_host(t.data, *l.buffer, l.offset);
  return t;
}

void Executor::copy_state_back(size_t i) {
  const ValueId in = graph_.inputs()[plan_.state[i].input];
  const ValueId out = graph_.outputs()[plan_.state[i].output];
  const int from = plan_.home[static_cast<size_t>(out)], to = plan_.home[static_cast<size_t>(in)];
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

std::vector<HostTensor> Executor::run(std::span<const HostTensorView> inputs) {
  return run_steps(inputs, nullptr);
}

std::vector<HostTensor> Executor::run(std::span<const HostTensorView> inputs, RunProfile& profile) {
  profile = {};
  profile.steps.reserve(steps_.size());
  return run_steps(inputs, &profile);
}

std::vector<HostTensor> Executor::run_steps(std::span<const HostTensorView> inputs,
                                            RunProfile* profile) {
  // The plain path reads no clock for the profile (it only times copies).
  const auto run_start =
      profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  const auto since_start = [&] {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - run_start)
        .count();
  };
  const std::vector<ValueId> graph_inputs = checked_data_inputs(plan_, inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueId v = graph_inputs[i];
    const int h = plan_.home[static_cast<size_t>(v)];
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
  // The exchange's side of a value: on its home device, after whatever
  // launched there has finished.
  const auto exchange_to_host = [&](ValueId v, std::span<std::byte> bytes) {
    const int h = plan_.home[static_cast<size_t>(v)];
    settle(h);
    const Location l = where(v, h);
    devices_[static_cast<size_t>(h)]->copy_to_host(bytes, *l.buffer, l.offset);
  };
  const auto exchange_to_device = [&](ValueId v, std::span<const std::byte> bytes) {
    const int h = plan_.home[static_cast<size_t>(v)];
    settle(h);
    const Location l = where(v, h);
    devices_[static_cast<size_t>(h)]->copy_to_device(*l.buffer, l.offset, bytes);
  };
  // The device path: where the value is, nothing waited for (the exchange
  // works in the device's order).
  const auto exchange_slot = [&](ValueId v) {
    const int h = plan_.home[static_cast<size_t>(v)];
    const Location l = where(v, h);
    return DeviceSlot{devices_[static_cast<size_t>(h)], l.buffer, l.offset,
                      graph_.value(v).byte_size()};
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = steps_[i];
    exchange_.before_step(i, exchange_to_device, exchange_slot);
    if (s.copy_from < 0) {
      if (!profile) {
        s.kernel->launch(s.inputs, s.outputs);
        pending[static_cast<size_t>(s.device)] = true;
        exchange_.after_step(i, exchange_to_host, exchange_slot);
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
      exchange_.after_step(i, exchange_to_host, exchange_slot);
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
  for (size_t i = 0; i < plan_.state.size(); ++i)
    if (!plan_.state_in_place[i]) copy_state_back(i);
  stats_.last_run_copy_us = copy_us;
  std::vector<HostTensor> outputs;
  for (size_t oi = 0; oi < graph_.outputs().size(); ++oi) {
    if (is_state_output_[oi]) continue;
    const ValueId v = graph_.outputs()[oi];
    const Value& val = graph_.value(v);
    HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
    int d = plan_.home[static_cast<size_t>(v)];
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
