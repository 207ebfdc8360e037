#include <ampx/amp/node_desc.hpp>
#include <ampx/exec/eager_executor.hpp>
#include <ampx/exec/executor.hpp>

#include <chrono>
#include <stdexcept>

namespace ampx {

namespace {

double us_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

EagerExecutor::EagerExecutor(ExecutionPlan plan, std::span<const plugins::Device* const> devices,
                             const ExecutorOptions& options)
    : plan_(std::move(plan)), graph_(*plan_.graph), devices_(devices.begin(), devices.end()) {
  check_lowered_for(plan_, devices_);
  const Graph& g = graph_;
  const size_t nd = devices_.size(), nv = g.num_values();
  needs_.assign(nd, {});
  state_of_input_.assign(nv, -1);
  is_state_output_.assign(g.outputs().size(), false);
  for (size_t i = 0; i < plan_.state.size(); ++i) {
    const ValueId in = g.inputs()[plan_.state[i].input];
    state_of_input_[static_cast<size_t>(in)] = static_cast<int>(i);
    is_state_output_[plan_.state[i].output] = true;
    needs_[static_cast<size_t>(plan_.home[static_cast<size_t>(in)])].state_bytes +=
        g.value(in).byte_size();
  }
  // The memory of one run: weights once per reading device, and a buffer
  // for every data input, node output and copy, all live until the run ends.
  std::vector<std::vector<bool>> weight_on(nd, std::vector<bool>(nv, false));
  const auto node_memory = [&](NodeId id, int d) {
    for (ValueId v : g.node(id).inputs)
      if (g.value(v).is_constant() && !weight_on[static_cast<size_t>(d)][static_cast<size_t>(v)]) {
        weight_on[static_cast<size_t>(d)][static_cast<size_t>(v)] = true;
        needs_[static_cast<size_t>(d)].constant_bytes += g.value(v).byte_size();
      } else if (plan_.known_at_load[static_cast<size_t>(v)] && !g.value(v).is_constant() &&
                 plan_.home[static_cast<size_t>(v)] != d) {
        needs_[static_cast<size_t>(d)].arena_bytes += g.value(v).byte_size();  // fetched per run
      }
    for (ValueId v : g.node(id).outputs)
      needs_[static_cast<size_t>(d)].arena_bytes += g.value(v).byte_size();
  };
  for (NodeId id : plan_.load_time_nodes)
    node_memory(id, plan_.node_device[static_cast<size_t>(id)]);
  for (const ExecutionStep& s : plan_.steps) {
    if (const auto* c = std::get_if<CopyStep>(&s)) {
      needs_[static_cast<size_t>(c->to)].arena_bytes += g.value(c->value).byte_size();
      if (c->staged)
        needs_[static_cast<size_t>(c->to)].staging_bytes += g.value(c->value).byte_size();
      ++stats_.copies;
      stats_.copy_bytes += g.value(c->value).byte_size();
      continue;
    }
    node_memory(std::get<KernelStep>(s).node, std::get<KernelStep>(s).device);
  }
  std::vector<bool> is_state_input(g.inputs().size(), false);
  for (const StateBinding& b : plan_.state) is_state_input[b.input] = true;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    if (!is_state_input[i]) {
      const ValueId v = g.inputs()[i];
      needs_[static_cast<size_t>(plan_.home[static_cast<size_t>(v)])].arena_bytes +=
          g.value(v).byte_size();
    }
  check_memory(needs_, devices_, options.memory);

  // The weights, uploaded once; the state, zeros until written.
  weights_.resize(nd);
  for (auto& per_value : weights_) per_value.resize(nv);
  for (size_t d = 0; d < nd; ++d)
    for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v) {
      if (!weight_on[d][static_cast<size_t>(v)]) continue;
      auto& slot = weights_[d][static_cast<size_t>(v)];
      slot = devices_[d]->allocate(g.value(v).byte_size());
      devices_[d]->copy_to_device(*slot, 0, *g.value(v).constant);
      stats_.constant_bytes += g.value(v).byte_size();
    }
  for (size_t d = 0; d < nd; ++d) devices_[d]->synchronize();
  state_.resize(plan_.state.size());
  for (size_t i = 0; i < plan_.state.size(); ++i) {
    const ValueId in = g.inputs()[plan_.state[i].input];
    const plugins::Device& dev =
        *devices_[static_cast<size_t>(plan_.home[static_cast<size_t>(in)])];
    state_[i] = dev.allocate(g.value(in).byte_size());
    dev.copy_to_device(*state_[i], 0, std::vector<std::byte>(g.value(in).byte_size()));
    dev.synchronize();
    stats_.state_bytes += g.value(in).byte_size();
  }
  stats_.kernels_per_device.assign(nd, 0);
  for (NodeId id : plan_.load_time_nodes)
    ++stats_.kernels_per_device[static_cast<size_t>(plan_.node_device[static_cast<size_t>(id)])];
  for (const ExecutionStep& s : plan_.steps)
    if (const auto* k = std::get_if<KernelStep>(&s))
      ++stats_.kernels_per_device[static_cast<size_t>(k->device)];
  for (int n : stats_.kernels_per_device) stats_.kernels += n;
  // A run's buffers all live until it ends: its peak is their sum.
  for (const DeviceMemoryNeed& m : needs_) stats_.arena_bytes += m.arena_bytes;
  stats_.no_reuse_bytes = stats_.arena_bytes;
}

// One run's buffers: per device, by ValueId.
struct EagerExecutor::Run {
  std::vector<std::vector<std::optional<plugins::Buffer>>> live;
};

std::vector<HostTensor> EagerExecutor::run(std::span<const HostTensorView> inputs) {
  return run_nodes(inputs, nullptr);
}

std::vector<HostTensor> EagerExecutor::run(std::span<const HostTensorView> inputs,
                                           RunProfile& profile) {
  profile = {};
  return run_nodes(inputs, &profile);
}

std::vector<HostTensor> EagerExecutor::run_nodes(std::span<const HostTensorView> inputs,
                                                 RunProfile* profile) {
  const Graph& g = graph_;
  const std::vector<ValueId> data = checked_data_inputs(plan_, inputs);
  const auto run_start = std::chrono::steady_clock::now();
  Run r;
  r.live.resize(devices_.size());
  for (auto& per_value : r.live) per_value.resize(g.num_values());
  const auto dev = [&](int d) -> const plugins::Device& {
    return *devices_[static_cast<size_t>(d)];
  };
  // The buffer holding v on device d, or nullptr.
  const auto find = [&](ValueId v, int d) -> const plugins::Buffer* {
    const auto vi = static_cast<size_t>(v);
    if (const auto& b = r.live[static_cast<size_t>(d)][vi]) return &*b;
    if (const int s = state_of_input_[vi]; s >= 0 && plan_.home[vi] == d)
      return &*state_[static_cast<size_t>(s)];
    if (const auto& w = weights_[static_cast<size_t>(d)][vi]) return &*w;
    return nullptr;
  };
  double copy_us = 0;
  // A copy of v from device `from` into a new buffer on `to`.
  const auto copy = [&](ValueId v, int from, int to) -> const plugins::Buffer& {
    const auto t0 = std::chrono::steady_clock::now();
    const plugins::Buffer* src = find(v, from);
    if (!src)
      throw std::logic_error("eager executor: value '" + g.value(v).name + "' is not on device " +
                             dev(from).id());
    const uint64_t bytes = g.value(v).byte_size();
    auto& dst = r.live[static_cast<size_t>(to)][static_cast<size_t>(v)];
    dst = dev(to).allocate(bytes);
    dev(from).synchronize();
    if (dev(from).plugin_name() == dev(to).plugin_name()) {
      dev(to).copy_device_to_device(*dst, 0, *src, 0, bytes);
    } else {
      std::vector<std::byte> staging(bytes);
      dev(from).copy_to_host(staging, *src, 0);
      dev(to).copy_to_device(*dst, 0, staging);
    }
    dev(to).synchronize();
    copy_us += us_since(t0);
    if (profile) {
      StepTiming t = describe_step(g, CopyStep{v, from, to, false});
      t.us = us_since(t0);
      t.start_us = us_since(run_start) - t.us;
      profile->steps.push_back(std::move(t));
    }
    return *dst;
  };
  for (size_t i = 0; i < data.size(); ++i) {
    const int h = plan_.home[static_cast<size_t>(data[i])];
    auto& slot = r.live[static_cast<size_t>(h)][static_cast<size_t>(data[i])];
    slot = dev(h).allocate(inputs[i].data.size());
    dev(h).copy_to_device(*slot, 0, inputs[i].data);
  }
  // Node by node: lowered, prepared, given new output buffers, launched,
  // waited for.
  const auto launch = [&](NodeId id, int d) {
    const Node& n = g.node(id);
    std::vector<ampx_buffer_view> ins, outs;
    for (ValueId v : n.inputs) {
      const plugins::Buffer* b = find(v, d);
      // A value computed at load in the compiled plan, read on another
      // device: eager fetches it when it is read.
      if (!b) b = &copy(v, plan_.home[static_cast<size_t>(v)], d);
      ins.push_back(b->view());
    }
    for (ValueId v : n.outputs) {
      auto& slot = r.live[static_cast<size_t>(d)][static_cast<size_t>(v)];
      slot = dev(d).allocate(g.value(v).byte_size());
      outs.push_back(slot->view());
    }
    const LoweredNode lowered(g, id);
    plugins::Kernel kernel = dev(d).prepare(lowered.desc());
    if (!profile) {
      kernel.launch(ins, outs);
      dev(d).synchronize();
      return;
    }
    StepTiming t = describe_step(g, KernelStep{id, d});
    t.start_us = us_since(run_start);
    const plugins::Kernel::Timing timing = kernel.launch_timed(ins, outs);
    t.us = timing.us;
    t.method = timing.method;
    if (const std::optional<plugins::Kernel::Report> rep = kernel.report()) {
      t.implementation = rep->implementation;
      t.reorders = rep->reorders;
      t.reorder_us = rep->reorder_us;
      t.casts = rep->casts;
    }
    profile->steps.push_back(std::move(t));
  };
  for (NodeId id : plan_.load_time_nodes) launch(id, plan_.node_device[static_cast<size_t>(id)]);
  // The exchange's side of a value: its buffer on its home device (every
  // launch has been waited for).
  const auto exchanged = [&](ValueId v) {
    const int h = plan_.home[static_cast<size_t>(v)];
    return std::pair{h, find(v, h)};
  };
  const auto exchange_to_host = [&](ValueId v, std::span<std::byte> bytes) {
    const auto [h, b] = exchanged(v);
    dev(h).copy_to_host(bytes, *b, 0);
  };
  const auto exchange_to_device = [&](ValueId v, std::span<const std::byte> bytes) {
    const auto [h, b] = exchanged(v);
    dev(h).copy_to_device(*b, 0, bytes);
    dev(h).synchronize();
  };
  const auto exchange_slot = [&](ValueId v) {
    const auto [h, b] = exchanged(v);
    return DeviceSlot{&dev(h), b, 0, g.value(v).byte_size()};
  };
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const ExecutionStep& s = plan_.steps[i];
    exchange_.before_step(i, exchange_to_device, exchange_slot);
    if (const auto* c = std::get_if<CopyStep>(&s)) {
      copy(c->value, c->from, c->to);
      continue;
    }
    launch(std::get<KernelStep>(s).node, std::get<KernelStep>(s).device);
    exchange_.after_step(i, exchange_to_host, exchange_slot);
  }
  stats_.last_run_copy_us = copy_us;

