// `ampx run`'s check (CompiledModel::verify_against_reference): each output
// of the plan against the same inputs run through the O0 f32 plan on
// cpu_ref:0, judged by the op set's whole-model tolerance of the lowest
// precision the plan computes in (docs/PLANNER.md, "The run check").
#pragma once

#include <ampx/exec/host_tensor.hpp>
#include <ampx/ir/graph.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace ampx {

struct OutputCheck {
  std::string name;
  double max_rel_error = 0;  // normwise (max_relative_error)
  // Integer and bool outputs: how many elements differ, and how many may.
  bool exact_kind = false;
  int64_t mismatches = 0;
  int64_t allowed_mismatches = 0;
  bool passed = true;
};

struct RunCheck {
  // The lowest-precision float dtype among the plan's values (f64 counts as
  // f32), and opset::model_tolerance() of it.
  DType tolerance_dtype = DType::kF32;
  double tolerance = 0;
  std::vector<OutputCheck> outputs;

  bool passed() const;
  // One line naming every output over its bound, its error and the bound.
  std::string failure_line(const std::string& reference) const;
};

// The float dtype the plan's graph computes in at its lowest precision:
// bf16 if any value is bf16, else f16 if any is f16, else f32.
DType lowest_precision(const Graph& plan_graph);

// `outputs` of the plan against `reference` (the O0 f32 run on cpu_ref),
// named by `output_names` (the model's outputs, in order), judged by the
// tolerance of `tolerance_dtype` (lowest_precision of the plan's graph).
RunCheck check_run(const std::vector<std::string>& output_names, DType tolerance_dtype,
                   const std::vector<HostTensor>& outputs,
                   const std::vector<HostTensor>& reference);
// The same, the names from `model` and the dtype from `plan_graph`.
RunCheck check_run(const Graph& model, const Graph& plan_graph,
                   const std::vector<HostTensor>& outputs,
                   const std::vector<HostTensor>& reference);

}  // namespace ampx
