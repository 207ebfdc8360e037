// PyNative-style ("eager") execution of a plan, the baseline graph mode is
// measured against (`ampx train --eager`, docs/TRAINING.md): every run
// dispatches the plan node by node. Each node is lowered and its kernel
// prepared on its device at every run, its outputs get buffers of their
// own, it is launched and waited for, and buffers are freed after their
// last reader. No fusion, no memory planning, no folding at load: only the
// weights are uploaded once, as a framework's parameters are. The plan, and
// so every node's precision and device, is the one the compiled executor
// runs, so both compute the same numbers.
#pragma once

#include <ampx/exec/executor.hpp>

#include <optional>
#include <span>
#include <vector>

namespace ampx {

class EagerExecutor {
 public:
  // As Executor's: Node::device indexes `devices`; `state` as StateBinding.
  EagerExecutor(const Graph& graph, std::span<const plugins::Device* const> devices,
                std::span<const StateBinding> state = {});
  EagerExecutor(const EagerExecutor&) = delete;
  EagerExecutor& operator=(const EagerExecutor&) = delete;

  // As Executor::run: the data inputs in, the outputs that are not state out.
  std::vector<HostTensor> run(std::span<const HostTensor> inputs);
  void write_state(size_t i, std::span<const std::byte> bytes);
  HostTensor read_state(size_t i) const;
  // Kernels prepared by the last run (one per node).
  int last_run_kernels() const { return last_run_kernels_; }

 private:
  // Value v's buffer on device d (uploading or copying it there if needed).
  const plugins::Buffer& on_device(ValueId v, int d,
                                   std::vector<std::optional<plugins::Buffer>>& live,
                                   std::vector<int>& where);

  const Graph& graph_;
  std::vector<const plugins::Device*> devices_;
  std::vector<StateBinding> state_;
  std::vector<bool> is_state_input_, is_state_output_;
  // Weights, per device and value, uploaded once; state, on its home device.
  std::vector<std::vector<std::optional<plugins::Buffer>>> constants_;
  std::vector<std::optional<plugins::Buffer>> state_buffers_;  // per binding
  std::vector<int> state_home_;
  std::vector<int> device_of_;  // per node
  int last_run_kernels_ = 0;
};

}  // namespace ampx