  std::vector<HostTensor> outputs;
  for (size_t oi = 0; oi < g.outputs().size(); ++oi) {
    if (is_state_output_[oi]) continue;
    const ValueId v = g.outputs()[oi];
    const Value& val = g.value(v);
    HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
    int d = plan_.home[static_cast<size_t>(v)];
    if (d < 0) d = 0;  // a constant output
    const plugins::Buffer* b = find(v, d);
    if (!b && val.is_constant()) {
      outputs.push_back({val.name, val.type, *val.constant});
      continue;
    }
    if (!b) throw std::logic_error("eager executor: output '" + val.name + "' was not computed");
    dev(d).copy_to_host(t.data, *b, 0);
    outputs.push_back(std::move(t));
  }
  // Each state output's buffer becomes its state's next buffer: moved when
  // the run made it on the state's device, else copied into a new one.
  std::vector<std::optional<plugins::Buffer>> next(plan_.state.size());
  for (size_t i = 0; i < plan_.state.size(); ++i) {
    const ValueId in = g.inputs()[plan_.state[i].input];
    const ValueId out = g.outputs()[plan_.state[i].output];
    const int h = plan_.home[static_cast<size_t>(in)];
    if (out == in) {  // state the run reads and leaves as it was
      next[i] = std::move(state_[i]);
      continue;
    }
    auto& made = r.live[static_cast<size_t>(h)][static_cast<size_t>(out)];
    if (made) {
      next[i] = std::move(made);
      continue;
    }
    int from = plan_.home[static_cast<size_t>(out)];
    if (from < 0) from = h;
    const plugins::Buffer* src = find(out, from);
    if (!src && g.value(out).is_constant()) {
      next[i] = dev(h).allocate(g.value(in).byte_size());
      dev(h).copy_to_device(*next[i], 0, *g.value(out).constant);
      continue;
    }
    if (!src) {
      // Moved to another binding already (one value, two state outputs).
      for (size_t j = 0; j < i && !src; ++j)
        if (g.outputs()[plan_.state[j].output] == out) src = &*next[j], from = h;
    }
    if (!src) throw std::logic_error("eager executor: state output '" + g.value(out).name + "'");
    next[i] = dev(h).allocate(g.value(in).byte_size());
    dev(from).synchronize();
    if (dev(from).plugin_name() == dev(h).plugin_name()) {
      dev(h).copy_device_to_device(*next[i], 0, *src, 0, g.value(in).byte_size());
    } else {
      std::vector<std::byte> staging(g.value(in).byte_size());
      dev(from).copy_to_host(staging, *src, 0);
      dev(h).copy_to_device(*next[i], 0, staging);
    }
    dev(h).synchronize();
  }
  for (size_t i = 0; i < next.size(); ++i) state_[i] = std::move(next[i]);
  if (profile) profile->total_us = us_since(run_start);
  return outputs;
}

