// The training ops oneDNN runs as backward primitives (ops_backward.cpp,
// train_kernels.hpp) on shapes beyond the conformance catalogue's: odd
// channel counts (blocked layouts with padded lanes), ungrouped and
// depthwise convolutions, overlapping and ceil-mode pooling windows, 2-D and
// 4-D batch norms, a long layer-norm row, ClipGrad at its bounds. Each runs
// on onednn:0 and cpu_ref:0 (the oracle) with random non-zero inputs, in
// f32 (always, and on a primitive, never the loop) and in f16 / bf16
// wherever the plugin answers native or emulated, compared within the
// per-dtype tolerance. Nothing here assumes one ISA's kernels: the suite
// also runs under ONEDNN_MAX_CPU_ISA=AVX2 (tests/onednn/CMakeLists.txt).
#include <iostream>
#include <map>
#include <string>
#include <utility>

#include "onednn_harness.hpp"
#include "op_cases.hpp"
#include "ops.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;

// NCHW pool gradients: dY [n, c, oh, ow] (and X for MaxPoolGrad).
Maker pool_grad(std::string op, std::vector<int64_t> x, std::vector<int64_t> y,
                std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> pads, int ceil,
                int include_pad = 0) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    c.nb = NodeBuilder(op, "pool");
    in(c, rnd(r, dt, y));
    if (op == "MaxPoolGrad") in(c, rnd(r, dt, x));
    c.nb.output(dt, x)
        .attr_ints("kernel_shape", k)
        .attr_ints("strides", s)
        .attr_ints("pads", pads)
        .attr_int("ceil_mode", ceil);
    if (op == "AveragePoolGrad") {
      c.nb.attr_int("count_include_pad", include_pad).attr_ints("input_shape", x);
    }
  };
}

Maker batchnorm_training(std::vector<int64_t> x) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    const int64_t ch = x[1];
    c.nb = NodeBuilder("BatchNormTraining", "bn");
    in(c, rnd(r, dt, x, 2.0));
    in(c, rnd(r, dt, {ch}));
    in(c, rnd(r, dt, {ch}));
    in(c, rnd(r, dt, {ch}));
    std::vector<double> var(static_cast<size_t>(ch));
    for (size_t i = 0; i < var.size(); ++i) var[i] = 0.5 + 0.25 * static_cast<double>(i);
    in(c, Tensor::of(dt, {ch}, var));
    c.nb.output(dt, x);
    for (int i = 0; i < 4; ++i) c.nb.output(dt, {ch});
    c.nb.attr_float("momentum", 0.9).attr_float("epsilon", 1e-3);
  };
}

Maker batchnorm_grad(std::vector<int64_t> x) {
  return [=](Rng& r, ampx_dtype dt, Case& c) {
    const int64_t ch = x[1];
    c.nb = NodeBuilder("BatchNormGrad", "bn");
    in(c, rnd(r, dt, x));
    in(c, rnd(r, dt, x, 2.0));
    in(c, rnd(r, dt, {ch}));
    in(c, rnd(r, dt, {ch}, 0.1));
    std::vector<double> invstd(static_cast<size_t>(ch));
    for (size_t i = 0; i < invstd.size(); ++i) invstd[i] = 0.4 + 0.3 * static_cast<double>(i);
    in(c, Tensor::of(dt, {ch}, invstd));
    c.nb.output(dt, x).output(dt, {ch}).output(dt, {ch});
  };
}

// Conv2dGradWeight (3x3, pads 1) with bias_gradient: dY `dy` [N, M, H, W],
// X [N, c, H, W] -> dW, dB [M].
Maker conv_grad_weight_with_bias(std::vector<int64_t> dy, int64_t c) {
  return [=](Rng& r, ampx_dtype dt, Case& k) {
    k.nb = NodeBuilder("Conv2dGradWeight", "dw");
    in(k, rnd(r, dt, dy));
    in(k, rnd(r, dt, {dy[0], c, dy[2], dy[3]}));
    k.nb.output(dt, {dy[1], c, 3, 3})
        .output(dt, {dy[1]})
        .attr_ints("kernel_shape", {3, 3})
        .attr_ints("pads", {1, 1, 1, 1})
        .attr_int("bias_gradient", 1);
  };
}

