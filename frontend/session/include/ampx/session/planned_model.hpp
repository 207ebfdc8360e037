// What Session::plan returns: the AmpPlan and what it was planned with and
// for (the devices, the resolved 16-bit type, the pins), so that compile()
// and the CLI's output need nothing else.
#pragma once

#include <ampx/amp/placement.hpp>
#include <ampx/amp/planner.hpp>
#include <ampx/capability/capability_source.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/plugins/device.hpp>
#include <ampx/session/device_selection.hpp>
#include <ampx/session/plan_request.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ampx {

// A device to plan for: a live one, or one described by a stored profile,
// which can be planned and reported but not run.
struct PlanningDevice {
  std::string id;
  std::string name;
  std::string source;                       // "device" or "profile FILE"
  const plugins::Device* device = nullptr;  // the live device, if present here
  std::shared_ptr<CapabilitySource> caps;
  std::shared_ptr<capability::CostModel> cost;  // null without the cost step
};

struct PlannedModel {
  AmpPlan plan;
  // The policy planned with: its `half` as resolved for HalfDType::kAuto.
  AmpPolicy policy;
  // HalfDType::kAuto: the choice and the counts behind it.
  std::optional<HalfChoice> dtype_choice;
  DeviceSelection selection;               // the live devices (empty with a profile)
  std::optional<PlanningDevice> profiled;  // PlanRequest::profile
  std::vector<DevicePin> pins;             // PlanRequest::pins, resolved
  PlanPurpose purpose = PlanPurpose::kRun;
  // The graph planned (not owned: it must outlive the compiled model when
  // the reference check is prepared) and its name among tuned plans.
  const Graph* source = nullptr;
  std::string model_key;

  // Capability sources and devices by AmpPlan::devices index.
  std::vector<CapabilitySource*> caps() const;
  std::vector<const plugins::Device*> runtime_devices() const;
};

}  // namespace ampx
