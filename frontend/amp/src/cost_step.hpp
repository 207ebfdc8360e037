// Internal to the planner (frontend/amp/src): the cost step (which native
// 16-bit nodes pay, for the whole graph at once), a tuned plan's choice in
// its place, and the predictions of a built plan.
#pragma once

#include "planning_context.hpp"

#include <ampx/amp/planner.hpp>

#include <span>
#include <string>
#include <vector>

namespace ampx::planner_detail {

// Which native 16-bit nodes to keep 16-bit, for the whole graph at once
// (precision_cut.hpp). `first` is the plan without cost decisions; the
// result is true for each source node the cost step demotes to f32.
// The devices' predictions come from `queries` (made for g).
std::vector<bool> choose_by_cost(const Graph& g, const AmpPlan& first, DType half,
                                 PlanQueries& queries);
// A tuned plan's f32 nodes by source NodeId; std::invalid_argument for a
// name the graph lacks.
std::vector<bool> tuned_demotions(const Graph& g, const std::vector<std::string>& names);
// A plan's source graph and the queries its planning call made: a planned
// float node is its source node in its effective dtype, and a Cast the
// Cast of its source value, so their predictions are looked up by class.
struct PlannedFrom {
  const Graph& source;
  PlanQueries& queries;
  std::span<const ValueId> cast_sources;  // per AmpPlan::casts entry
};
// Fills the predictions of a built plan from each node's device's model,
// with their origins; the per-run copies are added at copy_cost_us().
// `from` (may be null): where the plan came from, for lookups by class.
void predict_placed(AmpPlan& plan, std::span<capability::CostModel* const> costs,
                    PlannedFrom* from = nullptr);

}  // namespace ampx::planner_detail
