// What Session::report measures: for every model and device, the plan at
// each amp level (cost-aware, the 16-bit type per level and device with
// HalfDType::kAuto), the predicted time, and unless told not to, the
// measured time and error of running it; the op x device x dtype coverage
// matrix; and for each placement list the plan across those devices.
#pragma once

#include <ampx/exec/memory_budget.hpp>
#include <ampx/ir/dtype.hpp>
#include <ampx/models/load_model.hpp>
#include <ampx/session/given_inputs.hpp>
#include <ampx/session/plan_request.hpp>
#include <ampx/tune/tuner.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ampx {

// Whether the report runs each plan (measured time and error) or plans and
// predicts only (`--no-run`).
enum class ReportRuns { kMeasure, kPredictOnly };

// A stored tuned plan where one matches (kUse), tuned on the spot where
// none does and stored for the next report (kTuneMissing), or plans made
// afresh only (kIgnore).
enum class ReportTuning { kUse, kTuneMissing, kIgnore };

struct ReportRequest {
  // Device ids; empty: every device of the session (or of the profile).
  std::vector<std::string> devices{};
  // Report the devices of a stored profile (`ampx db export`) instead of
  // live ones: planned and predicted, never run.
  std::optional<std::filesystem::path> profile{};
  // kPolicy: `half_type` for every level; kAuto: per device and level.
  HalfDType half = HalfDType::kAuto;
  DType half_type = DType::kF16;
  ReportRuns runs = ReportRuns::kMeasure;
  int iters = 3;
  int warmup = 1;
  uint64_t seed = 1;
  ModelOptions model_options{};     // input shapes for ONNX models
  std::vector<GivenInput> given{};  // every model must have these inputs
  MemoryLimit memory{};             // for every measured plan
  // Device lists to plan each model across (docs/PLACEMENT.md), resolved
  // per model (`auto` ranks for the model).
  std::vector<std::string> placements{};
  CostUse costs = CostUse::kModel;
  ReportTuning tuning = ReportTuning::kUse;
  TuneOptions tune_options{
      .max_replans = 4, .profile_runs = 5, .warmup = 1, .verify_rounds = 3, .verify_runs = 5};
  // Called before each (model, device, level) step: done, total, what.
  std::function<void(int, int, const std::string&)> progress{};
};

}  // namespace ampx
