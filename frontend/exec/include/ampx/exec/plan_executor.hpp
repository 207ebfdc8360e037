// What both executors of an ExecutionPlan offer (execution_mode.hpp): the
// compiled one (executor.hpp) and the eager one (eager_executor.hpp), so a
// caller (a compiled model, the training step) holds either.
#pragma once

#include <ampx/exec/execution_mode.hpp>
#include <ampx/exec/execution_plan.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/exec/run_profile.hpp>
#include <ampx/exec/value_exchange.hpp>
#include <ampx/plugins/device.hpp>

#include <cstdint>
#include <memory>
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

struct ExecutorOptions {
  // Checked before anything is allocated (memory_budget.hpp): the plan's
  // memory against each device's and the host's, and against this limit;
  // MemoryError when it does not fit.
  MemoryLimit memory{};
};

class PlanExecutor {
 public:
  virtual ~PlanExecutor() = default;
  // Inputs in graph-input order, types exactly as declared, state inputs
  // left out. Outputs in graph-output order, named after the graph's output
  // values, state outputs left out (they become the state's next value).
  // The inputs are read in place (HostTensorView): the owning forms below
  // only make views of theirs.
  virtual std::vector<HostTensor> run(std::span<const HostTensorView> inputs) = 0;
  // The same run with every kernel and copy timed into `profile`.
  virtual std::vector<HostTensor> run(std::span<const HostTensorView> inputs,
                                      RunProfile& profile) = 0;
  std::vector<HostTensor> run(std::span<const HostTensor> inputs) { return run(views_of(inputs)); }
  std::vector<HostTensor> run(std::span<const HostTensor> inputs, RunProfile& profile) {
    return run(views_of(inputs), profile);
  }
  virtual const ExecutorStats& stats() const = 0;
  // State binding i's current value: written before the first run (state
  // starts as zeros), read back for checkpoints and exports.
  virtual void write_state(size_t i, std::span<const std::byte> bytes) = 0;
  virtual HostTensor read_state(size_t i) const = 0;
  // How many state outputs are updated in place (the rest are copied).
  virtual int state_in_place() const = 0;
  // Every later run hands `values` (of the executed graph,
  // ExecutionPlan::graph) to `exchange` between their producer and their
  // readers (value_exchange.hpp); a null exchange removes it. The
  // exchange must outlive those runs. Throws std::invalid_argument as
  // exchange_points() does.
  virtual void set_exchange(std::span<const ExchangedValue> values, ValueExchange* exchange) = 0;
};

// The executor of `mode` for `plan` on `devices` (plan.devices, resolved;
// they and plan.graph must outlive it). The compiled one checks memory and
// prepares everything here; the eager one uploads the weights only.
std::unique_ptr<PlanExecutor> make_executor(const ExecutionPlan& plan, ExecutionMode mode,
                                            std::span<const plugins::Device* const> devices,
                                            const ExecutorOptions& options = {});

}  // namespace ampx
