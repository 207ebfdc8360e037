// The eager executor: runs an ExecutionPlan node by node, PyNative's way
// (execution_mode.hpp, kEager). At construction only the graph's weights
// are uploaded (once, to every device that reads them, like a framework's
// parameters) and the state buffers made. At every run each node, the
// load-time ones included, is lowered to its C description, its kernel
// prepared, its outputs given buffers of their own, launched and
// synchronised before the next; each copy step gets a buffer of its own
// too. No fusion, no arena, nothing prepared ahead: the plan's arena
// offsets, in-place state updates and load-time folding are not used. A
// run's buffers are freed when the run ends; a state output's buffer
// becomes its state's buffer for the next run (no copy).
#pragma once

#include <ampx/exec/plan_executor.hpp>
#include <ampx/plugins/buffer.hpp>

#include <optional>
#include <vector>

namespace ampx {

class EagerExecutor final : public PlanExecutor {
 public:
  // `plan` on `devices` (plan.devices, resolved). Checks the memory the
  // eager runs need (no arena: every node's outputs at once) first.
  EagerExecutor(ExecutionPlan plan, std::span<const plugins::Device* const> devices,
                const ExecutorOptions& options = {});
  EagerExecutor(const EagerExecutor&) = delete;
  EagerExecutor& operator=(const EagerExecutor&) = delete;

  using PlanExecutor::run;
  std::vector<HostTensor> run(std::span<const HostTensorView> inputs) override;
  std::vector<HostTensor> run(std::span<const HostTensorView> inputs, RunProfile& profile) override;
  const ExecutorStats& stats() const override { return stats_; }
  void write_state(size_t i, std::span<const std::byte> bytes) override;
  HostTensor read_state(size_t i) const override;
  int state_in_place() const override { return 0; }
  void set_exchange(std::span<const ExchangedValue> values, ValueExchange* exchange) override {
    exchange_ = ExchangeHooks(plan_, values, exchange, devices_);
  }
  const ExecutionPlan& plan() const { return plan_; }
  // What an eager run holds on each device: weights, state, and every
  // buffer of one run (ExecutorOptions::memory is checked against it).
  const std::vector<DeviceMemoryNeed>& memory_needs() const { return needs_; }

 private:
  struct Run;
  std::vector<HostTensor> run_nodes(std::span<const HostTensorView> inputs, RunProfile* profile);

  ExecutionPlan plan_;
  const Graph& graph_;
  std::vector<const plugins::Device*> devices_;
  std::vector<DeviceMemoryNeed> needs_;
  // Per device, by ValueId: the graph's constants that device reads.
  std::vector<std::vector<std::optional<plugins::Buffer>>> weights_;
  std::vector<std::optional<plugins::Buffer>> state_;  // per binding, on its input's home
  std::vector<bool> is_state_output_;                  // per graph output
  std::vector<int> state_of_input_;                    // by ValueId: its binding, -1
  ExecutorStats stats_;
  ExchangeHooks exchange_;
};

}  // namespace ampx