const std::map<std::string, Maker>& training_cases() {
  static const std::map<std::string, Maker> m = {
      {"ReluGrad_11_channels", grad_unary("ReluGrad", {2, 11, 5, 7})},
      {"SigmoidGrad_odd", grad_unary("SigmoidGrad", {3, 13, 9})},
      {"TanhGrad_odd", grad_unary("TanhGrad", {7, 31})},
      {"GeluGrad_erf_11_channels", grad_unary("GeluGrad", {2, 11, 5, 7})},
      {"GeluGrad_tanh_odd",
       grad_unary("GeluGrad", {5, 29}, [](NodeBuilder& b) { b.attr_str("approximate", "tanh"); })},
      // X exactly at both bounds, and the floats next to them: the gradient
      // passes at the bounds and outside stops (docs/OPS.md).
      {"ClipGrad_at_the_bounds",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ClipGrad", "g");
         in(c, rnd(r, dt, {2, 6}));
         in(c,
            Tensor::of(dt, {2, 6},
                       {-0.5, 0.75, -0.5, 0.75, -0.51, 0.76, -2.0, 2.0, 0.0, 0.25, -0.49, 0.74}));
         c.nb.output(dt, {2, 6}).attr_float("min", -0.5).attr_float("max", 0.75);
       }},
      {"SoftmaxGrad_last_axis", grad_unary("SoftmaxGrad", {5, 13})},
      {"Conv2dGradWeight_plain",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2dGradWeight", "dw");
         in(c, rnd(r, dt, {3, 8, 5, 5}));
         in(c, rnd(r, dt, {3, 5, 5, 5}));
         c.nb.output(dt, {8, 5, 3, 3})
             .attr_ints("kernel_shape", {3, 3})
             .attr_ints("pads", {1, 1, 1, 1});
       }},
      // 11 output channels: dB's lanes past them in a blocked layout.
      {"Conv2dGradWeight_bias_gradient_11_channels", conv_grad_weight_with_bias({3, 11, 5, 6}, 5)},
      {"Conv2dGradWeight_depthwise_strided",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2dGradWeight", "dw");
         in(c, rnd(r, dt, {2, 6, 4, 5}));
         in(c, rnd(r, dt, {2, 6, 7, 9}));
         c.nb.output(dt, {6, 1, 3, 3})
             .attr_ints("kernel_shape", {3, 3})
             .attr_ints("strides", {2, 2})
             .attr_ints("pads", {1, 1, 1, 1})
             .attr_int("group", 6);
       }},
      {"MaxPoolGrad_11_channels",
       pool_grad("MaxPoolGrad", {2, 11, 9, 9}, {2, 11, 4, 4}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 0)},
      // Stride 1 under a 3x3 window: every cell in up to nine windows.
      {"MaxPoolGrad_overlapping",
       pool_grad("MaxPoolGrad", {1, 3, 6, 7}, {1, 3, 6, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, 0)},
      {"AveragePoolGrad_exclude_pad_ceil",
       pool_grad("AveragePoolGrad", {2, 5, 8, 7}, {2, 5, 5, 4}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1)},
      {"AveragePoolGrad_include_pad_11_channels",
       pool_grad("AveragePoolGrad", {1, 11, 7, 7}, {1, 11, 7, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, 0,
                 1)},
      {"BatchNormTraining_2d", batchnorm_training({7, 5})},
      {"BatchNormTraining_11_channels", batchnorm_training({2, 11, 3, 5})},
      {"BatchNormGrad_2d", batchnorm_grad({9, 3})},
      {"BatchNormGrad_11_channels", batchnorm_grad({2, 11, 3, 5})},
      {"LayerNormGrad_last_axis",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNormGrad", "ln");
         in(c, rnd(r, dt, {6, 37}));
         in(c, rnd(r, dt, {6, 37}, 2.0));
         in(c, rnd(r, dt, {37}));
         c.nb.output(dt, {6, 37}).output(dt, {37}).output(dt, {37}).attr_float("epsilon", 1e-4);
       }},
  };
  return m;
}

class OnednnTraining : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    onednn_ = std::make_unique<Plugin>(plugin_path("onednn"));
    ref_ = std::make_unique<Plugin>(plugin_path("cpu_ref"));
  }
  static void TearDownTestSuite() {
    onednn_.reset();
    ref_.reset();
  }
  static std::unique_ptr<Plugin> onednn_, ref_;
};
std::unique_ptr<Plugin> OnednnTraining::onednn_;
std::unique_ptr<Plugin> OnednnTraining::ref_;

