// The three built-in models on vulkan:0 through the PluginHost, planner and
// executor: O0 against the same plan on cpu_ref:0 (f32 tolerance), O2
// against cpu_ref's O0 (model tolerance of f16), with every 16-bit node the
// policy wants kept 16-bit when the device has native f16.
#include <ampx/amp/planner.hpp>
#include <ampx/exec/device_capabilities.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>

#include <tolerances.hpp>

#include <gtest/gtest.h>

#if defined(__SANITIZE_ADDRESS__)
// See tests/vulkan/CMakeLists.txt: lavapipe's JIT-compiled shader code
// leaves an allocation LeakSanitizer cannot attribute; leak detection is off
// for this binary only (ASan's other checks and UBSan stay on).
extern "C" __attribute__((visibility("default"))) int __lsan_is_turned_off() {
  return 1;
}
#endif

namespace ampx {
namespace {

class VulkanModel : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanModel, O0AndO2MatchCpuRef) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  const plugins::PluginHost host(opts);
  if (!host.find_device("vulkan:0")) GTEST_SKIP() << "no vulkan:0 on this machine";
  const auto& ref_dev = host.device("cpu_ref:0");
  const auto& dev = host.device("vulkan:0");
  const Graph g = make_builtin_model(GetParam());
  const auto inputs = random_inputs(g, 11);
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities ref_caps(ref_dev), caps(dev);
  const AmpPlan ref_plan = plan_amp(g, o0, ref_caps);
  const auto ref = Executor(ref_plan.graph, ref_dev).run(inputs);

  const AmpPlan plan0 = plan_amp(g, o0, caps);
  const auto out0 = Executor(plan0.graph, dev).run(inputs);
  ASSERT_EQ(out0.size(), ref.size());
  for (size_t i = 0; i < out0.size(); ++i)
    EXPECT_LT(max_relative_error(out0[i], ref[i]), test::model_tolerance(AMPX_DTYPE_F32));

  AmpPolicy o2;
  o2.level = AmpLevel::kO2;
  const AmpPlan plan2 = plan_amp(g, o2, caps);
  EXPECT_EQ(plan2.summary.effective_16bit, plan2.summary.intended_16bit)
      << "lavapipe and every device with shaderFloat16 run all of them natively";
  EXPECT_GT(plan2.summary.effective_16bit, 0);
  Executor ex(plan2.graph, dev);
  for (int run = 0; run < 2; ++run) {  // a second run reuses sets, buffers, pipelines
    const auto out2 = ex.run(inputs);
    ASSERT_EQ(out2.size(), ref.size());
    for (size_t i = 0; i < out2.size(); ++i)
      EXPECT_LT(max_relative_error(out2[i], ref[i]), test::model_tolerance(AMPX_DTYPE_F16));
  }
}

INSTANTIATE_TEST_SUITE_P(All, VulkanModel, ::testing::Values("cnn", "mlp", "encoder"));

}  // namespace
}  // namespace ampx
