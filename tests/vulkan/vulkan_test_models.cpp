// The three built-in models, and the ONNX test models that must run with no
// node left to another device (mobilenet, encoder, resnet), on vulkan:0
// through the PluginHost, planner and executor: O0 against the same plan on
// cpu_ref:0 (f32 tolerance), O2 against cpu_ref's O0 (model tolerance of
// f16), with every 16-bit node the policy wants kept 16-bit when the device
// has native f16.
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/npy.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <profiled_run.hpp>
#include <tolerances.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

// The plugins of this build tree only.
plugins::PluginHost build_tree_host() {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  return plugins::PluginHost(opts);
}

class VulkanModel : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanModel, O0AndO2MatchCpuRef) {
  const plugins::PluginHost host = build_tree_host();
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

// A profiled run on the device: every kernel timed by the device's own
// timestamps (ABI 1.1 kernel_launch_timed) where the compute queue has
// them, and the results bit-identical to a plain run's.
TEST_P(VulkanModel, ProfiledRunUsesDeviceTimestamps) {
  const plugins::PluginHost host = build_tree_host();
  if (!host.find_device("vulkan:0")) GTEST_SKIP() << "no vulkan:0 on this machine";
  const auto& dev = host.device("vulkan:0");
  const Graph g = make_builtin_model(GetParam());
  const auto inputs = random_inputs(g, 12);
  AmpPolicy o2;
  o2.level = AmpLevel::kO2;
  DeviceCapabilities caps(dev);
  const AmpPlan plan = plan_amp(g, o2, caps);
  Executor ex(plan.graph, dev);
  const auto plain = ex.run(inputs);
  test::expect_profiled_run_matches(ex, inputs, plain, plugins::Kernel::TimingMethod::kDevice);
}

INSTANTIATE_TEST_SUITE_P(All, VulkanModel, ::testing::Values("cnn", "mlp", "encoder"));

// Copy ordering across two devices of one plugin (backend_api.h, "Ordering
// and completion"): with replicas=2 the plugin shows vulkan:0 and vulkan:1,
// two logical devices with their own deferred command streams. Every node is
// pinned to the device its predecessor is not on, so every value crosses,
// and the executor reuses a copied value's range at once: a copy that had
// not read its source by then would give wrong results, not a crash.
TEST(VulkanTwoDevices, AlternatingPlacementMatchesCpuRef) {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  opts.plugin_options["vulkan"] = "replicas=2";
  const plugins::PluginHost host(opts);
  if (!host.find_device("vulkan:1")) GTEST_SKIP() << "no vulkan device on this machine";
  const auto& ref_dev = host.device("cpu_ref:0");
  const auto& vk0 = host.device("vulkan:0");
  const auto& vk1 = host.device("vulkan:1");
  for (const char* model : {"cnn", "encoder"}) {
    const Graph g = make_builtin_model(model);
    const auto inputs = random_inputs(g, 21);
    AmpPolicy o0;
    o0.level = AmpLevel::kO0;
    DeviceCapabilities ref_caps(ref_dev), caps0(vk0), caps1(vk1);
    const auto want = Executor(plan_amp(g, o0, ref_caps).graph, ref_dev).run(inputs);

    const PlanDevice devices[] = {
        {&caps0, nullptr, false}, {&caps1, nullptr, false}, {&ref_caps, nullptr, true}};
    std::vector<DevicePin> pins;
    for (size_t i = 0; i < g.nodes().size(); ++i)
      pins.push_back({g.nodes()[i].name, static_cast<int>(i % 2)});
    const plugins::Device* runtime[] = {&vk0, &vk1, &ref_dev};
    for (AmpLevel level : {AmpLevel::kO0, AmpLevel::kO2}) {
      AmpPolicy policy;
      policy.level = level;
      const AmpPlan plan = plan_amp(g, policy, devices, {}, pins);
      Executor ex(plan.graph, runtime);
      for (int run = 0; run < 3; ++run) {  // later runs reuse every buffer
        const auto got = ex.run(inputs);
        ASSERT_EQ(got.size(), want.size());
        const double tol =
            test::model_tolerance(level == AmpLevel::kO0 ? AMPX_DTYPE_F32 : AMPX_DTYPE_F16);
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_LT(max_relative_error(got[i], want[i]), tol) << model << " run " << run;
      }
      EXPECT_GT(ex.stats().copies, static_cast<int>(g.nodes().size()) / 2) << model;
      EXPECT_GT(ex.stats().kernels_per_device[0], 0);
      EXPECT_GT(ex.stats().kernels_per_device[1], 0);
    }
  }
}

// tests/onnx/make_models.py's models (the OnnxModels.Generate fixture) with
// their --input-shape pins and saved inputs, planned for vulkan:0 alone: the
// planner throws if any node has no Vulkan kernel (what `ampx run --device
// vulkan:0 --no-fallback` reports), so every node runs there, at O0 and O2.
class VulkanOnnxModel : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanOnnxModel, RunsEveryNodeOnVulkan) {
  namespace fs = std::filesystem;
  const fs::path dir = AMPX_ONNX_MODELS_DIR;
  const fs::path file = dir / (GetParam() + ".onnx");
  if (!fs::exists(file)) GTEST_SKIP() << file << " missing: run the OnnxModels.Generate test";
  const plugins::PluginHost host = build_tree_host();
  if (!host.find_device("vulkan:0")) GTEST_SKIP() << "no vulkan:0 on this machine";
  const auto& ref_dev = host.device("cpu_ref:0");
  const auto& dev = host.device("vulkan:0");

