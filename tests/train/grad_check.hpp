// The gradient check of the autodiff tests: the gradient graph's result on
// cpu_ref against central finite differences of the same forward graph, all
// of it in float64 (cpu_ref's float64 kernels, docs/OPS.md).
#pragma once

#include <ampx/exec/executor.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/plugins/plugin_host.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ampx::test {

// How a checked input is drawn: uniform in [-1, 1] (never 0), or kept away
// from a kink (|x| >= 0.2 from `kink`), or positive in [0.5, 1.5] (a
// divisor), or distinct values >= 0.05 apart (max pooling: the arg max never
// changes under the step).
enum class Draw { kUniform, kAwayFromKink, kPositive, kDistinct };

// The dtype of every float tensor of the check: inputs, the forward graph,
// R, the loss, the seed and the whole gradient graph.
inline constexpr DType kGradCheckDtype = DType::kF64;

struct CheckedInput {
  ValueId value;
  Draw draw = Draw::kUniform;
  double kink = 0.0;
};

struct GradCheckResult {
  std::string input;
  double error;
  int checked_elements;
};

// Changes the gradient graph after autodiff built it: `grads` holds the
// gradient of each checked input, in order, and may be replaced. For the
// tests that show a wrong rule fails the check.
using GradTamper = std::function<void(Graph& graph, std::vector<ValueId>& grads)>;

// Builds the forward with `build` (which declares the checked inputs as f64
// graph inputs and returns the output Y), adds loss = sum(R * Y) for a
// random f64 constant R, appends the gradients (seeded with an f64 1) and
// compares them with central differences of sum(R * Y) over every element
// (at most 48 sampled per input), step opset::kGradientCheckStep. Every
// float value of both graphs must be f64 and neither may hold a Cast: the
// whole check runs in float64 (GraphError otherwise). One result per
// checked input.
std::vector<GradCheckResult> gradient_check(
    const plugins::Device& device,
    const std::function<ValueId(GraphBuilder&, std::vector<CheckedInput>&)>& build,
    uint64_t seed = 7, const GradTamper& tamper = nullptr);

plugins::PluginHost make_cpu_ref_host();

}  // namespace ampx::test
