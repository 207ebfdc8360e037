// Runs a planned graph on its devices. At construction: the plan laid out
// without a device call and its memory checked (memory_budget.hpp), then
// kernels prepared once, weights uploaded once to every device that reads
// them, nodes that depend only on weights (the planner's weight Casts)
// evaluated once,
// intermediates placed in one arena per device by the lifetime-based memory
// planner, and a copy step put before the first reader of every value that
// crosses devices (the rule of plan_copies(): one per value and destination
// device, shared by every consumer there). run() then only copies inputs
// in, launches kernels and copies in order, synchronises and copies outputs
// out.
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/exec/run_profile.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/plugins/buffer.hpp>
#include <ampx/plugins/device.hpp>
#include <ampx/plugins/kernel.hpp>

#include <optional>
#include <span>
#include <vector>

namespace ampx {

struct ExecutorStats {
  uint64_t arena_bytes = 0;     // planned peak of inputs and intermediates, all devices
  uint64_t no_reuse_bytes = 0;  // what they would take without sharing
  uint64_t constant_bytes = 0;  // weights and values folded at load, all devices
  uint64_t state_bytes = 0;     // state kept between runs (StateBinding), all devices
  int kernels = 0;              // launched per run
  int folded_nodes = 0;         // evaluated once at load
  // Kernel inputs computed at load (16-bit weight Casts) handed to
  // kernel_prepare as constant data, like the graph's own weights.
  int load_time_constant_inputs = 0;
  std::vector<int> kernels_per_device;
  int copies = 0;               // between devices, per run
  uint64_t copy_bytes = 0;      // per run
  double last_run_copy_us = 0;  // wall time of the last run's copies, synchronisation included
};

// State that lives on the device between runs (training: master weights,
// optimizer moments, running statistics): graph input `input` holds it, and
// graph output `output` is its new value, which becomes the input's content
// for the next run. Indices into Graph::inputs() and Graph::outputs().
struct StateBinding {
  size_t input = 0;
  size_t output = 0;
};

struct ExecutorOptions {
  // Checked before anything is allocated (memory_budget.hpp): the plan's
  // memory against each device's and the host's, and against this limit;
  // MemoryError when it does not fit.
  MemoryLimit memory{};
};

class Executor {
 public:
  // Every node on `device` (Node::device is ignored).
  Executor(const Graph& graph, const plugins::Device& device,
           std::span<const StateBinding> state = {}, const ExecutorOptions& options = {});
  // Node::device indexes `devices` (a plan's device list, resolved).
  Executor(const Graph& graph, std::span<const plugins::Device* const> devices,
           std::span<const StateBinding> state = {}, const ExecutorOptions& options = {});
  // What such an executor would hold on each device (by `devices` index),
  // worked out without calling a device: the memory check's figures.
  static std::vector<DeviceMemoryNeed> memory_needs(const Graph& graph,
                                                    std::span<const plugins::Device* const> devices,
                                                    std::span<const StateBinding> state = {});
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Inputs in graph-input order, types exactly as declared. Outputs in
  // graph-output order, named after the graph's output values. State
  // inputs and outputs are left out of both: they stay on the device, each
  // state input in one buffer of its own on the device that reads it first.
  // A state output produced in place (an optimizer update writing the
  // buffer of its own state input, after every other reader of it has run)
  // costs nothing; any other is copied into its input's buffer at the end
  // of the run.
  std::vector<HostTensor> run(std::span<const HostTensor> inputs);
  // The same run, profiled: every kernel and copy runs to completion before
  // the next and is timed (on the device where its plugin can, else on the
  // host clock) into `profile` (overwritten). The plain run() pays nothing
  // for this.
  std::vector<HostTensor> run(std::span<const HostTensor> inputs, RunProfile& profile);
  const ExecutorStats& stats() const { return stats_; }

  // State binding i's current value: written before the first run (state
  // starts as zeros), read back for checkpoints and exports.
  void write_state(size_t i, std::span<const std::byte> bytes);
  HostTensor read_state(size_t i) const;
  std::span<const StateBinding> state() const { return state_; }
  // How many state outputs are updated in place (the rest are copied).
  int state_in_place() const { return state_in_place_; }

 private:
  struct Step {
    int device = 0;  // kernel: where it runs; copy: destination
    std::optional<plugins::Kernel> kernel;
    std::vector<ampx_buffer_view> inputs;
    std::vector<ampx_buffer_view> outputs;
    ValueId copy_value = kNone;  // a copy step: this value from `copy_from`
    int copy_from = -1;
    std::vector<std::byte> staging;  // host hop between two plugins
    NodeId node = kNone;             // a kernel step: its node
  };
  // Where value v lives on device d: a static buffer or an arena offset.
  struct Location {
    const plugins::Buffer* buffer = nullptr;
    uint64_t offset = 0;
  };
  enum class NodeDevices { kFromNodes, kAllOnFirst };
  struct LayoutOnly {};
  Executor(LayoutOnly, const Graph& graph, std::span<const StateBinding> state);
  // Where everything goes, without a device call: homes, steps, state
  // aliasing, the arena plans and the memory each device needs.
  void layout(std::span<const plugins::Device* const> devices, NodeDevices node_devices);
  // Allocations, weight uploads, load-time folding, kernels.
  void materialize();
  int device_of(const Node& n) const;
  std::vector<HostTensor> run_steps(std::span<const HostTensor> inputs, RunProfile* profile);
  // What a profile says of step s (name, op, devices, dtype, shapes).
  StepTiming describe(const Step& s) const;
  Location where(ValueId v, int d) const;
  void copy_state_back(size_t binding);
  ampx_buffer_view view(ValueId v, int d) const;
  void copy_value(ValueId v, int from, int to, std::vector<std::byte>& staging) const;

  const Graph& graph_;
  std::vector<const plugins::Device*> devices_;
  NodeDevices node_devices_ = NodeDevices::kFromNodes;
  std::vector<int> home_;                // per value: the device it is produced (or first read) on
  std::vector<bool> is_static_;          // per value: known at load (weights, folded)
  std::vector<NodeId> folded_nodes_;     // evaluated once at load, in order
  std::vector<NodeId> dynamic_nodes_;    // one kernel step each, in order
  std::vector<DeviceMemoryNeed> needs_;  // per device
  std::vector<uint64_t> arena_peak_;     // per device; 0: no arena
  // Per device, per value.
  std::vector<std::vector<std::optional<plugins::Buffer>>> static_buffers_;
  std::vector<std::vector<int64_t>> arena_offset_;  // -1: not in that device's arena
  std::vector<std::optional<plugins::Buffer>> arenas_;
  std::vector<Step> steps_;
  std::vector<StepTiming> step_info_;  // per step, for profiles
  ExecutorStats stats_;
  std::vector<StateBinding> state_;
  std::vector<bool> is_state_input_, is_state_output_;  // per graph input / output
  // Per binding: copy the output into the input's buffer after a run.
  std::vector<bool> state_copy_back_;
  int state_in_place_ = 0;
  std::vector<ValueId> alias_of_;  // per value: the state input whose buffer it is written in
};

}  // namespace ampx
