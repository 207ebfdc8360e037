// No reference implementation on a hot path (issue 37): a training step on
// onednn:0 executes no oneDNN implementation that is_reference_impl() calls
// a reference one ("ref...", "simple..."). debug_counters=1's note counts
// them ("reference launches R": the primitives, reorders and write-backs
// that launches executed). Where oneDNN has only such an implementation for
// a node the plugin runs its own loop; for ReduceSum / ReduceMean (the bias
// gradients) that is the vectorised reduction loop (src/reduce_loop.hpp),
// checked here against the reference kernels: the float64 oracle within
// opset/tolerances.hpp, the f32 reference kernels' bits, and the same bits
// at 1, 2 and 3 threads. The suite also runs under ONEDNN_MAX_CPU_ISA=AVX2
// and SSE41 (tests/onednn/CMakeLists.txt).
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/session/trainer.hpp>

#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cifar_cnn.hpp"
#include "onednn_harness.hpp"
#include "op_cases.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;
using train::Dataset;
using train::Trainer;
using train::TrainerOptions;

// n random samples of `sample` shape with random labels in [0, classes).
Dataset random_data(int64_t n, const std::vector<int64_t>& sample, int64_t classes) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), sample.begin(), sample.end());
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  Dataset d;
  d.inputs = {
      "input", {DType::kF32, dims}, std::vector<std::byte>(static_cast<size_t>(elements) * 4)};
  d.labels = {"labels", {DType::kI64, {n}}, std::vector<std::byte>(static_cast<size_t>(n) * 8)};
  auto* x = reinterpret_cast<float*>(d.inputs.data.data());
  for (int64_t i = 0; i < elements; ++i) x[i] = g(rng);
  auto* y = reinterpret_cast<int64_t*>(d.labels.data.data());
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<int64_t>(rng() % static_cast<uint64_t>(classes));
  return d;
}

struct Model {
  std::string name;
  Graph (*make)();
  std::vector<int64_t> sample;
  int64_t classes;
};

Graph builtin_cnn() {
  return make_builtin_model("cnn");
}
Graph builtin_mlp() {
  return make_builtin_model("mlp");
}

const std::vector<Model>& models() {
  static const std::vector<Model> m = {{"cnn", builtin_cnn, {3, 32, 32}, 10},
                                       {"mlp", builtin_mlp, {1024}, 1024},
                                       {"cifar_cnn", cifar_cnn, {3, 32, 32}, 10}};
  return m;
}

// Two SGD-with-momentum steps of batch 32 of `m` on onednn:0 alone, at
// `level` (O2: bf16, kept where the planner keeps it); the plugin's note
// after them.
std::string note_after_steps(const Model& m, AmpLevel level) {
  SessionOptions so;
  so.devices = "onednn:0";
  so.plugin_dirs = {AMPX_PLUGIN_BUILD_DIR};
  so.fallback = false;  // every node of the step on onednn:0
  so.use_costs = false;
  so.use_tuned = false;
  so.trust_plugins = true;
  so.plugin_options = {{"onednn", "debug_counters=1"}};
  Session session(so);
  TrainerOptions o;
  o.batch = 32;
  o.graph.optimizer.kind = train::OptimizerKind::kSgd;
  o.graph.optimizer.lr = 0.01;
  o.graph.optimizer.momentum = 0.9;
  o.seed = 3;
  o.policy.level = level;
  o.policy.half = DType::kBF16;
  Trainer t(session, m.make(), o);
  (void)t.train_epoch(random_data(64, m.sample, m.classes));
  return session.host().device("onednn:0").plugin_note();
}

// The loop runs of debug_counters=1's "kernel runs: primitive P, loop L".
long long loop_runs(const std::string& note) {
  const size_t at = note.find("kernel runs: ");
  unsigned long long p = 0, l = 0;
  if (at == std::string::npos ||
      std::sscanf(note.c_str() + at, "kernel runs: primitive %llu, loop %llu", &p, &l) != 2)
    ADD_FAILURE() << "no kernel runs in the note: " << note;
  return static_cast<long long>(l);
}

