// The later ONNX ops (opset::is_reference_only, not the recurrent ones) on
// onednn:0 (backends/onednn/src/ops_onnx_later.cpp): which kernel runs each
// (debug_counters=1's "kernel runs" in plugin_info.note: a oneDNN primitive
// or the reference loop), and the cases where oneDNN's semantics could
// differ from the reference kernels' (NaN, ties, signed zeros, infinities),
// against cpu_ref. Every op case of op_cases.hpp also runs in every dtype in
// onednn_test_ops.cpp. Nothing here depends on the ISA beyond SSE4.1:
// eltwise round/abs/soft_relu/mish and the binary add have jit kernels from
// there up; the reductions are checked for what the answer says.
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>

#include "ampx/opset/catalogue.hpp"
#include "onednn_harness.hpp"
#include "op_cases.hpp"
#include "rnn_kernel.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Element by element: NaN where the reference has NaN, else equal (with the
// sign of zero when `signed_zero`).
void expect_same_values(const Tensor& got, const Tensor& want, bool signed_zero,
                        const std::string& what) {
  ASSERT_EQ(got.dims, want.dims) << what;
  const std::vector<double> g = got.values(), w = want.values();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << what << " element " << i << ": " << g[i] << ", want NaN";
      continue;
    }
    EXPECT_EQ(g[i], w[i]) << what << " element " << i;
    if (signed_zero && w[i] == 0.0) {
      EXPECT_EQ(std::signbit(g[i]), std::signbit(w[i])) << what << " element " << i << ": -0";
    }
  }
}

class OnednnLaterOps : public OnednnVsRef<OnednnLaterOps> {
 public:
  static constexpr const char* kOptions = "debug_counters=1";

 protected:
  enum class Kernel { kPrimitive, kLoop, kMeasured };

  // Runs `c` on onednn (the kernel it must be) and cpu_ref; returns both
  // results.
  static std::pair<std::vector<Tensor>, std::vector<Tensor>> run(Case& c, Kernel expect) {
    const ampx_capability cap = onednn_->capability(c.nb);
    const std::string note = cap.note;
    EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << note;
    const KernelRuns before = kernel_runs(*onednn_);
    auto got = run_on(*onednn_, c.nb, c.inputs);
    const KernelRuns after = kernel_runs(*onednn_);
    const bool primitive = after.primitive == before.primitive + 1 && after.loop == before.loop;
    const bool loop = after.loop == before.loop + 1 && after.primitive == before.primitive;
    EXPECT_TRUE(primitive || loop) << "one kernel run: " << plugin_note(*onednn_);
    switch (expect) {
      case Kernel::kPrimitive:
        EXPECT_TRUE(primitive) << note;
        EXPECT_EQ(note.rfind("oneDNN ", 0), 0u) << note;
        break;
      case Kernel::kLoop:
        // No primitive even measured: oneDNN 2.6 has none that computes it.
        EXPECT_TRUE(loop) << note;
        EXPECT_NE(note.find("plain loop"), std::string::npos) << note;
        EXPECT_EQ(note.find("oneDNN"), std::string::npos) << note;
        break;
      case Kernel::kMeasured:
        // A primitive where oneDNN has a fast one for this node on this
        // CPU; where it has only its reference implementation, the loop,
        // saying so.
        if (primitive) {
          EXPECT_EQ(note.rfind("oneDNN ", 0), 0u) << note;
        } else {
          EXPECT_NE(note.find("oneDNN has "), std::string::npos) << note;
          EXPECT_NE(note.find("plain loop instead"), std::string::npos) << note;
        }
        break;
    }
    auto want = run_on(*ref_, c.nb, c.inputs);
    return {std::move(got), std::move(want)};
  }
};

// Every op case of these ops in f32: the kernel each is meant to run on,
// and its result within tolerance.
TEST_F(OnednnLaterOps, EachOpCaseRunsOnItsKernel) {
  // Primitives on every ISA from SSE4.1 up (jit eltwise; jit:uni binary).
  const std::set<std::string> primitive = {"Round", "Abs", "Mish", "Sum_three_broadcast"};
  // oneDNN's reduction is jit for some axes and ISAs only.
  const std::set<std::string> measured = {"ReduceProd_axis1_keep", "ReduceL2_all",
                                          "ReduceSumSquare_axis2_drop"};
  int seen = 0;
  for (const auto& [name, make] : cases()) {
    Rng rng(17);
    Case c;
    make(rng, F32, c);
    const std::string op = c.nb.op_type();
    if (!opset::is_reference_only(op) || onednn::is_recurrent_op(op)) continue;
    SCOPED_TRACE(name);
    ++seen;
    // The rank edge cases (op_cases::rank_edges) of the primitive ops: their
    // Sum and Mean always have an input of the output's shape.
    const bool rank_edge_primitive =
        name.starts_with("Rank_") &&
        (op == "Round" || op == "Abs" || op == "Mish" || op == "Sum" || op == "Mean");
    // Attention: two matmuls around the softmax loop, jit in f32 on every
    // ISA (attention_kernel.hpp; onednn_test_attention.cpp).
    const Kernel k = primitive.count(name) || rank_edge_primitive || op == "Attention"
                         ? Kernel::kPrimitive
                     : measured.count(name) ? Kernel::kMeasured
                                            : Kernel::kLoop;
    auto [got, want] = run(c, k);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (opset::is_data_movement(op) || got[i].dtype != F32) {
        expect_bits_equal(got[i], want[i]);
      } else {
        expect_close(got[i], want[i].values(), name);
      }
    }
  }
  EXPECT_GE(seen, 30);  // every reference-only op but the recurrent three has a case
}

