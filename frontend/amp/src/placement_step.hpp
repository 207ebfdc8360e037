// Internal to the planner (frontend/amp/src): the placement step.
#pragma once

#include "planning_context.hpp"

#include <optional>

namespace ampx::planner_detail {

// Where node `n` runs across several devices (docs/PLACEMENT.md): the first
// listed device that runs it in the wanted precision, 16-bit only where
// that is real (or `capability_blind`); where no listed device has a real
// 16-bit kernel first, f32 on the first device that runs it against 16-bit
// on the first that has one, by predicted time with copies and Casts; else
// the fallback device. nullopt: no device runs it in any precision.
// `want`: the node's float dtype (kInvalid for a non-float node).
std::optional<Placed> place_node(PlanningContext& ctx, const Node& n, DType want, bool want16,
                                 bool capability_blind);

}  // namespace ampx::planner_detail