// debug_counters=1's "; reference launches R", which the note leaves out
// while R is 0 (it holds 255 bytes).
long long reference_launches(const std::string& note) {
  EXPECT_NE(note.find("kernel runs: "), std::string::npos) << "no counters in the note: " << note;
  const size_t at = note.find("; reference launches ");
  if (at == std::string::npos) return 0;
  long long n = -1;
  EXPECT_EQ(std::sscanf(note.c_str() + at, "; reference launches %lld", &n), 1) << note;
  return n;
}

long long number_after(const std::string& note, const std::string& label) {
  const size_t at = note.find(label);
  long long n = -1;
  if (at == std::string::npos || std::sscanf(note.c_str() + at + label.size(), "%lld", &n) != 1)
    ADD_FAILURE() << "no '" << label << "' in the note: " << note;
  return n;
}

class OnednnNoReference : public ::testing::TestWithParam<std::tuple<size_t, AmpLevel>> {};

TEST_P(OnednnNoReference, TrainingStepsLaunchNoReferenceImplementation) {
  const auto [index, level] = GetParam();
  const Model& m = models()[index];
  const std::string note = note_after_steps(m, level);
  std::cout << "[ note     ] " << m.name << (level == AmpLevel::kO0 ? " O0" : " O2 bf16") << ": "
            << note << "\n";
  EXPECT_GT(number_after(note, "kernel runs: primitive "), 0) << note;
  EXPECT_EQ(reference_launches(note), 0) << note;
}

INSTANTIATE_TEST_SUITE_P(Steps, OnednnNoReference,
                         ::testing::Combine(::testing::Range<size_t>(0, 3),
                                            ::testing::Values(AmpLevel::kO0, AmpLevel::kO2)),
                         [](const ::testing::TestParamInfo<std::tuple<size_t, AmpLevel>>& info) {
                           return models()[std::get<0>(info.param)].name +
                                  (std::get<1>(info.param) == AmpLevel::kO0 ? "_O0" : "_O2_bf16");
                         });

// The counter counts: a Softmax over a non-last axis is still oneDNN 2.6's
// `ref:any` (answered emulated, so a plan avoids it where it can), and
// each launch of it is one reference launch.
TEST(OnednnReferenceLaunches, AreCountedWhereAReferenceImplementationRuns) {
  Plugin p(plugin_path("onednn"), "debug_counters=1");
  NodeBuilder nb("Softmax", "sm");
  nb.input(AMPX_DTYPE_F32, {7, 5}).output(AMPX_DTYPE_F32, {7, 5}).attr_int("axis", 0);
  const std::string answer = p.capability(nb).note;
  if (answer.find("ref") == std::string::npos)
    GTEST_SKIP() << "oneDNN has a fast Softmax over axis 0 here: " << answer;
  Rng rng(3);
  const std::vector<Tensor> inputs = {random_tensor(rng, AMPX_DTYPE_F32, {7, 5})};
  EXPECT_EQ(reference_launches(plugin_note(p)), 0);
  (void)run_on(p, nb, inputs);
  (void)run_on(p, nb, inputs);
  EXPECT_EQ(reference_launches(plugin_note(p)), 2) << plugin_note(p);
}

// ------------------------------------------------------- the reduction loop

struct ReduceCase {
  const char* name;
  const char* op;
  std::vector<int64_t> x;
  std::vector<int64_t> axes;
  int64_t keepdims;
};

// The bias gradients (channel pattern and leading axis), a middle axis, two
// reduced runs around a kept one either way, a row longer than the loop's
// block of outputs, and everything at once.
const std::vector<ReduceCase>& reduce_cases() {
  static const std::vector<ReduceCase> c = {
      {"conv_bias_gradient", "ReduceSum", {32, 64, 16, 16}, {0, 2, 3}, 1},
      {"conv_bias_gradient_mean", "ReduceMean", {8, 24, 7, 7}, {0, 2, 3}, 1},
      {"gemm_bias_gradient", "ReduceSum", {32, 512}, {0}, 0},
      {"middle_axis", "ReduceSum", {3, 5, 7, 2}, {1}, 1},
      {"two_runs_inner_kept", "ReduceMean", {4, 6, 5, 3}, {0, 2}, 0},
      {"two_runs_inner_reduced", "ReduceSum", {4, 6, 5, 3}, {1, 3}, 1},
      {"long_rows", "ReduceSum", {7, 1300}, {0}, 1},
      {"all_axes", "ReduceMean", {2, 3, 1001}, {}, 0},
  };
  return c;
}