  ModelOptions mo;
  std::ifstream shapes(dir / (GetParam() + ".shapes"));
  for (std::string pin; shapes >> pin;) {
    const size_t eq = pin.find('=');
    mo.input_shapes[pin.substr(0, eq)] = parse_shape(pin.substr(eq + 1));
  }
  const Graph g = load_model(file.string(), mo);
  auto inputs = random_inputs(g, 11);
  for (auto& t : inputs) {
    const fs::path npy = dir / (GetParam() + ".inputs") / (t.name + ".npy");
    if (!fs::exists(npy)) continue;
    std::string name = t.name;
    t = read_npy(npy);
    t.name = std::move(name);
  }

  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities ref_caps(ref_dev), caps(dev);
  const auto ref = Executor(plan_amp(g, o0, ref_caps).graph, ref_dev).run(inputs);
  AmpPolicy o2;
  o2.level = AmpLevel::kO2;
  for (const AmpPolicy& policy : {o0, o2}) {
    SCOPED_TRACE(policy.level == AmpLevel::kO0 ? "O0" : "O2");
    const AmpPlan plan = plan_amp(g, policy, caps);  // throws on a node vulkan:0 cannot run
    if (policy.level == AmpLevel::kO2) {
      EXPECT_EQ(plan.summary.effective_16bit, plan.summary.intended_16bit);
    }
    const auto out = Executor(plan.graph, dev).run(inputs);
    ASSERT_EQ(out.size(), ref.size());
    for (size_t i = 0; i < out.size(); ++i) {
      SCOPED_TRACE(out[i].name);
      if (!is_float(out[i].type.dtype)) {
        // ArgMax of logits: exact at O0; at O2 a near tie may flip, as in
        // tests/onnx/run_onnx_models.py (up to a tenth of the elements).
        const auto got = to_doubles(out[i]), want = to_doubles(ref[i]);
        ASSERT_EQ(got.size(), want.size());
        size_t wrong = 0;
        for (size_t k = 0; k < got.size(); ++k) wrong += got[k] != want[k];
        EXPECT_LE(wrong, policy.level == AmpLevel::kO0 ? 0 : std::max<size_t>(1, got.size() / 10));
      } else {
        EXPECT_LT(
            max_relative_error(out[i], ref[i]),
            test::model_tolerance(policy.level == AmpLevel::kO0 ? AMPX_DTYPE_F32 : AMPX_DTYPE_F16));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, VulkanOnnxModel, ::testing::Values("mobilenet", "encoder", "resnet"));

}  // namespace
}  // namespace ampx
