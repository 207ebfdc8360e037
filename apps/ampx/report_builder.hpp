// Fills a capability::Report: for every model and device, the plan at each
// amp level (cost-aware, --dtype auto per level unless a dtype is given),
// predicted time, and unless told not to, the measured time and error of
// running it; plus the op x device x dtype coverage matrix, and for each
// `--placement LIST` the plan across those devices (nodes per device,
// fallbacks, copies).
#pragma once

#include <ampx/capability/cost_model.hpp>
#include <ampx/capability/report.hpp>
#include <ampx/plugins/device.hpp>

#include "cli_common.hpp"

#include <ampx/tune/tuner.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ampx::cli {

using ReportDevice = PlanningDevice;

struct ReportSettings {
  std::string dtype = "auto";  // f16, bf16 or auto (per device and level)
  bool run = true;
  int iters = 3;
  int warmup = 1;
  uint64_t seed = 1;
  ModelOptions model_options;     // --input-shape for ONNX models
  std::vector<GivenInput> given;  // --input: every model must have these inputs
  MemoryArgs memory;              // --max-memory, for every measured plan
  // Device lists to plan each model across (docs/PLACEMENT.md), resolved
  // against `host` per model (`auto` ranks for the model).
  std::vector<std::string> placements;
  const plugins::PluginHost* host = nullptr;
  bool use_costs = true;
  // Report a stored tuned plan for a live device where one matches
  // (docs/TUNING.md); with `tune`, tune O1-O3 on the spot where none does
  // (stored, so the next report reuses it), with `tune_options`.
  bool use_tuned = true;
  bool tune = false;
  TuneOptions tune_options{
      .max_replans = 4, .profile_runs = 5, .warmup = 1, .verify_rounds = 3, .verify_runs = 5};
  std::optional<std::string> db_path;
  // Called before each (model, device, level) step: done, total, what.
  std::function<void(int, int, const std::string&)> progress;
};

capability::Report build_report(const std::vector<std::string>& models,
                                const std::vector<ReportDevice>& devices,
                                const ReportSettings& settings);

}  // namespace ampx::cli
