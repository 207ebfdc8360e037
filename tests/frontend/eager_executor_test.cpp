// The two executors of one ExecutionPlan (exec/plan_executor.hpp): they agree
// on every output within the plan's tolerance, and differ where they must,
// counted at the C ABI by test_native (AMPX_TEST_NATIVE_COUNTERS): the
// compiled one prepares and allocates once at load and nothing per run; the
// eager one prepares one kernel per node and allocates per node at every run.
#include <ampx/amp/planner.hpp>
#include <ampx/exec/eager_executor.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/lower.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <test_native_host.hpp>
#include <tolerances.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <tuple>

using namespace ampx;

namespace {

plugins::PluginHost counting_host(const char* missing = "") {
  return test::test_native_host({.missing_ops = missing, .counters = test::NativeCounters::kOn});
}

// What the host asked of test_native's C ABI so far.
struct AbiCounts {
  uint64_t prepares = 0;
  uint64_t allocs = 0;
};
AbiCounts abi_counts(const plugins::Device& dev) {
  AbiCounts c;
  unsigned long long p = 0, a = 0;
  const std::string note = dev.plugin_note();
  if (std::sscanf(note.c_str(), "kernel_prepare=%llu buffer_alloc=%llu", &p, &a) != 2)
    ADD_FAILURE() << "test_native reports no counters: '" << note << "'";
  c.prepares = p;
  c.allocs = a;
  return c;
}

AmpPolicy policy(AmpLevel l) {
  AmpPolicy p;
  p.level = l;
  return p;
}

// The plan's tolerance: its 16-bit dtype's model tolerance when any node
// runs 16-bit, else f32's.
double plan_tolerance(const AmpPlan& plan, const AmpPolicy& p) {
  return ampx::test::model_tolerance(plan.summary.effective_16bit > 0 ? to_c(p.half)
                                                                      : AMPX_DTYPE_F32);
}

// Per eager run on the devices of `plan`: one buffer per data input, node
// output and copy on `device`.
uint64_t eager_allocs_per_run(const ExecutionPlan& plan, int device) {
  const Graph& g = *plan.graph;
  uint64_t n = 0;
  std::vector<bool> state_input(g.inputs().size(), false);
  for (const StateBinding& b : plan.state) state_input[b.input] = true;
  for (size_t i = 0; i < g.inputs().size(); ++i)
    n += !state_input[i] && plan.home[static_cast<size_t>(g.inputs()[i])] == device ? 1 : 0;
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id)
    if (plan.node_device[static_cast<size_t>(id)] == device) n += g.node(id).outputs.size();
  for (const ExecutionStep& s : plan.steps)
    if (const auto* c = std::get_if<CopyStep>(&s)) n += c->to == device ? 1 : 0;
  return n;
}

class EagerAndCompiled : public ::testing::TestWithParam<std::tuple<std::string, AmpLevel>> {};

TEST_P(EagerAndCompiled, AgreeWithinThePlansToleranceAndDifferInPreparesAndAllocations) {
  const auto& [model, level] = GetParam();
  const auto host = counting_host();
  const auto& dev = host.device("test_native:0");
  const plugins::Device* devices[] = {&dev};
  DeviceCapabilities caps(dev);
  const Graph g = make_builtin_model(model);
  const AmpPolicy pol = policy(level);
  const AmpPlan plan = plan_amp(g, pol, caps);
  CapabilitySource* sources[] = {&caps};
  const FusedGraph fused = fuse_placed(plan.graph, sources);
  const ExecutionPlan compiled_plan = lower(fused.graph, lowering_devices(devices));
  const ExecutionPlan eager_plan = lower(plan.graph, lowering_devices(devices));

  const AbiCounts before = abi_counts(dev);
  const auto compiled = make_executor(compiled_plan, ExecutionMode::kCompiled, devices);
  const AbiCounts loaded = abi_counts(dev);
  EXPECT_EQ(loaded.prepares - before.prepares,
            static_cast<uint64_t>(compiled->stats().kernels + compiled->stats().folded_nodes))
      << "the compiled executor prepares every kernel once, at load";
  const auto eager = make_executor(eager_plan, ExecutionMode::kEager, devices);
  const AbiCounts eager_loaded = abi_counts(dev);
  EXPECT_EQ(eager_loaded.prepares, loaded.prepares) << "eager prepares nothing ahead";

  for (uint64_t seed : {3u, 4u}) {
    const auto inputs = random_inputs(g, seed);
    const AbiCounts c0 = abi_counts(dev);
    const auto want = compiled->run(inputs);
    const AbiCounts c1 = abi_counts(dev);
    EXPECT_EQ(c1.prepares, c0.prepares) << "compiled: no prepare per run";
    EXPECT_EQ(c1.allocs, c0.allocs) << "compiled: no allocation per run (the arena)";
    const auto got = eager->run(inputs);
    const AbiCounts c2 = abi_counts(dev);
    EXPECT_EQ(c2.prepares - c1.prepares, plan.graph.num_nodes())
        << "eager: one kernel prepared per node per run";
    EXPECT_EQ(c2.allocs - c1.allocs, eager_allocs_per_run(eager_plan, 0))
        << "eager: a buffer of its own per input, node output and copy";
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].name, want[i].name);
      EXPECT_LT(max_relative_error(got[i], want[i]), plan_tolerance(plan, pol))
          << model << " output " << want[i].name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Builtin, EagerAndCompiled,
                         ::testing::Combine(::testing::Values("mlp", "cnn"),
                                            ::testing::Values(AmpLevel::kO0, AmpLevel::kO2)));

// Across two devices the eager executor makes the plan's copies, each into
// a buffer of its own, and agrees with the compiled run.
TEST(EagerExecutor, RunsAPlacedPlanWithItsCopies) {
  const auto host = counting_host("Relu,Softmax,LayerNorm,BatchNorm");
  const auto& native = host.device("test_native:0");
  const auto& ref = host.device("cpu_ref:0");
  DeviceCapabilities native_caps(native), ref_caps(ref);
  const Graph g = make_builtin_model("cnn");
  const PlanDevice plan_devices[] = {{&native_caps, nullptr, false}, {&ref_caps, nullptr, true}};
  const plugins::Device* devices[] = {&native, &ref};
  const AmpPlan plan = plan_amp(g, policy(AmpLevel::kO0), plan_devices);
  const ExecutionPlan lowered = lower(plan.graph, lowering_devices(devices));
  ASSERT_GT(lowered.copies(), 0);
  Executor compiled(lowered, devices);
  EagerExecutor eager(lowered, devices);
  const auto inputs = random_inputs(g, 9);
  const auto want = compiled.run(inputs);
  const AbiCounts c0 = abi_counts(native);
  const auto got = eager.run(inputs);
  const AbiCounts c1 = abi_counts(native);
  EXPECT_EQ(c1.allocs - c0.allocs, eager_allocs_per_run(lowered, 0));
  EXPECT_EQ(eager.stats().copies, lowered.copies());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].data, want[i].data);
}

}  // namespace
