// The gradients the optimizer reads in a training step as it runs (after
// planning, the fused optimizer's lowering and fusion): what data-parallel
// training sums over the ranks (data_parallel.hpp).
#pragma once

#include <ampx/ir/graph.hpp>

#include <span>
#include <string>
#include <vector>

namespace ampx::train {

struct StepGradient {
  ValueId value = kNone;  // in the executed graph: an f32 operand of the guard
  std::string weight;     // the weight it is the gradient of (its state name)
  // The dtype the backward produced it in: a 16-bit type where a Cast
  // widens a 16-bit gradient for the optimizer, else f32.
  DType produced = DType::kF32;
};

// The gradient operands of `step`'s UpdateGuard, or of its fused
// MultiSgdUpdate / MultiAdamUpdate, in their operand order. The guard's
// operands are the gradients of the step's weights in state order
// (build_training_graph): `weight_order`, when given, names them so; else
// the update that reads each does (a sharded step has none for the weights
// other ranks own). Throws std::invalid_argument when the step has no such
// node, or more than one, or a gradient no name is found for.
std::vector<StepGradient> step_gradients(const Graph& step,
                                         std::span<const std::string> weight_order = {});

}  // namespace ampx::train
