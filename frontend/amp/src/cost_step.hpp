// Internal to the planner (frontend/amp/src): the cost step (which native
// 16-bit nodes pay, for the whole graph at once), a tuned plan's choice in
// its place, and the predictions of a built plan.
#pragma once

#include <ampx/amp/planner.hpp>

#include <span>
#include <string>
#include <vector>

namespace ampx::planner_detail {

// Which native 16-bit nodes to keep 16-bit, for the whole graph at once
// (precision_cut.hpp). `first` is the plan without cost decisions; the
// result is true for each source node the cost step demotes to f32.
std::vector<bool> choose_by_cost(const Graph& g, const AmpPlan& first, DType half,
                                 std::span<capability::CostModel* const> costs);
// A tuned plan's f32 nodes by source NodeId; std::invalid_argument for a
// name the graph lacks.
std::vector<bool> tuned_demotions(const Graph& g, const std::vector<std::string>& names);
// Fills the predictions of a built plan from each node's device's model,
// with their origins; the per-run copies are added at copy_cost_us().
void predict_placed(AmpPlan& plan, std::span<capability::CostModel* const> costs);

}  // namespace ampx::planner_detail
