// The fused optimizer pass (issue 37, item 6; results in docs/benchmarks.md):
// a training step with the guard, the per-tensor updates and the weights'
// 16-bit Casts (TrainerOptions::UpdateLowering::kPerTensor) against the one
// fused pass that replaces them (kFused), on one device, at O0 and O2 bf16.
// Per mode: the median step over rounds (the modes alternate round by
// round), and in profiled steps the optimizer's share of the kernel time
// (UpdateGuard, SgdUpdate, the weights' Casts; or MultiSgdUpdate).
//
// Usage: ampx_optimizer_bench [--rounds R] [--device ID] [--model NAME]...
#include <ampx/models/builtin_models.hpp>
#include <ampx/session/trainer.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>

#include "bench_timing.hpp"
#include "synthetic_dataset.hpp"

using namespace ampx;
using namespace ampx::train;

namespace {

using bench::synthetic;

// The optimizer's kernels in a profiled step: the guard, the updates, the
// weights' Casts (named "<weight>.to_<dtype>" by the planner), the fused node.
double optimizer_us(const RunProfile& p, const std::set<std::string>& weights) {
  double us = 0;
  for (const StepTiming& s : p.steps) {
    bool opt = s.op == "UpdateGuard" || s.op == "SgdUpdate" || s.op == "AdamUpdate" ||
               s.op == "MultiSgdUpdate" || s.op == "MultiAdamUpdate";
    if (s.op == "Cast") {
      const size_t at = s.name.find(".to_");
      opt = at != std::string::npos && weights.contains(s.name.substr(0, at));
    }
    if (opt) us += s.us;
  }
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 7;
  std::string device = "onednn:0";
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--device") && i + 1 < argc)
      device = argv[++i];
    else if (!std::strcmp(argv[i], "--model") && i + 1 < argc)
      models.push_back(argv[++i]);
  }
  if (models.empty()) models = {"mlp", "cnn"};
  spdlog::set_level(spdlog::level::warn);
  SessionOptions so;
  so.devices = device;
  so.fallback = false;
  Session session(so);
  for (const std::string& name : models) {
    const Graph model = make_builtin_model(name);
    Shape sample = model.value(model.inputs()[0]).type.shape;
    const int64_t batch = sample[0];
    sample.erase(sample.begin());
    const int64_t classes = model.value(model.outputs()[0]).type.shape.back();
    const int64_t steps = 6;
    const Dataset data = synthetic(batch * steps, sample, classes);
    struct Mode {
      const char* label;
      AmpLevel level;
      TrainerOptions::UpdateLowering lowering;
    };
    const Mode modes[] = {
        {"O0, per-tensor updates", AmpLevel::kO0, TrainerOptions::UpdateLowering::kPerTensor},
        {"O0, fused pass", AmpLevel::kO0, TrainerOptions::UpdateLowering::kFused},
        {"O2 bf16, per-tensor updates + weight Casts", AmpLevel::kO2,
         TrainerOptions::UpdateLowering::kPerTensor},
        {"O2 bf16, fused pass writing the bf16 copies", AmpLevel::kO2,
         TrainerOptions::UpdateLowering::kFused}};
    std::vector<std::unique_ptr<Trainer>> trainers;
    for (const Mode& m : modes) {
      TrainerOptions o;
      o.batch = batch;
      o.graph.optimizer = {.kind = OptimizerKind::kSgd, .lr = 0.01, .momentum = 0.9};
      o.policy.level = m.level;
      o.policy.half = DType::kBF16;
      o.update_lowering = m.lowering;
      trainers.push_back(std::make_unique<Trainer>(session, model, o));
      trainers.back()->train_epoch(data);  // warm-up
    }
    std::set<std::string> weights;
    for (const StateEntry& e : trainers[0]->training_graph().state)
      if (e.role == StateRole::kWeight) weights.insert(e.name);
    std::vector<std::vector<double>> ms(std::size(modes)), share(std::size(modes)),
        opt_ms(std::size(modes));
    for (int r = 0; r < rounds; ++r)
      for (size_t k = 0; k < std::size(modes); ++k) {
        ms[k].push_back(trainers[k]->train_epoch(data).step_ms);
        const RunProfile p = trainers[k]->profile_step(data);
        double sum = 0;
        for (const StepTiming& s : p.steps) sum += s.us;
        const double opt = optimizer_us(p, weights);
        share[k].push_back(100.0 * opt / sum);
        opt_ms[k].push_back(opt / 1000.0);
      }
    std::printf(
        "\n%s, batch %lld, SGD momentum 0.9, on %s (%d rounds of %lld steps, alternating)\n",
        name.c_str(), static_cast<long long>(batch), device.c_str(), rounds,
        static_cast<long long>(steps));
    std::printf(
        "| mode | 16-bit nodes | step ms (median) | spread | optimizer ms | optimizer share |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < std::size(modes); ++k) {
      const double med = bench::median(ms[k]);
      const auto [lo, hi] = std::minmax_element(ms[k].begin(), ms[k].end());
      std::printf("| %s | %d | %.2f | %.0f %% | %.3f | %.1f %% |\n", modes[k].label,
                  trainers[k]->plan().summary.effective_16bit, med, 100.0 * (*hi - *lo) / (2 * med),
                  bench::median(opt_ms[k]), bench::median(share[k]));
    }
  }
  return 0;
}