TEST_P(OnednnTraining, RunsOnAPrimitiveAndMatchesCpuRef) {
  const Maker& make = training_cases().at(GetParam());
  for (ampx_dtype dt : {F32, BF16, F16}) {
    SCOPED_TRACE(std::string(dtype_str(dt)));
    Rng rng(29);
    Case c;
    make(rng, dt, c);
    ASSERT_TRUE(onednn::has_training_primitive(c.nb.op_type()));
    const ampx_capability cap = onednn_->capability(c.nb);
    std::cout << "[ answer   ] " << GetParam() << " " << dtype_str(dt) << ": "
              << (cap.support == AMPX_SUPPORT_NATIVE     ? "native"
                  : cap.support == AMPX_SUPPORT_EMULATED ? "emulated"
                                                         : "unsupported")
              << " (" << cap.note << ")\n";
    ASSERT_NE(ref_->capability(c.nb).support, AMPX_SUPPORT_UNSUPPORTED) << "bad test case";
    if (dt == F32) {
      // A oneDNN primitive ("oneDNN jit:avx2"), native. The plain loop only
      // where oneDNN has nothing but its reference kernel for the node on
      // this ISA (softmax backward below AVX-512), and the note says so.
      EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
      const std::string note = cap.note;
      if (note.find("plain loop") != std::string::npos) {
        EXPECT_NE(note.find("oneDNN has "), std::string::npos) << note;
      } else {
        EXPECT_EQ(note.rfind("oneDNN ", 0), 0u) << note;
      }
    }
    if (cap.support == AMPX_SUPPORT_UNSUPPORTED) continue;  // 16-bit only
    const auto got = run_on(*onednn_, c.nb, c.inputs);
    const auto want = run_on(*ref_, c.nb, c.inputs);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE("output " + std::to_string(i));
      EXPECT_EQ(got[i].dtype, want[i].dtype);
      expect_close(got[i], want[i].values(), GetParam() + " (" + cap.note + ")");
    }
  }
}

std::vector<std::string> training_case_names() {
  std::vector<std::string> n;
  for (const auto& [name, make] : training_cases()) n.push_back(name);
  return n;
}

INSTANTIATE_TEST_SUITE_P(Backward, OnednnTraining, ::testing::ValuesIn(training_case_names()),
                         [](const auto& info) { return info.param; });

// ClipGrad at its bounds exactly: the gradient passes there (docs/OPS.md),
// where oneDNN's clip backward alone would stop it (alpha < x < beta).
TEST(OnednnTrainingClipGrad, PassesTheGradientAtBothBounds) {
  Plugin onednn(plugin_path("onednn"));
  Case c;
  c.nb = NodeBuilder("ClipGrad", "g");
  in(c, Tensor::of(F32, {6}, {1, 2, 3, 4, 5, 6}));
  in(c, Tensor::of(F32, {6}, {-0.5, 0.75, -0.500001, 0.750001, 0.0, -3.0}));
  c.nb.output(F32, {6}).attr_float("min", -0.5).attr_float("max", 0.75);
  const auto got = run_on(onednn, c.nb, c.inputs);
  EXPECT_EQ(got[0].values(), (std::vector<double>{1, 2, 0, 0, 5, 0}));
}

