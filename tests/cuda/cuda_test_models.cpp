// The three built-in models on cuda:0 through the PluginHost, planner and
// executor: O0 (every node f32) and O2 in f16 and bf16, against the O0 plan
// on cpu_ref:0. Skips without a GPU.
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <iostream>

#include <profiled_run.hpp>
#include <tolerances.hpp>

#include "cuda_harness.hpp"

namespace ampx {
namespace {

struct ModelCase {
  std::string model;
  AmpLevel level;
  DType half;
};

class CudaModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(CudaModel, MatchesCpuRefO0) {
  AMPX_REQUIRE_CUDA_DEVICE();
  const ModelCase& mc = GetParam();
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {test::plugin_dir()};
  opts.use_env_path = false;
  opts.use_default_dirs = false;
  const plugins::PluginHost host(opts);
  const auto& ref_dev = host.device("cpu_ref:0");
  const auto& dev = host.device("cuda:0");
  const Graph g = make_builtin_model(mc.model);
  const auto inputs = random_inputs(g, 11);
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  AmpPolicy policy;
  policy.level = mc.level;
  policy.half = mc.half;
  DeviceCapabilities ref_caps(ref_dev), caps(dev);
  const AmpPlan ref_plan = plan_amp(g, o0, ref_caps);
  const AmpPlan plan = plan_amp(g, policy, caps);
  const auto ref = Executor(ref_plan.graph, ref_dev).run(inputs);
  Executor exec(plan.graph, dev);
  const auto out = exec.run(inputs);
  const auto again = exec.run(inputs);  // a second run reuses everything
  ASSERT_EQ(out.size(), ref.size());
  const ampx_dtype dt = mc.level == AmpLevel::kO0 ? AMPX_DTYPE_F32
                        : mc.half == DType::kBF16 ? AMPX_DTYPE_BF16
                                                  : AMPX_DTYPE_F16;
  for (size_t i = 0; i < out.size(); ++i) {
    const double err = max_relative_error(out[i], ref[i]);
    std::cout << "[ model    ] " << mc.model << " " << amp_level_name(mc.level) << " "
              << test::dtype_str(dt) << ": max relative error " << err << "\n";
    EXPECT_LT(err, test::model_tolerance(dt)) << mc.model;
    EXPECT_EQ(max_relative_error(again[i], out[i]), 0.0) << "runs differ";
  }
  // Profiled: CUDA events time every kernel on the device (ABI 1.1
  // kernel_launch_timed), and the results are those of a plain run.
  test::expect_profiled_run_matches(exec, inputs, out, plugins::Kernel::TimingMethod::kDevice);
}

std::vector<ModelCase> model_cases() {
  std::vector<ModelCase> v;
  for (const char* m : {"cnn", "mlp", "encoder"}) {
    v.push_back({m, AmpLevel::kO0, DType::kF16});
    v.push_back({m, AmpLevel::kO2, DType::kF16});
    v.push_back({m, AmpLevel::kO2, DType::kBF16});
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, CudaModel, ::testing::ValuesIn(model_cases()), [](const auto& info) {
  const ModelCase& c = info.param;
  return c.model + "_" + std::string(amp_level_name(c.level)) +
         (c.level == AmpLevel::kO0 ? ""
          : c.half == DType::kBF16 ? "_bf16"
                                   : "_f16");
});

}  // namespace
}  // namespace ampx