void EagerExecutor::write_state(size_t i, std::span<const std::byte> bytes) {
  const ValueId v = graph_.inputs()[plan_.state.at(i).input];
  const Value& val = graph_.value(v);
  if (bytes.size() != val.byte_size())
    throw std::invalid_argument("state '" + val.name + "': " + std::to_string(bytes.size()) +
                                " bytes, expected " + std::to_string(val.byte_size()));
  const plugins::Device& dev = *devices_[static_cast<size_t>(plan_.home[static_cast<size_t>(v)])];
  dev.copy_to_device(*state_[i], 0, bytes);
  dev.synchronize();
}

HostTensor EagerExecutor::read_state(size_t i) const {
  const ValueId v = graph_.inputs()[plan_.state.at(i).input];
  const Value& val = graph_.value(v);
  HostTensor t{val.name, val.type, std::vector<std::byte>(val.byte_size())};
  devices_[static_cast<size_t>(plan_.home[static_cast<size_t>(v)])]->copy_to_host(t.data,
                                                                                  *state_[i], 0);
  return t;
}

std::unique_ptr<PlanExecutor> make_executor(const ExecutionPlan& plan, ExecutionMode mode,
                                            std::span<const plugins::Device* const> devices,
                                            const ExecutorOptions& options) {
  if (mode == ExecutionMode::kEager) return std::make_unique<EagerExecutor>(plan, devices, options);
  return std::make_unique<Executor>(plan, devices, options);
}

}  // namespace ampx
