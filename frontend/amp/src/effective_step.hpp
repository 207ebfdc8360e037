// Internal to the planner (frontend/amp/src): the effective step.
#pragma once

#include "planning_context.hpp"

namespace ampx::planner_detail {

// What device `dev` really has for node `n` in `half`, and so the node's
// effective dtype and reason (docs/PLANNER.md): native stays 16-bit unless
// the cost step (`demote`) or a tuned plan (`demote` with `tuned`) keeps it
// f32; emulated is `no-native-kernel` (16-bit anyway when capability-blind,
// or for data movement, which is exact); unsupported is
// `unsupported-16bit`. Fills np.support_16bit, note, effective and
// effective_reason.
void decide_effective(PlanningContext& ctx, const Node& n, int dev, DType half, bool demote,
                      bool tuned, bool capability_blind, NodePlan& np);

}  // namespace ampx::planner_detail
