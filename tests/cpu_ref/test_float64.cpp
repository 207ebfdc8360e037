// The reference kernels' float64 mode (KernelOptions::f64_compute, the mode
// cpu_ref runs): every case of the conformance catalogue built in f64 from
// the very same (f32-representable) inputs as its f32 case must compute the
// same function, so the f32 result is within tolerance(f32) of the f64 one,
// and must compute it in f64: wherever the f32 kernel rounds, the f64
// result differs from it. The per-op references of the Float64 suites
// (test_contraction, test_norm_pool, test_onnx_ops) check the f64 kernels
// to tolerance(f64) on top of this.
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "harness.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

constexpr ampx_dtype F32 = AMPX_DTYPE_F32;
constexpr ampx_dtype F64 = AMPX_DTYPE_F64;

bool has_f64_tensor(const ampx_node_desc& d) {
  for (size_t i = 0; i < d.num_inputs; ++i)
    if (d.inputs[i].dtype == F64) return true;
  for (size_t i = 0; i < d.num_outputs; ++i)
    if (d.outputs[i].dtype == F64) return true;
  return false;
}

std::vector<Tensor> run_case(op_cases::Case& c) {
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : c.inputs) inputs.push_back(&t);
  return run_node(c.nb, inputs);  // in the float64 mode
}

// Cases whose f32 result is exact (they select or copy values, negate
// them, or take a remainder, which is exact in any float format): their f64 result equals the f32
// one bit for bit. By op, and Resize in its nearest mode.
bool exact_in_f32(const std::string& op, const std::string& name) {
  static const std::set<std::string> exact = {
      "Relu",           "Clip",     "Neg",       "MaxPool", "ReduceMax", "ReluGrad",  "ClipGrad",
      "Reshape",        "Flatten",  "Transpose", "Concat",  "Slice",     "SliceGrad", "Gather",
      "Split",          "Expand",   "Pad",       "Dropout", "Where",     "Floor",     "Ceil",
      "Round",          "Abs",      "Min",       "Max",     "ReduceMin", "Mod",       "TopK",
      "GatherElements", "GatherND", "ScatterND"};
  return exact.count(op) > 0 || name.rfind("Resize_nearest", 0) == 0 ||
         name.rfind("Resize_general_nearest", 0) == 0 || name.rfind("GridSample_nearest", 0) == 0;
}

TEST(Float64Mode, EveryCatalogueCaseAgreesWithItsF32Case) {
  int compared = 0;
  for (const auto& [name, make] : op_cases::cases()) {
    Rng r64(17), r32(17);
    op_cases::Case c64, c32;
    make(r64, F64, c64);
    const ampx_node_desc& d = c64.nb.desc();
    if (!has_f64_tensor(d)) continue;  // a case of fixed dtypes (the f32-only updates)
    std::string why;
    const std::string op = c64.nb.op_type();
    if (op == "SgdUpdate" || op == "AdamUpdate" || op == "UpdateGuard") {
      EXPECT_FALSE(reference::can_run(d, nullptr, {.f64_compute = true})) << name;
      continue;
    }
    // BitCast's result is the input's bits: an f64 input's are not its f32
    // rounding's (its f64 form runs: BitCast_float_to_integer casts to i64).
    if (op == "BitCast") {
      EXPECT_TRUE(reference::can_run(d, &why, {.f64_compute = true})) << why;
      continue;
    }
    if (!reference::can_run(d, &why, {.f64_compute = true})) {
      ADD_FAILURE() << name << ": no f64 kernel in the float64 mode: " << why;
      continue;
    }
    // The f32 case's inputs, exactly: round every f64 input to f32 in place
    // (constant inputs are read through the builder's pointers to them).
    for (Tensor& t : c64.inputs)
      if (t.dtype == F64)
        for (size_t i = 0; i < static_cast<size_t>(t.numel()); ++i)
          t.set(i, static_cast<float>(t.get(i)));
    make(r32, F32, c32);
    const std::vector<Tensor> y64 = run_case(c64), y32 = run_case(c32);
    ASSERT_EQ(y64.size(), y32.size()) << name;
    bool any_differs = false, any_float = false;
    size_t float_elements = 0;
    for (size_t k = 0; k < y64.size(); ++k) {
      const std::vector<double> a = y64[k].values(), b = y32[k].values();
      ASSERT_EQ(a.size(), b.size()) << name << " output " << k;
      if (y64[k].dtype != F64) {  // an integer result (ArgMax): the same
        EXPECT_EQ(a, b) << name << " output " << k;
        continue;
      }
      any_float = true;
      float_elements += a.size();
      EXPECT_LE(relative_error(b, a), tolerance(F32))
          << name << " output " << k << ": the f32 result is not within tolerance of the f64 one";
      for (size_t i = 0; i < a.size(); ++i) any_differs = any_differs || a[i] != b[i];
    }
    // A scalar or a few elements can round alike by chance (the sum of two
    // f32 values is often exact; HardSigmoid clips them to 0 or 1): only
    // the cases with some elements tell.
    if (any_float && float_elements >= 8 && !exact_in_f32(op, name)) {
      EXPECT_TRUE(any_differs) << name << ": the f64 result equals the f32 one bit for bit "
                               << "(computed in f32?)";
    }
    ++compared;
  }
  EXPECT_GT(compared, 80);
}

}  // namespace
}  // namespace ampx::test
