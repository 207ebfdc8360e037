#include "effective_step.hpp"

namespace ampx::planner_detail {

void decide_effective(PlanningContext& ctx, const Node& n, int dev, DType half, bool demote,
                      bool tuned, bool capability_blind, NodePlan& np) {
  const auto& answer = ctx.ask(dev, n, half);
  np.support_16bit = answer.support;
  if (!answer.note.empty()) np.note = ctx.intern_note(answer.note);
  if (demote && tuned) {
    np.effective_reason = EffectiveReason::kTuned;
  } else if (answer.support == AMPX_SUPPORT_NATIVE && demote) {
    np.effective_reason = EffectiveReason::kCost;
  } else if (answer.support == AMPX_SUPPORT_NATIVE) {
    np.effective = half;
    np.effective_reason = EffectiveReason::kAsIntended;
  } else if (answer.support == AMPX_SUPPORT_EMULATED && capability_blind) {
    np.effective = half;
    np.effective_reason = EffectiveReason::kForcedEmulated;
  } else if (answer.support == AMPX_SUPPORT_EMULATED && is_data_movement(n.op)) {
    np.effective = half;
    np.effective_reason = EffectiveReason::kDataMovement;
  } else {
    np.effective_reason = answer.support == AMPX_SUPPORT_EMULATED ? EffectiveReason::kNoNativeKernel
                                                                  : EffectiveReason::kUnsupported16;
  }
}

}  // namespace ampx::planner_detail
