// THE one place where ampx writes down how close a result must be to its
// float64 reference, per dtype and compute mode. Every numerical test uses
// these, and `ampx plugin-check` holds plugins to them (shipped with the op
// set library).
//
// Metric: normwise relative error, see relative_error() below. The reference
// is computed in float64 from the very same (already 16-bit-rounded) inputs
// the kernel saw, so the tolerance only has to cover what the kernel itself
// adds: its f32 arithmetic and, for 16-bit outputs, the one final rounding.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "ampx/backend_api.h"

namespace ampx::opset {

// How a kernel computes on 16-bit data. The op set's contract (and
// cpu_ref's) is kF32Accumulate: widen to f32, compute and accumulate in f32,
// round each output once. Tensor cores and f16 GEMMs with f16 accumulators
// (cuBLAS CUBLAS_COMPUTE_16F, Vulkan f16 shaders that keep their sums in
// f16) are kF16Accumulate; bf16 data is always accumulated in f32.
enum class ComputeMode {
  kF32Accumulate,
  kF16Accumulate,
};

// "f32-accumulate", "f16-accumulate".
inline const char* compute_mode_name(ComputeMode m) {
  return m == ComputeMode::kF16Accumulate ? "f16-accumulate" : "f32-accumulate";
}

// The compute mode a plugin declares for its f16 kernels (its numerics).
inline ComputeMode compute_mode_of(ampx_accumulation f16_accumulation) {
  return f16_accumulation == AMPX_ACCUMULATE_F16 ? ComputeMode::kF16Accumulate
                                                 : ComputeMode::kF32Accumulate;
}

// Max allowed relative_error() of a kernel output against its f64 reference.
inline double tolerance(ampx_dtype dt, ComputeMode mode = ComputeMode::kF32Accumulate) {
  if (dt == AMPX_DTYPE_F16 && mode == ComputeMode::kF16Accumulate) {
    // Every partial sum is rounded to f16: a K-term sum of random-sign data
    // drifts ~sqrt(K) units of 2^-11 (worst case K units). 2^-5 covers
    // sqrt(K) up to 64, i.e. the up to ~4096-term reductions of the op-case
    // catalogue; a kernel that loses more than that is wrong, not rounded.
    return 0x1p-5;
  }
  switch (dt) {
    case AMPX_DTYPE_F32:
      // f32 unit roundoff is 2^-24 ~ 6e-8. 1e-5 (~170 units) covers f32
      // accumulation over the up to ~10^4-term sums of the tests (random-sign
      // data: error grows ~ sqrt(n) units) plus 1-2 ulp from libm exp/erf/tanh.
      return 1e-5;
    case AMPX_DTYPE_F16:
      // The single rounding of the output to f16 costs up to the unit roundoff
      // 2^-11 ~ 4.9e-4 of the largest element; 2^-10 (twice that) leaves room
      // for the f32 compute error, which is ~1000x smaller.
      return 0x1p-10;
    case AMPX_DTYPE_BF16:
      // Same argument with bf16's 8-bit significand: unit roundoff 2^-8, so
      // 2^-7 ~ 7.8e-3.
      return 0x1p-7;
    case AMPX_DTYPE_F64:
      // f64 compute (the elementwise ops; every float op in the reference
      // kernels' float64 mode): unit roundoff 2^-53 ~ 1.1e-16, so 1e-13
      // (~900 units) covers the same ~10^4-term sums as the f32 bound.
      return 1e-13;
    default:
      return 0.0;  // integers, bool: exact
  }
}

// Max allowed relative_error() of a whole model's output run with AMP in
// `dt` (16-bit nodes, Casts in between) against the f32 O0 reference. Unlike
// tolerance(), the 16-bit run rounds the activations between every pair of
// nodes and those errors propagate through the layers, so the bound is the
// unit roundoff times the depth (~20 16-bit nodes on the longest path of
// the built-in models), with margin. Measured on cpu_ref kernels behind
// test_native (seeded inputs): f16 4.8e-4 (cnn), 6.6e-4 (mlp), 1.3e-3
// (encoder); bf16 3.0e-3, 5.4e-3, 1.1e-2: ~7x below these bounds.
inline double model_tolerance(ampx_dtype dt) {
  switch (dt) {
    case AMPX_DTYPE_F32:
      // Same precision, different kernels or summation order only.
      return 1e-4;
    case AMPX_DTYPE_F16:
      // ~20 roundings of 2^-11 each: ~1e-2 worst case.
      return 1e-2;
    case AMPX_DTYPE_BF16:
      // The same depth at bf16's unit roundoff 2^-8, 8x that of f16.
      return 8e-2;
    default:
      return 0.0;
  }
}

// Max allowed relative_error() of a gradient from autodiff against central
// finite differences (frontend/train, docs/TRAINING.md), and the step. The
// whole check runs in f64: inputs of magnitude ~1 (kept away from kinks),
// the forward graph, the loss sum(R * Y) and the gradient graph, on
// cpu_ref's float64 kernels. Central differences with step h carry
//  - the truncation h^2/6 * f''' (~2e-11 * |f'''| at h = 1e-5; the largest
//    third derivative of the cases, of 1/x at x >= 0.5, gives ~2e-9), and
//  - the rounding of the loss over the step: its f64 error, a few units of
//    2^-53 ~ 1.1e-16 of sum|R * Y| (~1e-14 for the cases' <= ~500 terms),
//    divided by 2h: ~1e-9.
// h = 1e-5 balances the two (the optimum is near u^(1/3) ~ 5e-6). 1e-7 is
// ~50x above both, while a wrong rule (a missing term, a transposed operand,
// a factor off by 1e-4) is off by far more. Measured: at most 5e-10 over the
// cases (8e-10 over 40 seeds), 125x below the bound. In f32 (5e-3 at
// h = 1e-2) the check passed any error below its 5e-3.
inline constexpr double kGradientCheckTolerance = 1e-7;
inline constexpr double kGradientCheckStep = 1e-5;

// relative_error() one element at a time, for callers that must not widen
// whole tensors to double first (ampx run's check of a 1 GiB output).
class RelativeErrorAccumulator {
 public:
  // Adds one element pair; false on a non-finite mismatch (the error is then
  // +inf whatever follows).
  bool add(double g, double r) {
    if (std::isnan(g) || std::isnan(r)) return std::isnan(g) == std::isnan(r);
    if (std::isinf(g) || std::isinf(r)) return g == r;
    max_err_ = std::max(max_err_, std::fabs(g - r));
    max_ref_ = std::max(max_ref_, std::fabs(r));
    return true;
  }
  double max_err() const { return max_err_; }
  double max_ref() const { return max_ref_; }

 private:
  double max_err_ = 0.0, max_ref_ = 0.0;
};

// Normwise relative error
//     max_i |got_i - ref_i| / max(max_i |ref_i|, tiny)
// with tiny = the smallest normal double, so an all-zero reference demands
// (nearly) exact zeros. Elementwise it tolerates more error on small elements
// than on large ones, which is how rounding and accumulation errors behave.
// A NaN or infinity in `got` matches only the same NaN-ness / infinity in
// `ref` (and then counts as no error); any other mismatch, including
// different lengths, gives +inf.
inline double relative_error(std::span<const double> got, std::span<const double> ref) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (got.size() != ref.size()) return inf;
  RelativeErrorAccumulator acc;
  for (size_t i = 0; i < got.size(); ++i)
    if (!acc.add(got[i], ref[i])) return inf;
  return acc.max_err() / std::max(acc.max_ref(), std::numeric_limits<double>::min());
}

}  // namespace ampx::opset
