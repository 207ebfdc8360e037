// Issue 4's benchmark, side by side in one process, per device and built-in
// model: O0; O2 effective-only (native 16-bit kept, no cost step); O2
// cost-aware; O2 capability-blind (16-bit on emulated kernels too). Each
// plan's predicted time next to its measured median, and the median
// prediction error per device. Repetitions are interleaved so machine load
// drifts hit every plan alike.
// Usage: ampx_cost_plan_bench [--reps N] [--device ID]... [--db PATH]
//   --db: predictions from that capability database's probe data for each
//   device (`ampx probe --db PATH` first); else the plugins' cost hints.
#include <ampx/amp/planner.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/models/builtin_models.hpp>
#include <ampx/plugins/plugin_host.hpp>
#include <ampx/session/device_capabilities.hpp>

#include "bench_timing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace ampx;

namespace {

using bench::median;

struct Variant {
  std::string name;
  AmpPlan plan;
  FusedGraph fused;
  std::unique_ptr<Executor> exec;
  double measured_ms = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 10;
  std::vector<std::string> only;
  std::string db;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps")
      reps = std::max(1, std::atoi(argv[++i]));
    else if (a == "--db")
      db = argv[++i];
    else if (a == "--device")
      only.push_back(argv[++i]);
  }
  const plugins::PluginHost host{plugins::PluginHostOptions{}};
  fmt::print(
      "| device | model | plan | 16-bit nodes | casts | predicted | measured | ratio to O0 |\n");
  fmt::print("|---|---|---|---|---|---|---|---|\n");
  for (const auto& dev : host.devices()) {
    if (!only.empty() && std::find(only.begin(), only.end(), dev.id()) == only.end()) continue;
    DeviceCapabilities caps(dev);
    std::unique_ptr<capability::CostModel> cost = capability::make_hint_cost_model(caps);
    if (!db.empty())
      if (auto prof = capability::load_profile_for(dev.props().fingerprint, std::nullopt, db))
        cost = capability::make_profile_cost_model(std::move(*prof), std::move(cost));
    std::vector<double> errors;
    for (const auto& model : builtin_model_names()) {
      const Graph g = make_builtin_model(model);
      AmpPolicy o2;
      o2.level = AmpLevel::kO2;
      o2.half = choose_half_dtype(g, o2, caps).half;
      std::vector<std::unique_ptr<Variant>> vs;  // stable: executors hold their graph
      // Every plan gets predictions from the same cost model; only
      // "cost-aware" lets it choose.
      auto add = [&](std::string name, const AmpPolicy& p, PlanOptions opts, bool choose) {
        auto vp = std::make_unique<Variant>();
        Variant& v = *vp;
        v.name = std::move(name);
        try {
          opts.cost = choose ? cost.get() : nullptr;
          v.plan = plan_amp(g, p, caps, opts);
          if (!choose) predict_plan(v.plan, *cost);
          v.fused = fuse_for_device(v.plan.graph, caps);
          v.exec = std::make_unique<Executor>(v.fused.graph, dev);
        } catch (const std::exception& e) {
          fmt::print(stderr, "{} {} {}: {}\n", dev.id(), model, v.name, e.what());
          return;
        }
        vs.push_back(std::move(vp));
      };
      add("O0", AmpPolicy{}, {}, false);
      add(fmt::format("O2 {} effective-only", dtype_name(o2.half)), o2, {}, false);
      add(fmt::format("O2 {} cost-aware", dtype_name(o2.half)), o2, {}, true);
      AmpPolicy blind = o2;
      blind.half = DType::kF16;
      add("O2 f16 capability-blind", blind, {.capability_blind = true}, false);
      const auto in = random_inputs(g, 3);
      std::vector<std::vector<double>> t(vs.size());
      for (auto& v : vs) (void)v->exec->run(in);
      for (int r = 0; r < reps; ++r)
        for (size_t i = 0; i < vs.size(); ++i) {
          const auto t0 = std::chrono::steady_clock::now();
          (void)vs[i]->exec->run(in);
          t[i].push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count());
        }
      for (size_t i = 0; i < vs.size(); ++i) vs[i]->measured_ms = median(t[i]);
      for (const auto& vp : vs) {
        const Variant& v = *vp;
        const double pred = v.plan.predicted_us / 1000.0;
        if (pred > 0) errors.push_back(std::abs(pred - v.measured_ms) / v.measured_ms);
        fmt::print("| {} | {} | {} | {} | {} | {:.2f} ms | {:.2f} ms | {:.2f} |\n", dev.id(), model,
                   v.name, v.plan.summary.effective_16bit,
                   v.plan.summary.casts - v.plan.summary.casts_on_constants, pred, v.measured_ms,
                   v.measured_ms / vs[0]->measured_ms);
      }
    }
    fmt::print("| {} | | median prediction error: {:.0f} % ({}) | | | | | |\n", dev.id(),
               100 * median(errors), cost->source());
  }
  return 0;
}
