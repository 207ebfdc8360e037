// `ampx plan --lowered` prints the ExecutionPlan `ampx run` executes, and
// `ampx run --eager` runs the same plan node by node (exec/eager_executor.hpp)
// and passes the same check against the f32 reference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace ampx_cli_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kMissingRelu = kNative + " AMPX_TEST_MISSING_OPS=Relu";

TEST(PlanCli, LoweredPrintsStepsCopiesAndLoadTimeValues) {
  const std::string args = kTestDir + " plan builtin:cnn --device test_native:0,cpu_ref:0 --amp O2";
  const Result r = ampx(args + " --lowered", kMissingRelu);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("execution plan of 'cnn': 26 steps (20 kernels, 6 copies)"));
  EXPECT_THAT(r.out, HasSubstr("at load (8 nodes):"));
  EXPECT_THAT(r.out, HasSubstr("Copy bn1 test_native:0 -> cpu_ref:0 (through host): 2097152 B"));
  EXPECT_THAT(r.out, HasSubstr("Relu relu1 on cpu_ref:0 -> relu1 f32[8x64x32x32] @"));
  EXPECT_THAT(ampx(args, kMissingRelu).out, Not(HasSubstr("execution plan of")));
}

// 16-bit on test_native: eager runs every node at every run (the 8 weight
// Casts the compiled run folds at load included) and agrees with the f32
// reference within the plan's tolerance, as the compiled run does.
TEST(RunCli, EagerRunsEveryNodeAndPassesTheCheck) {
  const std::string args = kTestDir + " run builtin:cnn --device test_native:0 --amp O2";
  const Result compiled = ampx(args, kNative);
  const Result eager = ampx(args + " --eager", kNative);
  ASSERT_EQ(compiled.code, 0) << compiled.err;
  ASSERT_EQ(eager.code, 0) << eager.err;
  EXPECT_THAT(eager.out, HasSubstr("kernels per run: 26; fused: none"));
  EXPECT_THAT(compiled.out, Not(HasSubstr("kernels per run: 26;")));
  EXPECT_THAT(eager.out, HasSubstr("(tolerance 1.0e-02: the plan computes in f16)"));
}

}  // namespace
}  // namespace ampx_cli_test
