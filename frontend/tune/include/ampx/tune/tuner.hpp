// `ampx tune` and Session::tune (docs/TUNING.md): measure, re-plan from the
// measured costs, repeat until the plan stops changing; then verify end to
// end against O0 and the untuned plan, timed in alternation, and keep the
// tuned plan only if it is not slower than O0 beyond the measured noise.
// Measurements go into the capability database as in-context calibration,
// the kept plan as a tuned plan under its key (tuned_plan_key.hpp).
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/exec/run_profile.hpp>
#include <ampx/exec/selected_devices.hpp>
#include <ampx/tune/tuned_plan_key.hpp>

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ampx {

struct TuneOptions {
  int max_replans = 4;          // measure -> re-plan rounds at most (the bound)
  int profile_runs = 10;        // profiled runs per measured plan (median per node), at least
  double min_profile_ms = 300;  // and more runs until this long (at most 10x profile_runs)
  int warmup = 2;               // untimed runs before each measurement
  int verify_rounds = 5;        // alternating rounds of tuned, O0 and untuned
  int verify_runs = 10;         // timed runs per plan per round (their median)
  uint64_t seed = 1;            // random inputs
  // Every graph input in order (`ampx tune --input`: a model built for its
  // inputs' values runs on those values); empty: seeded random inputs.
  std::vector<HostTensor> inputs{};
  // Each plan's executor is checked against it before it is allocated
  // (exec/memory_budget.hpp); host_bytes is set from the inputs and outputs.
  MemoryLimit memory{};
  bool store = true;  // write the calibration and the kept plan to the database
  // Also time the capability-blind plan of the same policy in the
  // verification rounds (label "blind"): what a policy-string framework
  // would run. Measured for comparison only, never kept.
  bool compare_capability_blind = false;
  std::optional<std::string> db_path{};
  // (fraction done in [0, 1], what runs now); may be empty.
  std::function<void(double, std::string_view)> progress{};
};

struct VerifiedPlan {
  std::string label;  // "tuned", "untuned", "O0" (and "blind" when compared)
  int effective_16bit = 0;
  double predicted_ms = -1;       // the plan's prediction (calibrated costs)
  double median_ms = 0;           // median of the round medians
  std::vector<double> rounds_ms;  // each round's median
  double ratio_to_o0 = 1;         // median of the per-round ratios to O0
};

struct TuneResult {
  TunedPlanKey key;
  std::string model_name;
  std::string kept;                    // "tuned", "untuned" or "O0"
  std::string reason;                  // why that one
  std::vector<std::string> f32_nodes;  // the stored choice
  int replans = 0;
  bool converged = false;              // the plan stopped changing within max_replans
  std::vector<VerifiedPlan> verified;  // tuned, untuned, O0 (, blind)
  // Relative noise bound of the verification: the largest half-range of
  // any plan's per-round ratios to O0 (at least 1 %).
  double noise = 0;
  double seconds = 0;
  int measured_signatures = 0;  // node signatures measured, all devices
  // Median |predicted - measured| / measured over the profiled steps, and
  // end to end against the verified median: before (probe data or hints,
  // on the untuned plan) and after calibration (on the kept plan).
  double node_error_before = -1, node_error_after = -1;
  double e2e_error_before = -1, e2e_error_after = -1;
  bool stored = false;
  AmpPlan plan;  // the kept plan, as plan/run apply it (reasons `tuned`)
};

// `selection` must have cost models (DeviceSelectionOptions::use_costs);
// throws std::invalid_argument otherwise, std::runtime_error when a device
// fails. `model_name` names the model in the stored record and notes.
TuneResult tune_plan(const Graph& graph, const std::string& model_name, const AmpPolicy& policy,
                     const DeviceSelection& selection, std::span<const DevicePin> pins,
                     const TuneOptions& options);

// Step i's prediction from the plan: a node's or a Cast's own (a fused node
// adds the nodes it absorbed); -1 for copies and where the plan has none.
std::vector<double> step_predictions(const AmpPlan& plan, const FusedGraph& fused,
                                     const RunProfile& profile);

// "tuned", with the JSON document stored ("ampx.tuned/1", docs/TUNING.md).
std::string tuned_plan_json(const TuneResult& result);

}  // namespace ampx
