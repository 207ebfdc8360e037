// Predicted kernel times for the cost-aware planner and the reports. Two
// sources behind one interface: measured probe data for the device's
// fingerprint (ProfileCostModel), else the plugin's own cost hints from its
// capability answers (HintCostModel). Every prediction is for one launch of
// exactly that node instance (dtypes, shapes, attributes).
#pragma once

#include <ampx/capability/capability_source.hpp>
#include <ampx/capability/profile.hpp>

#include <memory>
#include <optional>
#include <string>

namespace ampx::capability {

// Where one prediction came from, best first (the plan says it per node).
enum class CostOrigin { kNone, kMeasured, kProbe, kHint };
// "measured", "probe", "hint", "none".
const char* cost_origin_name(CostOrigin o);

struct CostEstimate {
  double us = -1;  // < 0: nothing known
  CostOrigin origin = CostOrigin::kNone;
};

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Microseconds per launch; < 0 when nothing is known.
  virtual double node_us(const ampx_node_desc& node) = 0;
  // The same with its origin. The default: probe data when measured(),
  // else the plugin's hints.
  virtual CostEstimate estimate(const ampx_node_desc& node) {
    const double us = node_us(node);
    if (us < 0) return {};
    return {us, measured() ? CostOrigin::kProbe : CostOrigin::kHint};
  }
  // Where the numbers come from, for plan and report output: "probe data
  // (<fingerprint>, <date>)" or "plugin cost hints (no probe data)".
  virtual std::string source() const = 0;
  virtual bool measured() const = 0;
  // The fixed cost of one run on this device that no node carries (input
  // upload, submission, the final wait, output download), measured in
  // context for a model with these inputs and outputs (`run`: op "Run",
  // the graph's inputs and outputs as tensors); nullopt when unknown. It is
  // a correction to the sum of the nodes' times, and may be negative: where
  // a plain run overlaps work that profiled steps time one by one (lavapipe
  // runs dispatches concurrently), the run is shorter than its steps.
  virtual std::optional<double> run_overhead_us(const ampx_node_desc& run) {
    (void)run;
    return std::nullopt;
  }
  // Microseconds to copy `bytes` from host memory to the device (`to_device`)
  // or back, from the probe's copy fits; < 0 when nothing is known.
  virtual double copy_us(uint64_t bytes, bool to_device) {
    (void)bytes;
    (void)to_device;
    return -1.0;
  }
};

// The plugin's cost_us from its capability answers.
std::unique_ptr<CostModel> make_hint_cost_model(CapabilitySource& device);

// Interpolates the profile's measured times by the node's work (log-log,
// per op and dtype); Casts priced per element; nodes of an op/dtype the
// profile has no timing for fall back to `fallback` (may be null: < 0).
std::unique_ptr<CostModel> make_profile_cost_model(DeviceProfile profile,
                                                   std::unique_ptr<CostModel> fallback);

}  // namespace ampx::capability