// Round halves to even, as ONNX and std::nearbyint: oneDNN's eltwise_round
// too, -0.5 to -0 included; Abs clears the sign of -0 and -inf.
TEST_F(OnednnLaterOps, RoundAndAbsMatchTheReferenceExactly) {
  std::vector<double> v;
  for (double x = -6.5; x <= 6.5; x += 0.25) v.push_back(x);
  for (double x : {-0.0, kNaN, kInf, -kInf, 8388609.0, -8388607.5, 1e30, -0.4999999701976776,
                   0.5000000596046448, 2.5, 3.5, 1e-40})
    v.push_back(x);
  for (const char* op : {"Round", "Abs"}) {
    SCOPED_TRACE(op);
    Case c;
    c.nb = NodeBuilder(op, "n");
    in(c, Tensor::of(F32, {static_cast<int64_t>(v.size())}, v));
    c.nb.output(F32, {static_cast<int64_t>(v.size())});
    auto [got, want] = run(c, Kernel::kPrimitive);
    expect_same_values(got[0], want[0], true, op);
  }
}

// Mish: oneDNN's jit approximation, checked element by element over
// [-30, 30] and at the special values. It is accurate to about 2e-6
// absolute, without log1p: large relative errors where the value itself is
// below 1e-4 (x below about -10); within 2e-6 relative for x >= -2.
// (Softplus, whose soft_relu has the same error and goes slightly negative,
// runs on the loop.)
TEST_F(OnednnLaterOps, MishWithinAbsoluteErrors) {
  std::vector<double> v;
  for (double x = -30.0; x <= 30.0; x += 0.0625) v.push_back(x);
  for (double x : {kNaN, kInf, -kInf, -100.0, 100.0, 88.5, -88.5, 0.0, -0.0}) v.push_back(x);
  for (const char* op : {"Mish"}) {
    SCOPED_TRACE(op);
    Case c;
    c.nb = NodeBuilder(op, "n");
    in(c, Tensor::of(F32, {static_cast<int64_t>(v.size())}, v));
    c.nb.output(F32, {static_cast<int64_t>(v.size())});
    auto [got, want] = run(c, Kernel::kPrimitive);
    const std::vector<double> g = got[0].values(), w = want[0].values();
    for (size_t i = 0; i < g.size(); ++i) {
      if (std::isnan(w[i]) || std::isinf(w[i])) {
        EXPECT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i])
            << "x " << v[i] << ": " << g[i] << ", want " << w[i];
        continue;
      }
      EXPECT_LE(std::fabs(g[i] - w[i]), 4e-6 + 2e-6 * std::fabs(w[i]))
          << "x " << v[i] << ": " << g[i] << ", want " << w[i];
    }
  }
}

// Sum and Mean on the binary primitive with add post-ops: NaN and the
// infinities as the reference (inf + -inf = NaN), per-channel and scalar
// broadcasts of the later inputs.
TEST_F(OnednnLaterOps, SumAndMeanPropagateNaNAndInfinities) {
  const std::vector<double> a = {1, kNaN, kInf, -kInf, 2, 3, 0.5, -0.0, 1e30, 7, 8, 9};
  const std::vector<double> b = {kInf, 1, 1, kInf, -2, 4, 0.25, -0.0, 1e30, 1, 2, 3};
  for (const char* op : {"Sum", "Mean"}) {
    SCOPED_TRACE(op);
    Case c;
    c.nb = NodeBuilder(op, "n");
    in(c, Tensor::of(F32, {2, 3, 2}, a));
    in(c, Tensor::of(F32, {2, 3, 2}, b));
    in(c, Tensor::of(F32, {3, 1}, {0.5, -kInf, 2}));  // per channel
    in(c, Tensor::of(F32, {1}, {0.125}));             // scalar
    c.nb.output(F32, {2, 3, 2});
    auto [got, want] = run(c, Kernel::kPrimitive);
    const std::vector<double> g = got[0].values(), w = want[0].values();
    for (size_t i = 0; i < g.size(); ++i) {
      if (std::isnan(w[i]) || std::isinf(w[i]))
        EXPECT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]) << i << ": " << g[i];
      else
        EXPECT_NEAR(g[i], w[i], 1e-6 * std::fabs(w[i])) << i;
    }
  }
  // Only input 1 has the output's shape: the first two swap (addition
  // commutes); neither has it: the loop.
  {
    Rng rng(3);
    Case c;
    c.nb = NodeBuilder("Mean", "n");
    in(c, rnd(rng, F32, {4}));
    in(c, rnd(rng, F32, {3, 4}));
    c.nb.output(F32, {3, 4});
    auto [got, want] = run(c, Kernel::kPrimitive);
    expect_close(got[0], want[0].values(), "Mean swapped");
  }
  {
    Rng rng(3);
    Case c;
    c.nb = NodeBuilder("Sum", "n");
    in(c, rnd(rng, F32, {3, 1}));
    in(c, rnd(rng, F32, {1, 4}));
    c.nb.output(F32, {3, 4});
    auto [got, want] = run(c, Kernel::kLoop);
    expect_close(got[0], want[0].values(), "Sum outer broadcast");
  }
}

