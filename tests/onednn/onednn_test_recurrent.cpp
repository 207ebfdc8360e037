// LSTM, GRU and RNN on onednn:0 (backends/onednn/src/rnn_kernel.hpp):
// oneDNN's RNN primitives where they fit, the reference loop elsewhere, and
// which of the two ran (debug_counters=1's "recurrent runs" in
// plugin_info.note), with results against cpu_ref (float64 inside) within
// tolerance(dtype). The op cases themselves (op_cases.hpp) also run in
// every dtype in onednn_test_ops.cpp.
#include <cstdio>
#include <string>
#include <vector>

#include "onednn_harness.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

struct Runs {
  unsigned long long primitive = 0, loop = 0;
};

Runs recurrent_runs(const Plugin& p) {
  const std::string note = plugin_note(p);
  Runs r;
  const size_t at = note.find("recurrent runs: ");
  EXPECT_NE(at, std::string::npos) << note;
  if (at != std::string::npos) {
    EXPECT_EQ(std::sscanf(note.c_str() + at, "recurrent runs: primitive %llu, loop %llu",
                          &r.primitive, &r.loop),
              2)
        << note;
  }
  return r;
}

class OnednnRecurrent : public OnednnVsRef<OnednnRecurrent> {
 public:
  static constexpr const char* kOptions = "debug_counters=1";

 protected:
  enum class Expect { kPrimitive, kLoop };

