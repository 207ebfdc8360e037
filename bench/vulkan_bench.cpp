// Vulkan backend numbers for docs/benchmarks.md (a timing main, not Google
// Benchmark: lavapipe runs take seconds and a handful of iterations is all
// there is time for).
//   1. GEMM GFLOP/s, f32 and f16, square sizes: MatMul launched through the
//      C ABI, prepared once, timed over launch + synchronize.
//   2. The built-in models: O0, effective O2 and capability-blind O2 (the
//      planner told `native` for every node the device can run at all), on
//      the device as it is and with shaderFloat16 masked
//      (AMPX_VULKAN_MASK_FEATURES), median of a few runs, error vs cpu_ref O0.
// Usage: ampx_vulkan_bench [--quick] [--gemm-only | --models-only]
// AMPX_VULKAN_GEMM_KERNEL=tiled|blocked picks the GEMM/conv kernel family
// (default: blocked on CPU devices such as lavapipe, tiled on GPUs).
#include <ampx/amp/planner.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include "bench_timing.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace ampx;
using bench::Clock;
using bench::median;
using bench::ms_since;

namespace {

// Answers `native` for whatever the device runs at all: what a framework
// that trusts the policy and not the device would plan.
class BlindCapabilities final : public CapabilitySource {
 public:
  explicit BlindCapabilities(const plugins::Device& d) : real_(d) {}
  std::string device_id() const override { return real_.device_id(); }
  Answer query(const ampx_node_desc& node) override {
    Answer a = real_.query(node);
    if (a.support == AMPX_SUPPORT_EMULATED) a.support = AMPX_SUPPORT_NATIVE;
    return a;
  }

 private:
  DeviceCapabilities real_;
};

plugins::PluginHost make_host() {
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_PLUGIN_BUILD_DIR};
  opts.use_env_path = false;
  return plugins::PluginHost(opts);
}

void bench_gemm(const plugins::Device& dev, const std::vector<int64_t>& sizes, int iters) {
  std::printf(
      "\n| size (M=N=K) | f32 ms | f32 GFLOP/s | f16 ms | f16 GFLOP/s | f16/f32 "
      "|\n|---|---|---|---|---|---|\n");
  for (int64_t n : sizes) {
    double ms[2] = {0, 0};
    for (int h = 0; h < 2; ++h) {
      const DType dt = h ? DType::kF16 : DType::kF32;
      GraphBuilder b("gemm", 3);
      const ValueId a = b.input("a", dt, {n, n});
      const ValueId w = b.input("b", dt, {n, n});
      b.output(b.add(OpType::kMatMul, "mm", {a, w}));
      const Graph g = std::move(b).build();
      AmpPolicy o0;
      o0.level = AmpLevel::kO0;
      DeviceCapabilities caps(dev);
      const AmpPlan plan = plan_amp(g, o0, caps);
      Executor ex(plan.graph, dev);
      const auto in = random_inputs(plan.graph, 3);
      ex.run(in);  // warm-up: pipelines, descriptor sets
      // Whole runs include the (small) host copies; fine at these sizes.
      std::vector<double> t;
      for (int i = 0; i < iters; ++i) {
        const auto t0 = Clock::now();
        ex.run(in);
        t.push_back(ms_since(t0));
      }
      ms[h] = median(t);
    }
    const double gf = 2.0 * n * n * n / 1e6;
    std::printf("| %lld | %.1f | %.2f | %.1f | %.2f | %.2fx |\n", static_cast<long long>(n), ms[0],
                gf / ms[0], ms[1], gf / ms[1], ms[0] / ms[1]);
  }
}

struct Row {
  std::string label;
  double ms;
  int n16;
  double err;
};

Row run_model(const plugins::Device& dev, const plugins::Device& ref_dev, const Graph& g,
              AmpLevel level, bool blind, int iters, const std::string& label) {
  AmpPolicy pol;
  pol.level = level;
  DeviceCapabilities real(dev);
  BlindCapabilities blind_caps(dev);
  CapabilitySource& caps = blind ? static_cast<CapabilitySource&>(blind_caps) : real;
  const AmpPlan plan = plan_amp(g, pol, caps);
  const auto inputs = random_inputs(g, 11);
  AmpPolicy o0;
  o0.level = AmpLevel::kO0;
  DeviceCapabilities ref_caps(ref_dev);
  const auto ref = Executor(plan_amp(g, o0, ref_caps).graph, ref_dev).run(inputs);
  Executor ex(plan.graph, dev);
  auto out = ex.run(inputs);
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = Clock::now();
    out = ex.run(inputs);
    t.push_back(ms_since(t0));
  }
  double err = 0;
  for (size_t i = 0; i < out.size(); ++i) err = std::max(err, max_relative_error(out[i], ref[i]));
  return {label, median(t), plan.summary.effective_16bit, err};
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, gemm = true, models = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    if (std::strcmp(argv[i], "--gemm-only") == 0) models = false;
    if (std::strcmp(argv[i], "--models-only") == 0) gemm = false;
  }
  const int iters = quick ? 1 : 3;
  if (gemm) {
    const auto host = make_host();
    const plugins::Device* dev = host.find_device("vulkan:0");
    if (!dev) {
      std::printf("no vulkan:0 device\n");
      return 0;
    }
    std::printf("device: %s, driver %s\n", dev->props().name, dev->props().driver_version);
    bench_gemm(*dev, quick ? std::vector<int64_t>{128} : std::vector<int64_t>{128, 256, 512, 1024},
               iters);
  }
  if (!models) return 0;
  std::printf(
      "\n| model | plan | 16-bit nodes | median ms | vs O0 | max rel. error "
      "|\n|---|---|---|---|---|---|\n");
  for (const char* m : {"cnn", "mlp", "encoder"}) {
    const Graph g = make_builtin_model(m);
    std::vector<Row> rows;
    {
      const auto host = make_host();
      const auto& dev = host.device("vulkan:0");
      const auto& ref = host.device("cpu_ref:0");
      rows.push_back(run_model(dev, ref, g, AmpLevel::kO0, false, iters, "O0"));
      rows.push_back(run_model(dev, ref, g, AmpLevel::kO2, false, iters, "O2 effective"));
      rows.push_back(run_model(dev, ref, g, AmpLevel::kO2, true, iters, "O2 blind"));
    }
    setenv("AMPX_VULKAN_MASK_FEATURES", "shaderFloat16", 1);
    {
      const auto host = make_host();
      const auto& dev = host.device("vulkan:0");
      const auto& ref = host.device("cpu_ref:0");
      rows.push_back(run_model(dev, ref, g, AmpLevel::kO2, false, iters,
                               "O2 effective, shaderFloat16 masked"));
      rows.push_back(
          run_model(dev, ref, g, AmpLevel::kO2, true, iters, "O2 blind, shaderFloat16 masked"));
    }
    unsetenv("AMPX_VULKAN_MASK_FEATURES");
    for (const Row& r : rows)
      std::printf("| %s | %s | %d | %.0f | %.2fx | %.1e |\n", m, r.label.c_str(), r.n16, r.ms,
                  rows[0].ms / r.ms, r.err);
    std::fflush(stdout);
  }
  return 0;
}
