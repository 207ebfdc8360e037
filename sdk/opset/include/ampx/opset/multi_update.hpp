// The operand layout of the fused optimizer ops MultiSgdUpdate and
// MultiAdamUpdate (docs/OPS.md, "Training ops"): one node updates n
// weights, their optimizer state and k 16-bit working copies, with
// UpdateGuard's check in the same node. The output-type rule, the
// reference kernel, the executor's in-place rule and the training step's
// lowering all index operands through this one definition.
//
//   inputs:  hyper, W[0..n), G[0..n), S_0[0..n), ..., C[0..k)
//   outputs: hyper', stats [2], W'[0..n), S'_0[0..n), ..., C'[0..k)
//
// S are the per-weight states (SGD with momentum: M; Adam: M then V), C the
// 16-bit copies, copy j of weight copies[j] (the `copies` attribute).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace ampx::opset {

struct MultiUpdateLayout {
  size_t weights = 0;  // n >= 1
  size_t states = 0;   // per weight: 0, 1 (SGD momentum) or 2 (Adam M, V)
  size_t copies = 0;   // k

  size_t num_inputs() const { return 1 + (2 + states) * weights + copies; }
  size_t num_outputs() const { return 2 + (1 + states) * weights + copies; }
  size_t w_in(size_t i) const { return 1 + i; }
  size_t g_in(size_t i) const { return 1 + weights + i; }
  size_t state_in(size_t s, size_t i) const { return 1 + (2 + s) * weights + i; }
  size_t copy_in(size_t j) const { return 1 + (2 + states) * weights + j; }
  size_t w_out(size_t i) const { return 2 + i; }
  size_t state_out(size_t s, size_t i) const { return 2 + (1 + s) * weights + i; }
  size_t copy_out(size_t j) const { return 2 + (1 + states) * weights + j; }

  // The input whose buffer output `out` may be written in (docs/OPS.md,
  // "In place": W' in W, each state in its state, each copy in its copy);
  // -1 for hyper', stats and anything out of range.
  int in_place_input(size_t out) const {
    if (out < 2 || out >= num_outputs()) return -1;
    // Past W' every output lies one block of n (the gradients) further on
    // among the inputs than among the outputs, less the two guard outputs.
    return static_cast<int>(out < w_out(weights) ? out - 1 : out - 1 + weights);
  }
};

// True for MultiSgdUpdate and MultiAdamUpdate.
inline bool is_multi_update(std::string_view op) {
  return op == "MultiSgdUpdate" || op == "MultiAdamUpdate";
}

// The layout of a node with `num_inputs` inputs and `copies` copies;
// `momentum` says whether an SGD node has momentum (> 0). nullopt when the
// op is not a multi-tensor update or the count does not divide into whole
// weights.
inline std::optional<MultiUpdateLayout> multi_update_layout(std::string_view op, size_t num_inputs,
                                                            bool momentum, size_t copies) {
  if (!is_multi_update(op)) return std::nullopt;
  MultiUpdateLayout l;
  l.states = op == "MultiAdamUpdate" ? 2 : momentum ? 1 : 0;
  l.copies = copies;
  if (num_inputs < 1 + copies) return std::nullopt;
  const size_t rest = num_inputs - 1 - copies;
  if (rest == 0 || rest % (2 + l.states) != 0) return std::nullopt;
  l.weights = rest / (2 + l.states);
  return l;
}

}  // namespace ampx::opset
