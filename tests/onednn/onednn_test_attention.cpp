// Attention on onednn:0 (backends/onednn/src/attention_kernel.hpp): two
// oneDNN matmuls around the plugin's f32 softmax loop where both are jit,
// else the reference loop; against cpu_ref. The catalogue's Attention cases
// also run in every dtype in onednn_test_ops.cpp; here: which kernel runs
// each (debug_counters=1's kernel runs), the special values of the softmax
// step (NaN rows, infinite logits, fully masked rows), and the thread-count
// promise with a bool mask and nonpad_kv_seqlen (inputs the thread check
// cannot draw: attention_kernel.hpp gives them stand-ins).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>

#include "onednn_harness.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

class OnednnAttention : public OnednnVsRef<OnednnAttention> {
 public:
  static constexpr const char* kOptions = "debug_counters=1";
};

// Every catalogued Attention case in f32, f16 and bf16: f32 on the matmuls
// on every ISA (oneDNN has a jit f32 GEMM from SSE4.1 on); 16-bit native
// exactly when the matmuls are (never below AVX-512), else the loop,
// widened; the primitive counted when the answer says so; within tolerance.
TEST_F(OnednnAttention, CataloguedCasesRunOnTheMatmulsWhereJit) {
  int seen = 0;
  for (const auto& [name, make] : cases()) {
    if (!name.starts_with("Attention_")) continue;
    ++seen;
    for (ampx_dtype dt : {F32, F16, BF16}) {
      SCOPED_TRACE(name + " " + dtype_str(dt));
      Rng rng(17);
      Case c;
      make(rng, dt, c);
      const ampx_capability cap = onednn_->capability(c.nb);
      const std::string note = cap.note;
      std::cout << "[ answer   ] " << name << " " << dtype_str(dt) << ": " << note << "\n";
      const bool matmuls = note.rfind("oneDNN matmul ", 0) == 0;
      if (dt == F32) {
        EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << note;
        EXPECT_TRUE(matmuls) << note;
      } else if (matmuls) {
        EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << note;
        EXPECT_FALSE(below_avx512(*onednn_)) << note;
      } else {
        EXPECT_EQ(cap.support, AMPX_SUPPORT_EMULATED) << note;
        EXPECT_NE(note.find("plain loop, 16-bit widened"), std::string::npos) << note;
      }
      const auto before = kernel_runs(*onednn_);
      const auto got = run_on(*onednn_, c.nb, c.inputs);
      const auto after = kernel_runs(*onednn_);
      EXPECT_EQ(after.primitive - before.primitive, matmuls ? 1u : 0u) << plugin_note(*onednn_);
      EXPECT_EQ(after.loop - before.loop, matmuls ? 0u : 1u) << plugin_note(*onednn_);
      const auto want = run_on(*ref_, c.nb, c.inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i].values(), note);
    }
  }
  EXPECT_GE(seen, 5);
}

// The softmax step's special rows, as the reference kernel: a NaN logit
// makes its row NaN, a fully masked row is 0 even with NaN logits, logits
// all -inf give 0, and the other rows match within tolerance.
TEST_F(OnednnAttention, SpecialRowsAsTheReference) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Rng r(5);
  Case c;
  c.nb = NodeBuilder("Attention", "n");
  Tensor q = rnd(r, F32, {1, 1, 4, 4});
  Tensor k = Tensor::of(F32, {1, 1, 3, 4}, {1, 2, 3, 4, 0.5, 1, 1.5, 2, 2, 1, 1, 0.5});
  std::vector<double> qv = q.values();
  qv[1] = kNaN;   // row 0: NaN logits, attendable keys: NaN
  qv[4] = kNaN;   // row 1: NaN logits but fully masked: 0
  qv[8] = -kInf;  // row 2: every logit -inf (K's first column > 0): 0
  q = Tensor::of(F32, {1, 1, 4, 4}, qv);
  in(c, q);
  in(c, k);
  in(c, rnd(r, F32, {1, 1, 3, 2}));
  in(c, Tensor::of(AMPX_DTYPE_BOOL, {4, 3}, {1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1}));
  c.nb.output(F32, {1, 1, 4, 2}).output(F32, {1, 1, 4, 3}).attr_int("qk_output", 3);
  const ampx_capability cap = onednn_->capability(c.nb);
  ASSERT_EQ(std::string(cap.note).rfind("oneDNN matmul ", 0), 0u) << cap.note;
  const auto got = run_on(*onednn_, c.nb, c.inputs);
  const auto want = run_on(*ref_, c.nb, c.inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < got.size(); ++o) {
    const std::vector<double> g = got[o].values(), w = want[o].values();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) {
      if (std::isnan(w[i])) {
        EXPECT_TRUE(std::isnan(g[i])) << "output " << o << " element " << i << ": " << g[i];
      } else {
        EXPECT_NEAR(g[i], w[i], 1e-5 * (1 + std::abs(w[i]))) << "output " << o << " element " << i;
      }
    }
  }
  // Row 1 and row 2 (elements 2..5 of Y) are exactly 0, row 0 NaN.
  const std::vector<double> y = got[0].values();
  EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  for (size_t i = 2; i < 6; ++i) EXPECT_EQ(y[i], 0.0) << i;
}

