// The one plan of a graph on the selected devices, as Session::plan makes
// it: the stored tuned plan where one matches, else planned afresh.
#pragma once

#include <ampx/amp/placement.hpp>
#include <ampx/amp/planner.hpp>
#include <ampx/amp/policy.hpp>
#include <ampx/exec/selected_devices.hpp>
#include <ampx/ir/graph.hpp>
#include <ampx/session/plan_request.hpp>

#include <optional>
#include <span>
#include <string>

namespace ampx {

// The plan of `graph` on a device selection, as Session::plan makes it: a
// stored tuned plan for the key applied where one matches and `tuned` is
// kUse (never for capability-blind plans or without cost models),
// else planned afresh. The plan says which (AmpPlan::tuned).
AmpPlan plan_on_selection(const Graph& graph, const std::string& model_name,
                          const AmpPolicy& policy, const DeviceSelection& selection,
                          std::span<const DevicePin> pins, const PlanOptions& options,
                          TunedPlans tuned, const std::optional<std::string>& db_path);

}  // namespace ampx
