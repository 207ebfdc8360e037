// The compiled executor: runs an ExecutionPlan (lower.hpp) as it was
// lowered. At construction: the plan's memory checked (memory_budget.hpp),
// then kernels prepared once, weights uploaded once to every device that
// reads them, the load-time nodes (the planner's weight Casts) evaluated
// once, intermediates placed at their offsets in one arena per device, and
// the copy steps given their staging. run() then only copies inputs in,
// launches kernels and copies in order, synchronises and copies outputs out.
// Fusion happens before lowering (fusion.hpp): this executor runs whatever
// graph it was lowered from.
#pragma once

#include <ampx/exec/execution_plan.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/exec/plan_executor.hpp>
#include <ampx/exec/run_profile.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/plugins/buffer.hpp>
#include <ampx/plugins/device.hpp>
#include <ampx/plugins/kernel.hpp>

#include <optional>
#include <span>
#include <vector>

namespace ampx {

class Executor final : public PlanExecutor {
 public:
  // `plan` on `devices` (plan.devices, resolved).
  Executor(ExecutionPlan plan, std::span<const plugins::Device* const> devices,
           const ExecutorOptions& options = {});
  // Lowers and runs: every node on `device` (Node::device is ignored).
  Executor(const Graph& graph, const plugins::Device& device,
           std::span<const StateBinding> state = {}, const ExecutorOptions& options = {});
  // Lowers and runs: Node::device indexes `devices` (a plan's device list,
  // resolved).
  Executor(const Graph& graph, std::span<const plugins::Device* const> devices,
           std::span<const StateBinding> state = {}, const ExecutorOptions& options = {});
  // What such an executor would hold on each device (by `devices` index),
  // worked out without calling a device: lower(...).needs.
  static std::vector<DeviceMemoryNeed> memory_needs(const Graph& graph,
                                                    std::span<const plugins::Device* const> devices,
                                                    std::span<const StateBinding> state = {});
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // State inputs stay on the device, each in one buffer of its own on the
  // device that reads it first. A state output produced in place
  // (ExecutionPlan::state_in_place) costs nothing; any other is copied into
  // its input's buffer at the end of the run.
  using PlanExecutor::run;
  std::vector<HostTensor> run(std::span<const HostTensorView> inputs) override;
  // The same run, profiled: every kernel and copy runs to completion before
  // the next and is timed (on the device where its plugin can, else on the
  // host clock) into `profile` (overwritten). The plain run() pays nothing
  // for this.
  std::vector<HostTensor> run(std::span<const HostTensorView> inputs, RunProfile& profile) override;
  const ExecutorStats& stats() const override { return stats_; }
  const ExecutionPlan& plan() const { return plan_; }

  void write_state(size_t i, std::span<const std::byte> bytes) override;
  HostTensor read_state(size_t i) const override;
  std::span<const StateBinding> state() const { return plan_.state; }
  int state_in_place() const override { return state_in_place_; }
  void set_exchange(std::span<const ExchangedValue> values, ValueExchange* exchange) override {
    exchange_ = ExchangeHooks(plan_, values, exchange, devices_);
  }

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
  // Allocations, weight uploads, load-time folding, kernels.
  void materialize();
  std::vector<HostTensor> run_steps(std::span<const HostTensorView> inputs, RunProfile* profile);
  Location where(ValueId v, int d) const;
  void copy_state_back(size_t binding);
  ampx_buffer_view view(ValueId v, int d) const;
  void copy_value(ValueId v, int from, int to, std::vector<std::byte>& staging) const;

  ExecutionPlan plan_;
  const Graph& graph_;
  std::vector<const plugins::Device*> devices_;
  // Per device, per value.
  std::vector<std::vector<std::optional<plugins::Buffer>>> static_buffers_;
  std::vector<std::optional<plugins::Buffer>> arenas_;
  std::vector<Step> steps_;
  std::vector<StepTiming> step_info_;  // per step, for profiles
  ExecutorStats stats_;
  std::vector<bool> is_state_input_, is_state_output_;  // per graph input / output
  int state_in_place_ = 0;
  ExchangeHooks exchange_;
};

}  // namespace ampx