// Scores beyond 64 MiB are made a chunk of KV heads at a time: here 3
// batches of one KV head serving two query heads, 28.9 MB of scores each,
// so three chunks, each reading its own Q, K, V and writing its own Y.
TEST_F(OnednnAttention, ChunksOfKvHeadsGiveTheWholeBatch) {
  const int64_t B = 3, S = 1900, T = 1900, E = 4;
  Rng r(11);
  Case c;
  c.nb = NodeBuilder("Attention", "n");
  in(c, rnd(r, F32, {B, 2, S, E}));
  in(c, rnd(r, F32, {B, 1, T, E}));
  in(c, rnd(r, F32, {B, 1, T, E}));
  c.nb.output(F32, {B, 2, S, E}).attr_int("is_causal", 1);
  const ampx_capability cap = onednn_->capability(c.nb);
  ASSERT_EQ(std::string(cap.note).rfind("oneDNN matmul ", 0), 0u) << cap.note;
  const auto got = run_on(*onednn_, c.nb, c.inputs);
  const auto want = run_on(*ref_, c.nb, c.inputs);
  expect_close(got[0], want[0].values(), cap.note);
}

// docs/OPS.md's thread-count promise: a node big enough to run threaded
// (8.4 MFLOP) gives a threads=1 plugin's bits at 3 threads. With a bool
// mask and nonpad_kv_seqlen it is still checked (not pinned unchecked):
// those inputs do not change the kernel's path.
TEST(OnednnAttentionThreads, TheSameBitsAtOneAndThreeThreads) {
  Plugin one(plugin_path("onednn"), "threads=1");
  Plugin three(plugin_path("onednn"), "threads=3;debug_counters=1");
  for (ampx_dtype dt : {F32, BF16}) {
    SCOPED_TRACE(dtype_str(dt));
    const int64_t B = 2, H = 4, S = 64, T = 64, E = 32;
    Rng r(23);
    Case c;
    c.nb = NodeBuilder("Attention", "n");
    in(c, rnd(r, dt, {B, H, S, E}));
    in(c, rnd(r, dt, {B, H / 2, T, E}));
    in(c, rnd(r, dt, {B, H / 2, T, E}));
    std::vector<double> mask(static_cast<size_t>(S * T));
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i * 7919) % 5 != 0;
    in(c, Tensor::of(AMPX_DTYPE_BOOL, {S, T}, mask));
    in(c, Tensor::of(I64, {B}, {64, 40}));
    c.nb.output(dt, {B, H, S, E}).output(dt, {B, H, S, T}).attr_int("qk_output", 2);
    c.nb.attr_int("is_causal", 1);
    const ampx_capability cap = three.capability(c.nb);
    std::cout << "[ answer   ] " << dtype_str(dt) << ": " << cap.note << "\n";
    const long long checked = note_number(three, "checked "),
                    pinned = note_number(three, "pinned ");
    const auto want = run_on(one, c.nb, c.inputs), got = run_on(three, c.nb, c.inputs);
    if (std::string(cap.note).rfind("oneDNN matmul ", 0) == 0) {
      EXPECT_EQ(note_number(three, "checked "), checked + 1);
      const bool pinned_now = note_number(three, "pinned ") == pinned + 1;
      std::cout << "[ threads  ] " << (pinned_now ? "pinned to one thread" : "3 threads kept")
                << "\n";
      EXPECT_EQ(note_number(three, "launch threads "), pinned_now ? 1 : 3) << plugin_note(three);
    }
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_bits_equal(got[i], want[i]);
  }
}

}  // namespace
}  // namespace ampx::test
