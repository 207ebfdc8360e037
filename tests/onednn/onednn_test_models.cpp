// The three built-in models at O0, every node on onednn:0, against the same
// plan on cpu_ref:0, through the PluginHost, planner and executor.
#include <ampx/amp/planner.hpp>
#include <ampx/exec/device_capabilities.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>

namespace ampx {
namespace {

class OnednnModel : public ::testing::TestWithParam<std::string> {};

TEST_P(OnednnModel, O0MatchesCpuRef) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  const auto& ref_dev = host.device("cpu_ref:0");
  const auto& dev = host.device("onednn:0");
  const Graph g = make_builtin_model(GetParam());
  const auto inputs = random_inputs(g, 11);
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities ref_caps(ref_dev), caps(dev);
  const AmpPlan ref_plan = plan_amp(g, o0, ref_caps);
  const AmpPlan plan = plan_amp(g, o0, caps);
  const auto ref = Executor(ref_plan.graph, ref_dev).run(inputs);
  const auto out = Executor(plan.graph, dev).run(inputs);
  ASSERT_EQ(out.size(), ref.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const double err = max_relative_error(out[i], ref[i]);
    EXPECT_LT(err, ampx::test::model_tolerance(AMPX_DTYPE_F32)) << GetParam();
  }
}

// Fusion (BatchNorm folding, bias and activation epilogues as oneDNN
// post-ops) on and off give the same results, and it does fuse.
TEST_P(OnednnModel, FusionOnAndOffAgree) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  const auto& dev = host.device("onednn:0");
  const Graph g = make_builtin_model(GetParam());
  const auto inputs = random_inputs(g, 12);
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(g, o0, caps);
  const FusedGraph fused = fuse_for_device(plan.graph, caps);
  EXPECT_GT(fused.absorbed_nodes(), 0) << GetParam();
  EXPECT_LT(fused.graph.num_nodes(), plan.graph.num_nodes());
  const auto off = Executor(plan.graph, dev).run(inputs);
  const auto on = Executor(fused.graph, dev).run(inputs);
  ASSERT_EQ(on.size(), off.size());
  for (size_t i = 0; i < on.size(); ++i)
    EXPECT_LT(max_relative_error(on[i], off[i]), ampx::test::model_tolerance(AMPX_DTYPE_F32))
        << GetParam();
}

INSTANTIATE_TEST_SUITE_P(All, OnednnModel, ::testing::Values("cnn", "mlp", "encoder"));

}  // namespace
}  // namespace ampx