// Big enough to run threaded (over 1 MFLOP or 256 KiB moved): the batch
// reductions of a training step (dW, dScale, dBias, a Gemm's dW summing
// over the batch, the loss's sums).
const std::map<std::string, Maker>& reduction_cases() {
  static const std::map<std::string, Maker> m = {
      {"Conv2dGradWeight",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Conv2dGradWeight", "dw");
         in(c, rnd(r, dt, {16, 32, 14, 14}));
         in(c, rnd(r, dt, {16, 16, 14, 14}));
         c.nb.output(dt, {32, 16, 3, 3})
             .attr_ints("kernel_shape", {3, 3})
             .attr_ints("pads", {1, 1, 1, 1});
       }},
      {"BatchNormGrad", batchnorm_grad({32, 16, 14, 14})},
      {"BatchNormTraining", batchnorm_training({32, 16, 14, 14})},
      {"LayerNormGrad",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("LayerNormGrad", "ln");
         in(c, rnd(r, dt, {512, 384}));
         in(c, rnd(r, dt, {512, 384}, 2.0));
         in(c, rnd(r, dt, {384}));
         c.nb.output(dt, {512, 384}).output(dt, {384}).output(dt, {384});
       }},
      // A Gemm's weight gradient X^T dY: K is the batch.
      {"Gemm_weight_gradient",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("Gemm", "dw");
         in(c, rnd(r, dt, {1024, 64}));
         in(c, rnd(r, dt, {1024, 32}));
         c.nb.output(dt, {64, 32}).attr_int("transA", 1);
       }},
      // The weight gradient with its bias gradient (bias_gradient, the
      // fusion's form): dB is a batch sum too.
      {"Conv2dGradWeight_bias_gradient", conv_grad_weight_with_bias({16, 32, 14, 14}, 16)},
      // A bias gradient: dY summed over the batch.
      {"ReduceSum_bias_gradient",
       [](Rng& r, ampx_dtype dt, Case& c) {
         c.nb = NodeBuilder("ReduceSum", "db");
         in(c, rnd(r, dt, {4096, 64}));
         c.nb.output(dt, {64}).attr_ints("axes", {0}).attr_int("keepdims", 0);
       }},
  };
  return m;
}

// docs/OPS.md "Determinism": a node's bits do not depend on the thread
// count. Each reduction on plugins with 1, 2 and 3 threads (3: not the
// default of a 2-core machine, and more threads than it has): the same
// bits. Each threaded plugin checked the node at prepare ("checked")
// and launched it with its own count, or with one thread where the check
// pinned it there; the 1-thread plugin checked nothing and ran one thread.
TEST(OnednnTrainingDeterminism, ReductionsGiveTheSameBitsAtEveryThreadCount) {
  Plugin one(plugin_path("onednn"), "threads=1;debug_counters=1");
  Plugin two(plugin_path("onednn"), "threads=2;debug_counters=1");
  Plugin three(plugin_path("onednn"), "threads=3;debug_counters=1");
  for (const auto& [name, make] : reduction_cases()) {
    SCOPED_TRACE(name);
    Rng rng(3);
    Case c;
    make(rng, F32, c);
    // On a primitive (a fast one, or oneDNN's reference kernel: ReduceSum
    // over the batch), never the loop.
    const std::string note = two.capability(c.nb).note;
    EXPECT_EQ(note.find("plain loop"), std::string::npos) << "not on a primitive: " << note;
    const auto want = run_on(one, c.nb, c.inputs);
    EXPECT_EQ(note_number(one, "checked "), 0);
    EXPECT_EQ(note_number(one, "launch threads "), 1) << plugin_note(one);
    for (const auto& [p, threads] : {std::pair<const Plugin*, int>{&two, 2}, {&three, 3}}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      const long long checks = note_number(*p, "checked ");
      const long long pinned = note_number(*p, "pinned ");
      const auto got = run_on(*p, c.nb, c.inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) expect_bits_equal(got[i], want[i]);
      EXPECT_EQ(note_number(*p, "checked "), checks + 1) << plugin_note(*p);
      const bool pinned_now = note_number(*p, "pinned ") == pinned + 1;
      std::cout << "[ threads  ] " << name << " at " << threads
                << " threads: " << (pinned_now ? "pinned to one thread" : "threaded primitive kept")
                << "\n";
      EXPECT_EQ(note_number(*p, "launch threads "), pinned_now ? 1 : threads) << plugin_note(*p);
    }
  }
}