  // Runs op case `name` in `dt` on onednn and cpu_ref: the answer, which
  // kernel ran, and the results.
  static void check(const std::string& name, ampx_dtype dt, Expect expect) {
    SCOPED_TRACE(name + " " + dtype_str(dt));
    Rng rng(17);
    Case c;
    cases().at(name)(rng, dt, c);
    const ampx_capability cap = onednn_->capability(c.nb);
    const std::string note = cap.note;
    ASSERT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << note;
    // A run-time sequence_lens is only known at the run: such a node is
    // answered for the primitive, and a shorter run goes to the loop.
    const bool runtime_lens = note.find("shorter sequence_lens: plain loop") != std::string::npos;
    if (expect == Expect::kPrimitive || runtime_lens) {
      EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << note;
      EXPECT_EQ(note.rfind("oneDNN ", 0), 0u) << note;
    } else {
      EXPECT_NE(note.find("plain loop"), std::string::npos) << note;
    }
    const Runs before = recurrent_runs(*onednn_);
    const auto got = run_on(*onednn_, c.nb, c.inputs);
    const Runs after = recurrent_runs(*onednn_);
    if (expect == Expect::kPrimitive) {
      EXPECT_GE(after.primitive, before.primitive + 1);
      EXPECT_EQ(after.loop, before.loop);
    } else {
      EXPECT_EQ(after.primitive, before.primitive);
      EXPECT_GE(after.loop, before.loop + 1);
    }
    const auto want = run_on(*ref_, c.nb, c.inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      expect_close(got[i], want[i].values(),
                   name + " output " + std::to_string(i) + " (" + note + ")");
  }
};

// f32 in the forms oneDNN computes: the primitive runs, and matches.
TEST_F(OnednnRecurrent, PrimitiveRunsWhereItFits) {
  for (const char* name :
       {"LSTM_forward_peepholes", "LSTM_reverse_peepholes", "LSTM_bidirectional_peepholes",
        "LSTM_bidirectional_weights_in", "LSTM_forward_lens_full", "GRU_forward_reset_before",
        "GRU_reverse_reset_before", "GRU_bidirectional_linear_before_reset",
        "GRU_reverse_linear_before_reset", "RNN_tanh_bidirectional", "RNN_relu_forward",
        "RNN_sigmoid_reverse"})
    check(name, AMPX_DTYPE_F32, Expect::kPrimitive);
}

// clip and other activations have no oneDNN form, and a run whose
// sequence_lens are shorter than seq_length neither: the loop runs them,
// in f32 `native` ("plain loop").
TEST_F(OnednnRecurrent, LoopRunsWhatDoesNotFit) {
  for (const char* name : {"LSTM_bidirectional_lens", "RNN_leaky_relu", "LSTM_forward_lens_short"})
    check(name, AMPX_DTYPE_F32, Expect::kLoop);
}

// W, R, B and P as run-time inputs are repacked at every run, constants
// once at prepare: the same bits either way.
TEST_F(OnednnRecurrent, WeightsAsInputsGiveTheConstantsBits) {
  auto run = [](const char* name) {
    Rng rng(17);
    Case c;
    cases().at(name)(rng, AMPX_DTYPE_F32, c);
    return run_on(*onednn_, c.nb, c.inputs);
  };
  const auto constant = run("LSTM_bidirectional_peepholes");
  const auto inputs = run("LSTM_bidirectional_weights_in");
  ASSERT_EQ(constant.size(), inputs.size());
  for (size_t i = 0; i < constant.size(); ++i) expect_bits_equal(inputs[i], constant[i]);
}

// docs/OPS.md's thread-count promise on the RNN primitive (an LSTM big
// enough to run threaded: 16.8 MFLOP per step): checked at prepare and run
// on 3 threads, or on one where the bits differed, with a threads=1
// plugin's bits. With a run-time sequence_lens (all seq_length here) the
// node is pinned to one thread unchecked: a drawn length would not run the
// primitive's path (backends/onednn/README.md, "Determinism").
TEST(OnednnRecurrentThreads, TheSameBitsAtOneAndThreeThreads) {
  Plugin one(plugin_path("onednn"), "threads=1");
  Plugin three(plugin_path("onednn"), "threads=3;debug_counters=1");
  for (const bool runtime_lens : {false, true}) {
    SCOPED_TRACE(runtime_lens ? "run-time sequence_lens" : "no sequence_lens");
    const int64_t T = 4, N = 16, I = 256, H = 256;
    Rng r(23);
    Case c;
    c.nb = NodeBuilder("LSTM", "n");
    in(c, rnd(r, F32, {T, N, I}));
    in(c, rnd(r, F32, {1, 4 * H, I}, 0.1), true);
    in(c, rnd(r, F32, {1, 4 * H, H}, 0.1), true);
    in(c, rnd(r, F32, {1, 8 * H}, 0.1), true);
    in(c, rnd(r, F32, {1, N, H}));
    in(c, rnd(r, F32, {1, N, H}));
    in(c, rnd(r, F32, {1, 3 * H}, 0.1), true);
    if (runtime_lens) in(c, Tensor::of(I64, {N}, std::vector<double>(N, T)));
    c.nb.output(F32, {T, 1, N, H}).output(F32, {1, N, H}).output(F32, {1, N, H});
    c.nb.attr_int("hidden_size", H).attr_str("direction", "forward");
    const long long checked = note_number(three, "checked "),
                    pinned = note_number(three, "pinned ");
    const Runs before = recurrent_runs(three);
    const auto want = run_on(one, c.nb, c.inputs), got = run_on(three, c.nb, c.inputs);
    EXPECT_EQ(recurrent_runs(three).primitive, before.primitive + 1) << plugin_note(three);
    EXPECT_EQ(note_number(three, "checked "), checked + 1);
    const bool pinned_now = note_number(three, "pinned ") == pinned + 1;
    if (runtime_lens) EXPECT_TRUE(pinned_now) << plugin_note(three);
    EXPECT_EQ(note_number(three, "launch threads "), pinned_now ? 1 : 3) << plugin_note(three);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_bits_equal(got[i], want[i]);
  }
}

// 16-bit is measured by creating the primitive descriptor: oneDNN 2.6 has
// bf16 RNNs from AVX-512 on only (f16 none on this project's CPUs). Where
// it has none
// the node runs on the reference kernels (16-bit storage, f32 compute),
// `emulated`, saying so; wherever it runs, it matches.
TEST_F(OnednnRecurrent, SixteenBitIsMeasured) {
  for (ampx_dtype dt : {AMPX_DTYPE_BF16, AMPX_DTYPE_F16}) {
    SCOPED_TRACE(dtype_str(dt));
    Rng rng(17);
    Case c;
    cases().at("LSTM_bidirectional_peepholes")(rng, dt, c);
    const ampx_capability cap = onednn_->capability(c.nb);
    const std::string note = cap.note;
    if (below_avx512(*onednn_)) {
      EXPECT_EQ(cap.support, AMPX_SUPPORT_EMULATED) << note;
      EXPECT_NE(note.find("no oneDNN RNN primitive on "), std::string::npos) << note;
    }
    const auto got = run_on(*onednn_, c.nb, c.inputs);
    const auto want = run_on(*ref_, c.nb, c.inputs);
    for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i].values(), note);
  }
}

}  // namespace
}  // namespace ampx::test
