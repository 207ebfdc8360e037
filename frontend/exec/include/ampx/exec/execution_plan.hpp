// What a run of a placed graph does, decided before any device is touched
// (lower.hpp makes it): the steps in order (a kernel per run-time node, a
// copy before the first reader of a value on another device), each value's
// home, what is computed once at load, the state bindings and which of them
// are updated in place, each device's arena (lifetime-based offsets) and the
// memory each device needs. A value: print it (to_text, `ampx plan
// --lowered`), test it, then hand it to an executor (plan_executor.hpp):
// the compiled one follows all of it, the eager one its steps, homes and
// state only.
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/exec/run_profile.hpp>
#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace ampx {

// State that lives on the device between runs (training: master weights,
// optimizer moments, running statistics): graph input `input` holds it, and
// graph output `output` is its new value, which becomes the input's content
// for the next run. Indices into Graph::inputs() and Graph::outputs().
struct StateBinding {
  size_t input = 0;
  size_t output = 0;
};

// A device as lowering sees it: names only (two devices of one plugin copy
// directly, two plugins through host memory).
struct LoweringDevice {
  std::string id;      // "onednn:0"
  std::string plugin;  // "onednn"
};

// Run node `node` on devices[device].
struct KernelStep {
  NodeId node = kNone;
  int device = 0;
};

// Copy `value` from devices[from] to devices[to]; `staged`: two plugins,
// through host memory (ExecutionPlan::needs counts the staging).
struct CopyStep {
  ValueId value = kNone;
  int from = 0;
  int to = 0;
  bool staged = false;
};

using ExecutionStep = std::variant<KernelStep, CopyStep>;

struct ExecutionPlan {
  // The graph the steps index; it must outlive the plan and its executors.
  const Graph* graph = nullptr;
  std::vector<LoweringDevice> devices;
  std::vector<int> node_device;         // by NodeId: index into devices
  std::vector<int> home;                // by ValueId (Residency::home)
  std::vector<bool> known_at_load;      // by ValueId: constants and load-time results
  std::vector<NodeId> load_time_nodes;  // evaluated once at load, in order
  // Per device: the values known at load it holds (uploaded weights, and
  // values computed at load or copied there once), in first-use order.
  std::vector<std::vector<ValueId>> load_time_values;
  std::vector<ExecutionStep> steps;
  std::vector<StateBinding> state;
  // By binding: the state output is written in its input's buffer (an
  // update writing its own state input after every other reader of it, or
  // a state output that is its input: state the run only reads); false:
  // copied back after the run.
  std::vector<bool> state_in_place;
  std::vector<ValueId> alias_of;  // by ValueId: the state input whose buffer it is written in
  // Per device, by ValueId: the value's offset in the device's arena, -1
  // when not there (known at load, a state input, an alias, or absent).
  std::vector<std::vector<int64_t>> arena_offset;
  std::vector<uint64_t> arena_bytes;    // per device: the arena to allocate (0: none)
  uint64_t arena_peak_bytes = 0;        // all arenas' planned peaks
  uint64_t no_reuse_bytes = 0;          // all arenas' values without sharing
  std::vector<DeviceMemoryNeed> needs;  // per device: the memory check's figures

  int kernels() const;
  int copies() const;
  uint64_t copy_bytes() const;
};

// What a profile says of a step (name, op, devices, dtype, shapes).
StepTiming describe_step(const Graph& graph, const ExecutionStep& step);

// The graph inputs a run is given (all but the state), after checking
// `inputs` against them: count, dtypes and shapes exactly as declared.
std::vector<ValueId> checked_data_inputs(const ExecutionPlan& plan,
                                         std::span<const HostTensorView> inputs);

// An executor's first check: `devices` are as many as the plan was lowered
// for (std::invalid_argument otherwise).
void check_lowered_for(const ExecutionPlan& plan, std::span<const plugins::Device* const> devices);

// One line per step and the figures: `ampx plan --lowered`.
std::string to_text(const ExecutionPlan& plan);

}  // namespace ampx
