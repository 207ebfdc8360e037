// Training-step benchmark (issue 18, results in docs/benchmarks.md): steps
// per second of builtin:digits-cnn (batch 32) and the 4 x 1024 MLP
// (builtin:mlp, batch 64, synthetic data) on every device here, compiled at
// O0 and compiled at O2 (f16, and bf16 where the device runs it natively);
// activation (arena) and weight/state memory per plan; and the
// executor's overhead per compiled step against the sum of its kernel
// times; and the overflow diagnostics' cost (issue 19), compiled O0 and O2
// with the probe against without. Modes alternate round by round on the same machine; the medians
// over rounds are reported, with the spread. There is no eager mode: the
// trainer refuses TrainerOptions::eager until eager dispatch exists (the
// "eager O0" rows this printed before ran the compiled step). Eager against
// compiled against compiled with AMP, per device, in fresh processes:
// bench/train_vs_torch.py --table seeds.
//
// Usage: ampx_train_bench [--rounds R] [--device ID ...]
#include <ampx/ir/builder.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/session/trainer.hpp>
#include <ampx/train/datasets.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "bench_timing.hpp"
#include "synthetic_dataset.hpp"

using namespace ampx;
using namespace ampx::train;

namespace {

struct Mode {
  std::string label;
  AmpLevel level;
  DType half;
  bool diagnose = false;  // --diagnose-overflow's probe in the step
};

using bench::synthetic;

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::vector<std::string> devices;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      devices.push_back(argv[++i]);
  }
  spdlog::set_level(spdlog::level::warn);
  if (devices.empty()) devices = {"cpu_ref:0", "onednn:0", "vulkan:0"};
  struct ModelCase {
    std::string name;
    int64_t batch;
    int64_t steps;
  };
  for (const ModelCase& mc : {ModelCase{"digits-cnn", 32, 20}, ModelCase{"mlp", 64, 6}}) {
    const Graph model = make_builtin_model(mc.name);
    Shape sample = model.value(model.inputs()[0]).type.shape;
    sample.erase(sample.begin());
    const int64_t classes = model.value(model.outputs()[0]).type.shape.back();
    const train::Dataset data = synthetic(mc.batch * mc.steps, sample, classes);
    for (const std::string& dev : devices) {
      SessionOptions so;
      so.devices = dev;
      so.fallback = true;
      std::unique_ptr<Session> session;
      try {
        session = std::make_unique<Session>(so);
        (void)session->host().device(dev);
      } catch (const std::exception& e) {
        std::printf("%s on %s: skipped (%s)\n", mc.name.c_str(), dev.c_str(), e.what());
        continue;
      }
      std::vector<Mode> modes{{"compiled O0", AmpLevel::kO0, DType::kF16},
                              {"compiled O2 f16", AmpLevel::kO2, DType::kF16},
                              {"compiled O2 bf16", AmpLevel::kO2, DType::kBF16},
                              {"compiled O0 + diagnostics", AmpLevel::kO0, DType::kF16, true},
                              {"compiled O2 f16 + diagnostics", AmpLevel::kO2, DType::kF16, true}};
      constexpr size_t kO0Diagnostics = 3;  // the mode profiled for the probe's share
      std::vector<std::unique_ptr<Trainer>> trainers;
      for (const Mode& m : modes) {
        TrainerOptions o;
        o.batch = mc.batch;
        o.graph.optimizer = {.kind = OptimizerKind::kSgd, .lr = 0.01, .momentum = 0.9};
        o.policy.level = m.level;
        o.policy.half = m.half;
        o.overflow.diagnose = m.diagnose;
        trainers.push_back(std::make_unique<Trainer>(*session, model, o));
        trainers.back()->train_epoch(data);  // warm-up
      }
      std::vector<std::vector<double>> ms(modes.size());
      for (int r = 0; r < rounds; ++r)
        for (size_t k = 0; k < modes.size(); ++k)
          ms[k].push_back(trainers[k]->train_epoch(data).step_ms);
      std::printf("\n%s, batch %lld, on %s (%d rounds of %lld steps, modes alternating)\n",
                  mc.name.c_str(), static_cast<long long>(mc.batch), dev.c_str(), rounds,
                  static_cast<long long>(mc.steps));
      std::printf(
          "| mode | 16-bit nodes | step ms (median) | spread | steps/s | vs compiled O0 | arena "
          "MiB | weights+state MiB |\n");
      std::printf("|---|---|---|---|---|---|---|---|\n");
      const double base = bench::median(ms[0]);
      for (size_t k = 0; k < modes.size(); ++k) {
        const double med = bench::median(ms[k]);
        const auto [lo, hi] = std::minmax_element(ms[k].begin(), ms[k].end());
        const ExecutorStats* st = trainers[k]->step_stats();
        std::printf("| %s | %d of %zu | %.2f | %.0f %% | %.1f | %.2fx | %.3f | %.3f |\n",
                    modes[k].label.c_str(), trainers[k]->plan().summary.effective_16bit,
                    trainers[k]->plan().nodes.size(), med, 100.0 * (*hi - *lo) / (2 * med),
                    1000.0 / med, base / med, st->arena_bytes / 1048576.0,
                    (st->constant_bytes + st->state_bytes) / 1048576.0);
      }
      // Executor overhead of the compiled O0 step: in the same profiled
      // step, its wall time against the sum of its kernels' times (the
      // gaps between kernels are the executor's: dispatch, state binding,
      // the inputs' upload). The plain step of train_epoch also gathers the
      // batch on the host, shown beside it.
      // The finite check (UpdateGuard, in every step) is timed there too.
      std::vector<double> kernel_sums, walls, guard_share;
      for (int r = 0; r < rounds; ++r) {
        const RunProfile p = trainers[0]->profile_step(data);
        double sum = 0, guard = 0;
        for (const StepTiming& s : p.steps) {
          sum += s.us;
          if (s.op == "UpdateGuard") guard += s.us;
        }
        kernel_sums.push_back(sum / 1000.0);
        walls.push_back(p.total_us / 1000.0);
        guard_share.push_back(100.0 * guard / sum);
      }
      std::printf("finite check (UpdateGuard) in a profiled O0 step: %.1f %% of its kernel time\n",
                  bench::median(guard_share));
      // The diagnostics' probe in a profiled O0 step: its kernel, and the
      // copies the probe added (a device without TensorStats).
      std::vector<double> probe_share;
      for (int r = 0; r < rounds; ++r) {
        const RunProfile p = trainers[kO0Diagnostics]->profile_step(data);
        double sum = 0, probe = 0;
        for (const StepTiming& s : p.steps) {
          sum += s.us;
          if (s.op == "TensorStats") probe += s.us;
        }
        probe_share.push_back(100.0 * probe / sum);
        if (r == 0 && std::getenv("AMPX_BENCH_TOP")) {
          // The step's largest kernels, to see where the time goes.
          std::vector<StepTiming> top = p.steps;
          std::sort(top.begin(), top.end(),
                    [](const StepTiming& a, const StepTiming& b) { return a.us > b.us; });
          for (size_t i = 0; i < std::min<size_t>(top.size(), 12); ++i)
            std::printf("  %8.1f us  %-14s %s  %s\n", top[i].us, top[i].op.c_str(),
                        top[i].name.c_str(), top[i].shapes.substr(0, 90).c_str());
        }
      }
      std::printf(
          "diagnostics probe (TensorStats) in a profiled O0 step: %.1f %% of its kernel time\n",
          bench::median(probe_share));
      const double kernels = bench::median(kernel_sums), wall = bench::median(walls);
      std::printf(
          "executor overhead, compiled O0: profiled step %.3f ms, its kernels %.3f ms: %.1f %% "
          "(plain step with batch gathering %.3f ms)\n",
          wall, kernels, 100.0 * (wall - kernels) / kernels, base);
    }
  }
  return 0;
}