// Min, Max and ReduceMin stay on the loop: oneDNN's min/max keep a NaN only
// in the second operand, the reference propagates every NaN (NumPy).
TEST_F(OnednnLaterOps, MinMaxAndReduceMinPropagateNaNOnTheLoop) {
  const std::vector<double> a = {kNaN, 1, kNaN, 2, 3, -0.0, 0.0, kInf};
  const std::vector<double> b = {1, kNaN, kNaN, 2, 4, 0.0, -0.0, kNaN};
  for (const char* op : {"Min", "Max"}) {
    SCOPED_TRACE(op);
    Case c;
    c.nb = NodeBuilder(op, "n");
    in(c, Tensor::of(F32, {8}, a));
    in(c, Tensor::of(F32, {8}, b));
    c.nb.output(F32, {8});
    auto [got, want] = run(c, Kernel::kLoop);
    expect_same_values(got[0], want[0], true, op);
  }
  Case c;
  c.nb = NodeBuilder("ReduceMin", "n");
  in(c, Tensor::of(F32, {2, 4}, {1, kNaN, -3, 5, -1, 2, 3, kNaN}));
  c.nb.output(F32, {2}).attr_ints("axes", {1}).attr_int("keepdims", 0);
  auto [got, want] = run(c, Kernel::kLoop);
  expect_same_values(got[0], want[0], false, "ReduceMin");
}

// ReduceMax too: reduction_max starts from the lowest finite value, so a
// row of -inf gave -FLT_MAX (ONNX Attention's fully masked rows test for
// -inf), and vmaxps drops a NaN in its first operand.
TEST_F(OnednnLaterOps, ReduceMaxOfMinusInfinityAndNaNOnTheLoop) {
  Case c;
  c.nb = NodeBuilder("ReduceMax", "n");
  in(c, Tensor::of(F32, {3, 4}, {-kInf, -kInf, -kInf, -kInf, 1, kNaN, 3, 2, -kInf, -2, -kInf, -5}));
  c.nb.output(F32, {3}).attr_ints("axes", {1}).attr_int("keepdims", 0);
  auto [got, want] = run(c, Kernel::kLoop);
  expect_same_values(got[0], want[0], false, "ReduceMax");
  EXPECT_EQ(want[0].values()[0], -kInf);
}

// ReduceProd over the innermost axis (oneDNN's jit reduction, where it has
// one): NaN, inf x 0 = NaN and signed zeros as the reference.
TEST_F(OnednnLaterOps, ReduceProdSpecialValues) {
  Case c;
  c.nb = NodeBuilder("ReduceProd", "n");
  in(c, Tensor::of(F32, {5, 4}, {1, kNaN, 2,   3,  kInf, 0,  1,     1, -0.0, 2,
                                 3, 4,    1.5, -2, 4,    -1, -kInf, 2, 3,    0.5}));
  c.nb.output(F32, {5, 1}).attr_ints("axes", {-1}).attr_int("keepdims", 1);
  auto [got, want] = run(c, Kernel::kMeasured);
  expect_same_values(got[0], want[0], true, "ReduceProd");
}

// A reduction over axes of size 1 only reduces nothing: oneDNN refuses
// one whose source and destination dims are equal, so the loop runs it (it
// fell back to cpu_ref before: Silero VAD's ReduceMean of a squeezed scalar).
TEST_F(OnednnLaterOps, ReductionsOfOneElementRunOnTheLoop) {
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceProd", "ReduceL2"}) {
    for (const bool scalar : {true, false}) {
      SCOPED_TRACE(std::string(op) + (scalar ? " rank 0" : " [3, 1] over axis 1"));
      Case c;
      c.nb = NodeBuilder(op, "n");
      if (scalar) {
        in(c, Tensor::of(F32, {}, {-2.5}));
        c.nb.output(F32, {}).attr_int("keepdims", 0);
      } else {
        in(c, Tensor::of(F32, {3, 1}, {-2.5, 0.5, 3}));
        c.nb.output(F32, {3}).attr_ints("axes", {1}).attr_int("keepdims", 0);
      }
      auto [got, want] = run(c, Kernel::kLoop);
      expect_bits_equal(got[0], want[0]);
    }
  }
}

}  // namespace
}  // namespace ampx::test
