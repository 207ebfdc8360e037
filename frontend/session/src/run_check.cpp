#include <ampx/session/run_check.hpp>

#include <ampx/opset/tolerances.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace ampx {

bool RunCheck::passed() const {
  return std::all_of(outputs.begin(), outputs.end(), [](const OutputCheck& o) { return o.passed; });
}

std::string RunCheck::failure_line(const std::string& reference) const {
  std::string over;
  for (const OutputCheck& o : outputs) {
    if (o.passed) continue;
    if (!over.empty()) over += ", ";
    over += o.exact_kind ? fmt::format("'{}' ({} of its elements differ, {} may)", o.name,
                                       o.mismatches, o.allowed_mismatches)
                         : fmt::format("'{}' (max relative error {:.3e})", o.name, o.max_rel_error);
  }
  return fmt::format(
      "the check against {} failed: output {} over the tolerance {:.1e} of a plan "
      "computing in {} (--no-check skips the check)",
      reference, over, tolerance, dtype_name(tolerance_dtype));
}

DType lowest_precision(const Graph& plan_graph) {
  bool f16 = false;
  for (const Value& v : plan_graph.values()) {
    if (v.type.dtype == DType::kBF16) return DType::kBF16;
    f16 = f16 || v.type.dtype == DType::kF16;
  }
  return f16 ? DType::kF16 : DType::kF32;
}

RunCheck check_run(const Graph& model, const Graph& plan_graph,
                   const std::vector<HostTensor>& outputs,
                   const std::vector<HostTensor>& reference) {
  std::vector<std::string> names;
  for (ValueId v : model.outputs()) names.push_back(model.value(v).name);
  return check_run(names, lowest_precision(plan_graph), outputs, reference);
}

RunCheck check_run(const std::vector<std::string>& output_names, DType tolerance_dtype,
                   const std::vector<HostTensor>& outputs,
                   const std::vector<HostTensor>& reference) {
  RunCheck c;
  c.tolerance_dtype = tolerance_dtype;
  c.tolerance = opset::model_tolerance(to_c(c.tolerance_dtype));
  for (size_t i = 0; i < outputs.size(); ++i) {
    OutputCheck o;
    o.name = output_names.at(i);
    o.max_rel_error = max_relative_error(outputs[i], reference[i]);
    if (is_float(outputs[i].type.dtype)) {
      // NaN fails too (a comparison with NaN is false).
      o.passed = o.max_rel_error <= c.tolerance;
    } else {
      // An index or a mask: its relative error means nothing. Exact from an
      // f32 plan; from a 16-bit one a near tie flips an ArgMax or a
      // comparison, so up to a tenth of the elements (at least one) may
      // differ, as the ONNX tests allow (tests/onnx/run_onnx_models.py).
      o.exact_kind = true;
      const std::vector<double> got = to_doubles(outputs[i]), want = to_doubles(reference[i]);
      for (size_t k = 0; k < got.size(); ++k) o.mismatches += got[k] != want[k] ? 1 : 0;
      const auto n = static_cast<int64_t>(got.size());
      o.allowed_mismatches = c.tolerance_dtype == DType::kF32 ? 0 : std::max<int64_t>(1, n / 10);
      o.passed = o.mismatches <= o.allowed_mismatches;
    }
    c.outputs.push_back(std::move(o));
  }
  return c;
}

}  // namespace ampx
