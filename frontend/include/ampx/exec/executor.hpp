// Runs a planned graph on one device. At construction: kernels prepared once,
// weights uploaded once, nodes that depend only on weights (the planner's
// weight Casts) evaluated once, intermediates placed in one arena by the
// lifetime-based memory planner. run() then only copies inputs in, launches
// the kernels in order, synchronises and copies outputs out.
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/plugins/buffer.hpp>
#include <ampx/plugins/device.hpp>
#include <ampx/plugins/kernel.hpp>

#include <optional>
#include <span>
#include <vector>

namespace ampx {

struct ExecutorStats {
  uint64_t arena_bytes = 0;     // planned peak of inputs and intermediates
  uint64_t no_reuse_bytes = 0;  // what they would take without sharing
  uint64_t constant_bytes = 0;  // weights and values folded at load
  int kernels = 0;              // launched per run
  int folded_nodes = 0;         // evaluated once at load
};

class Executor {
 public:
  Executor(const Graph& graph, const plugins::Device& device);
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Inputs in graph-input order, types exactly as declared. Outputs in
  // graph-output order, named after the graph's output values.
  std::vector<HostTensor> run(std::span<const HostTensor> inputs);
  const ExecutorStats& stats() const { return stats_; }

 private:
  struct Step {
    plugins::Kernel kernel;
    std::vector<ampx_buffer_view> inputs;
    std::vector<ampx_buffer_view> outputs;
  };
  ampx_buffer_view view(ValueId v) const;

  const Graph& graph_;
  const plugins::Device& device_;
  std::vector<std::optional<plugins::Buffer>> static_buffers_;  // per value
  std::optional<plugins::Buffer> arena_;
  std::vector<uint64_t> arena_offset_;  // per value; valid when no static buffer
  std::vector<Step> steps_;
  ExecutorStats stats_;
};

}  // namespace ampx