// The check itself, on any CPU: with selfcheck_perturb=1 its threaded run
// differs, so the node runs on one thread, with the bits of a threads=1
// plugin. With deterministic=0 there is no check and the node runs on all
// its threads, perturbed or not.
TEST(OnednnTrainingDeterminism, ANodeWhoseBitsDifferRunsOnOneThread) {
  Plugin one(plugin_path("onednn"), "threads=1");
  Plugin pinned(plugin_path("onednn"), "threads=3;debug_counters=1;selfcheck_perturb=1");
  Plugin fast(plugin_path("onednn"),
              "threads=3;debug_counters=1;selfcheck_perturb=1;deterministic=0");
  EXPECT_NE(plugin_note(fast).find("; unchecked;"), std::string::npos) << plugin_note(fast);
  for (const char* name : {"Conv2dGradWeight", "Gemm_weight_gradient", "BatchNormGrad"}) {
    SCOPED_TRACE(name);
    Rng rng(5);
    Case c;
    reduction_cases().at(name)(rng, F32, c);
    const auto want = run_on(one, c.nb, c.inputs), got = run_on(pinned, c.nb, c.inputs);
    EXPECT_EQ(note_number(pinned, "launch threads "), 1) << plugin_note(pinned);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) expect_bits_equal(got[i], want[i]);
    (void)run_on(fast, c.nb, c.inputs);
    EXPECT_EQ(note_number(fast, "launch threads "), 3) << plugin_note(fast);
  }
  EXPECT_EQ(note_number(pinned, "checked "), 3);
  EXPECT_EQ(note_number(pinned, "pinned "), 3);
}

// The fusion's promise (fusion.cpp, bias_gradient): the weight gradient's
// second output is the ReduceSum of dY autodiff wrote, and its first output
// the plain weight gradient. On cpu_ref and on oneDNN, in f32 and in bf16
// where oneDNN answers the fused node native, each within the dtype's
// tolerance of cpu_ref's unfused nodes.
TEST(OnednnBiasGradient, TheFusedSumIsTheReduceSumItReplaces) {
  Plugin onednn(plugin_path("onednn")), ref(plugin_path("cpu_ref"));
  struct Shapes {
    std::vector<int64_t> dy, x;
  };
  // 11 channels: padded lanes in a blocked layout; 32: whole blocks.
  const Shapes shapes[] = {{{4, 11, 6, 5}, {4, 7, 6, 5}}, {{2, 32, 9, 9}, {2, 16, 9, 9}}};
  auto weight_gradient = [](const Shapes& s, ampx_dtype dt, bool with_bias) {
    NodeBuilder nb("Conv2dGradWeight", "dw");
    nb.input(dt, s.dy).input(dt, s.x).output(dt, {s.dy[1], s.x[1], 3, 3});
    nb.attr_ints("kernel_shape", {3, 3}).attr_ints("pads", {1, 1, 1, 1});
    if (with_bias) nb.output(dt, {s.dy[1]}).attr_int("bias_gradient", 1);
    return nb;
  };
  int bf16_runs = 0;
  for (const Shapes& s : shapes) {
    for (ampx_dtype dt : {F32, BF16}) {
      SCOPED_TRACE(std::to_string(s.dy[1]) + " channels " + dtype_str(dt));
      Rng rng(41);
      const std::vector<Tensor> inputs{rnd(rng, dt, s.dy), rnd(rng, dt, s.x)};
      NodeBuilder fused = weight_gradient(s, dt, true), plain = weight_gradient(s, dt, false);
      NodeBuilder sum("ReduceSum", "db");
      sum.input(dt, s.dy)
          .output(dt, {s.dy[1]})
          .attr_ints("axes", {0, 2, 3})
          .attr_int("keepdims", 0);
      const auto want_dw = run_on(ref, plain, inputs);
      const auto want_db = run_on(ref, sum, {inputs[0]});
      for (const Plugin* p : {&ref, &onednn}) {
        const ampx_capability cap = p->capability(fused);
        if (p == &onednn && dt == F32) EXPECT_EQ(cap.support, AMPX_SUPPORT_NATIVE) << cap.note;
        if (p == &onednn && cap.support != AMPX_SUPPORT_NATIVE) continue;  // bf16 below AVX-512
        if (dt == BF16 && p == &onednn) ++bf16_runs;
        const auto got = run_on(*p, fused, inputs);
        ASSERT_EQ(got.size(), 2u);
        expect_close(got[0], want_dw[0].values(), "dW");
        expect_close(got[1], want_db[0].values(), "dB");
        // And the plugin's own ReduceSum, the node the fusion removed.
        expect_close(got[1], run_on(*p, sum, {inputs[0]})[0].values(), "dB vs its ReduceSum");
      }
    }
  }
  std::cout << "[ measured ] bf16 fused weight gradients native on oneDNN: " << bf16_runs
            << " of 2\n";
}

}  // namespace
}  // namespace ampx::test