NodeBuilder reduce_node(const ReduceCase& c, ampx_dtype dt) {
  std::vector<int64_t> y;
  for (size_t i = 0; i < c.x.size(); ++i) {
    bool reduced = c.axes.empty();
    for (int64_t a : c.axes) reduced = reduced || a == static_cast<int64_t>(i);
    if (!reduced)
      y.push_back(c.x[i]);
    else if (c.keepdims)
      y.push_back(1);
  }
  NodeBuilder nb(c.op, "reduce");
  nb.input(dt, c.x).output(dt, y).attr_int("keepdims", c.keepdims);
  if (!c.axes.empty()) nb.attr_ints("axes", c.axes);
  return nb;
}

// Each case in each float dtype: where the answer is the loop (oneDNN has
// only its reference reduction), the loop ran (a loop run counted, no
// reference launch), within the per-dtype tolerance of the float64
// reference, with the reference kernels' own bits (the same additions in
// the same order), and with the same bits at 1, 2 and 3 threads. Where
// oneDNN has a fast reduction for a case on this ISA, only the tolerance.
TEST(OnednnReduceLoop, MatchesTheReferenceAtEveryThreadCount) {
  Plugin ref(plugin_path("cpu_ref"));
  Plugin one(plugin_path("onednn"), "threads=1;debug_counters=1");
  Plugin two(plugin_path("onednn"), "threads=2;debug_counters=1");
  Plugin three(plugin_path("onednn"), "threads=3;debug_counters=1");
  int on_loop = 0;
  for (const ReduceCase& c : reduce_cases()) {
    for (ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_BF16, AMPX_DTYPE_F16}) {
      SCOPED_TRACE(std::string(c.name) + " " + dtype_str(dt));
      Rng rng(11);
      NodeBuilder nb = reduce_node(c, dt);
      const std::vector<Tensor> inputs = {random_tensor(rng, dt, c.x)};
      const ampx_capability cap = two.capability(nb);
      std::cout << "[ answer   ] " << c.name << " " << dtype_str(dt) << ": " << cap.note << "\n";
      ASSERT_NE(cap.support, AMPX_SUPPORT_UNSUPPORTED) << cap.note;
      const bool loop = std::string(cap.note).find("vectorised loop") != std::string::npos;
      on_loop += loop;
      // The float64 oracle.
      NodeBuilder nb64 = reduce_node(c, AMPX_DTYPE_F64);
      const Tensor x64 = Tensor::of(AMPX_DTYPE_F64, c.x, inputs[0].values());
      const std::vector<double> want = run_node(nb64, {&x64})[0].values();
      const long long loops = loop_runs(plugin_note(two));
      const std::vector<Tensor> got = run_on(two, nb, inputs);
      expect_close(got[0], want, "against float64");
      if (!loop) continue;
      EXPECT_EQ(loop_runs(plugin_note(two)), loops + 1) << plugin_note(two);
      EXPECT_EQ(reference_launches(plugin_note(two)), 0) << plugin_note(two);
      expect_bits_equal(got[0], run_on(ref, nb, inputs)[0]);
      expect_bits_equal(run_on(one, nb, inputs)[0], got[0]);
      expect_bits_equal(run_on(three, nb, inputs)[0], got[0]);
      // Threaded where the work is worth it (PrimitiveKernel::threads_for).
      if (c.x.size() == 4 && c.x[0] == 32)
        EXPECT_EQ(number_after(plugin_note(three), "launch threads "), 3) << plugin_note(three);
    }
  }
  // The bias gradients reduce leading axes, which oneDNN 2.6's jit
  // reduction never takes: at least those run on the loop on every ISA.
  EXPECT_GE(on_loop, 2);
  std::cout << "[ loop     ] " << on_loop << " of " << reduce_cases().size() * 3
            << " cases on the vectorised loop\n";
}

}  // namespace
}  // namespace ampx::test
