// The gradient check of the autodiff tests: the gradient graph's result on
// cpu_ref against central finite differences of the same forward graph.
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

// Builds the forward with `build` (which declares the checked inputs as
// graph inputs and returns the output Y), adds loss = sum(R * Y) for a
// random constant R, appends the gradients and compares them with central
// differences of sum(R * Y) in f64 over every element (at most 48 sampled
// per input). One result per checked input.
std::vector<GradCheckResult> gradient_check(
    const plugins::Device& device,
    const std::function<ValueId(GraphBuilder&, std::vector<CheckedInput>&)>& build,
    uint64_t seed = 7);

plugins::PluginHost make_cpu_ref_host();

}  // namespace ampx::test
