// The driver's loop budget (backends/vulkan/README.md, "Loop budget"):
// llvmpipe (lavapipe, the device here) ends a shader invocation's loops
// silently after 65,535 passes, so a kernel that loops longer returns wrong
// values without an error. Every node whose rows are longer than that must
// either give cpu_ref's values (the reductions run in two passes) or be
// declined with the reason, never answered and wrong; with the budget forced
// small (AMPX_VULKAN_LOOP_BUDGET) the refusal path runs on any driver.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "op_cases.hpp"
#include "run_on_plugin.hpp"
#include "scoped_env.hpp"
#include "vulkan_harness.hpp"

namespace ampx::test {
namespace {

using namespace op_cases;
constexpr ampx_dtype F32 = AMPX_DTYPE_F32, I64 = AMPX_DTYPE_I64;

// A row whose largest element is its last: a loop cut short picks an
// earlier one (ArgMax), and a running sum stops growing (CumSum).
Tensor rising(int64_t rows, int64_t len) {
  std::vector<double> v(static_cast<size_t>(rows * len));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < len; ++j) v[static_cast<size_t>(r * len + j)] = 1e-3 * j - r;
  return Tensor::of(F32, {rows, len}, v);
}

// Multiples of 1/4 in [-2, 2]: every partial sum (and sum of squares) of up
// to 2^20 of them is exact in f32, so a two-pass reduction and cpu_ref's
// sequential f32 sum agree exactly, however long the row.
Tensor quarters(Rng& r, std::vector<int64_t> dims) {
  Tensor t = rnd(r, F32, dims, 2.0);
  std::vector<double> v = t.values();
  for (double& x : v) x = std::round(x * 4) / 4;
  return Tensor::of(F32, std::move(dims), v);
}

Case reduce_case(const char* op, Tensor x, std::vector<int64_t> axes, std::vector<int64_t> out) {
  Case c;
  c.nb = NodeBuilder(op, "n");
  in(c, std::move(x));
  c.nb.output(F32, std::move(out)).attr_ints("axes", std::move(axes));
  return c;
}

Case axis_case(const char* op, Tensor x, ampx_dtype out_dt, std::vector<int64_t> out) {
  Case c;
  c.nb = NodeBuilder(op, "n");
  in(c, std::move(x));
  c.nb.output(out_dt, std::move(out)).attr_int("axis", 1);
  return c;
}

// Runs the case if Vulkan takes it (then it must match cpu_ref: exactly for
// ArgMax's indices); a declined node must say it is the loop budget.
// Returns whether Vulkan ran it.
bool matches_or_declined(const Plugin& vk, const Plugin& ref, Case& c) {
  SCOPED_TRACE(c.nb.op_type());
  const auto a = vk.capability(c.nb);
  if (a.support == AMPX_SUPPORT_UNSUPPORTED) {
    EXPECT_NE(std::string(a.note).find("budget"), std::string::npos) << a.note;
    return false;
  }
  const auto want = run_on(ref, c.nb, c.inputs);
  const auto got = run_on(vk, c.nb, c.inputs);
  if (c.nb.op_type() == "ArgMax")
    EXPECT_EQ(got[0].values(), want[0].values());
  else
    expect_close(got[0], want[0].values(), c.nb.op_type());
  return true;
}

std::vector<Case> long_rows(int64_t len) {
  Rng r(7);
  std::vector<Case> cases;
  cases.push_back(reduce_case("ReduceSum", quarters(r, {2, len}), {1}, {2, 1}));
  cases.push_back(reduce_case("ReduceMean", quarters(r, {3, len}), {1}, {3, 1}));
  cases.push_back(reduce_case("ReduceMax", rising(2, len), {1}, {2, 1}));
  cases.push_back(reduce_case("ReduceLogSumExp", rnd(r, F32, {2, len}), {1}, {2, 1}));
  cases.push_back(reduce_case("ReduceSumSquare", quarters(r, {1, 3, len / 3}), {1, 2}, {1, 1, 1}));
  cases.push_back(axis_case("ArgMax", rising(2, len), I64, {2, 1}));
  cases.push_back(axis_case("CumSum", rising(2, len), F32, {2, len}));
  return cases;
}

// lavapipe's budget, or none (another driver): then everything runs.
bool has_budget(const Plugin& vk) {
  return plugin_note(vk).find("loops unbounded") == std::string::npos;
}

TEST(VulkanLoopBudget, RowsPastTheBudgetMatchCpuRefOrAreDeclined) {
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  const bool budget = has_budget(vk);
  // 100,000 elements per row: past 65,535 whatever a loop pass costs.
  for (Case& c : long_rows(100000)) {
    const bool ran = matches_or_declined(vk, ref, c);
    // The reductions split into two passes; the row walkers decline.
    const bool reduction = c.nb.op_type().starts_with("Reduce");
    if (budget) EXPECT_EQ(ran, reduction) << c.nb.op_type();
  }
  // Softmax: 64 invocations share a row, three passes each. Rows of zeros:
  // cpu_ref's sequential f32 exp-sum of a long random row is itself off by
  // ~3e-5; a cut loop would still leave the sum short.
  auto zeros = [](int64_t rows, int64_t len) {
    return Tensor::of(F32, {rows, len}, std::vector<double>(static_cast<size_t>(rows * len), 0.0));
  };
  Case soft = axis_case("Softmax", zeros(1, 1400000), F32, {1, 1400000});
  EXPECT_EQ(matches_or_declined(vk, ref, soft), !budget);
  Case fits = axis_case("Softmax", zeros(2, 600000), F32, {2, 600000});
  EXPECT_TRUE(matches_or_declined(vk, ref, fits));
  expect_no_validation_errors(vk);
}

// A ReduceSum of ones over 60,000 elements gave 21,845 on lavapipe before the
// budget (three loop passes per element): now the two-pass plan, exact.
TEST(VulkanLoopBudget, ReduceSumOfOnesIsExact) {
  Plugin vk(plugin_path("vulkan"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  for (int64_t n : {60000, 200000}) {
    Case c =
        reduce_case("ReduceSum", Tensor::of(F32, {1, n}, std::vector<double>(n, 1.0)), {1}, {1, 1});
    ASSERT_EQ(vk.capability(c.nb).support, AMPX_SUPPORT_NATIVE);
    EXPECT_EQ(run_on(vk, c.nb, c.inputs)[0].values(), std::vector<double>{double(n)});
  }
  expect_no_validation_errors(vk);
}

// AMPX_VULKAN_LOOP_BUDGET=1000 on any driver: the note and fingerprint say
// so; short rows still run, reductions split into chunks of ~160, and what
// would loop longer is declined with the reason.
TEST(VulkanLoopBudget, ForcedBudgetSplitsOrDeclines) {
  ScopedEnv force("AMPX_VULKAN_LOOP_BUDGET", "1000");
  Plugin vk(plugin_path("vulkan")), ref(plugin_path("cpu_ref"));
  AMPX_SKIP_WITHOUT_VULKAN(vk);
  EXPECT_NE(plugin_note(vk).find("loops 1000 (forced)"), std::string::npos) << plugin_note(vk);
  ampx_device_props props{};
  props.struct_size = sizeof props;
  vk.ok(vk.api->device_props(vk.plugin, 0, &props));
  EXPECT_NE(std::string(props.fingerprint).find("/loops-1000"), std::string::npos);
  for (Case& c : long_rows(300)) EXPECT_TRUE(matches_or_declined(vk, ref, c));
  for (Case& c : long_rows(3000)) {
    const bool reduction = c.nb.op_type().starts_with("Reduce");
    EXPECT_EQ(matches_or_declined(vk, ref, c), reduction) << c.nb.op_type();
  }
  // f16 storage: the partials stay f32 in the scratch buffer.
  {
    Rng r(9);
    Case c;
    c.nb = NodeBuilder("ReduceMean", "n");
    in(c, Tensor::of(AMPX_DTYPE_F16, {2, 3000}, quarters(r, {2, 3000}).values()));
    c.nb.output(AMPX_DTYPE_F16, {2, 1}).attr_ints("axes", {1});
    if (vk.capability(c.nb).support != AMPX_SUPPORT_UNSUPPORTED)
      EXPECT_TRUE(matches_or_declined(vk, ref, c));
  }
  // Past even the final pass's budget: 1,000,000 / ~160 chunks.
  Rng r(5);
  Case huge = reduce_case("ReduceSum", rnd(r, F32, {1, 1000000}), {1}, {1, 1});
  EXPECT_FALSE(matches_or_declined(vk, ref, huge));
  // The contractions' K loops and the pooling window count too.
  NodeBuilder gemm("Gemm", "n");
  gemm.input(F32, {4, 4000}).input(F32, {4000, 4}).output(F32, {4, 4});
  NodeBuilder pool("MaxPool", "n");
  pool.input(F32, {1, 1, 40, 40}).output(F32, {1, 1, 1, 1}).attr_ints("kernel_shape", {40, 40});
  for (NodeBuilder* b : {&gemm, &pool}) {
    const auto a = vk.capability(*b);
    EXPECT_EQ(a.support, AMPX_SUPPORT_UNSUPPORTED) << a.note;
    EXPECT_NE(std::string(a.note).find("-iteration budget"), std::string::npos) << a.note;
  }
  expect_no_validation_errors(vk);
}

}  // namespace
}  // namespace ampx::test
