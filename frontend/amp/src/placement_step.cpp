#include "placement_step.hpp"

#include <cstdio>

namespace ampx::planner_detail {

namespace {

std::string us_text(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f us", us);
  return buf;
}

// "16-bit on cpu_ref:0 4.1 us < f32 on vulkan:0 9.0 us (copies and Casts included)"
std::string fmt_cost_note(const std::string& dev16, double t16, const std::string& dev32,
                          double t32) {
  return "16-bit on " + dev16 + " " + us_text(t16) + " < f32 on " + dev32 + " " + us_text(t32) +
         " (copies and Casts included)";
}

}  // namespace

std::optional<Placed> place_node(PlanningContext& ctx, const Node& n, DType want, bool want16,
                                 bool capability_blind) {
  const int all = static_cast<int>(ctx.devices().size());
  int first_want = -1;  // first listed device running it in `want`
  for (int k = 0; k < ctx.listed() && first_want < 0; ++k)
    if (runs(ctx.ask(k, n, want).support)) first_want = k;
  const bool real16 =
      first_want >= 0 && want16 &&
      (ctx.ask(first_want, n, want).support == AMPX_SUPPORT_NATIVE || capability_blind);
  if (first_want >= 0 && (!want16 || real16)) {
    return ctx.by_order(first_want);
  } else if (want16) {
    int f32_dev = -1, native16 = -1;
    for (int k = 0; k < ctx.listed() && f32_dev < 0; ++k)
      if (runs(ctx.ask(k, n, DType::kF32).support)) f32_dev = k;
    for (int k = 0; k < all && native16 < 0; ++k)
      if (ctx.ask(k, n, want).support == AMPX_SUPPORT_NATIVE) native16 = k;
    if (f32_dev >= 0 && native16 >= 0) {
      const double t32 = ctx.cost_on(f32_dev, n, DType::kF32);
      const double t16 = ctx.cost_on(native16, n, want);
      if (t32 >= 0 && t16 >= 0 && t16 < t32)
        return Placed{native16, PlacementReason::kCost,
                      fmt_cost_note(ctx.plan().devices[static_cast<size_t>(native16)], t16,
                                    ctx.plan().devices[static_cast<size_t>(f32_dev)], t32)};
      else
        return ctx.by_order(f32_dev);
    } else if (f32_dev >= 0) {
      return ctx.by_order(f32_dev);
    } else if (native16 >= 0) {
      return ctx.by_order(native16);
    } else if (ctx.fallback() >= 0 && runs(ctx.ask(ctx.fallback(), n, DType::kF32).support)) {
      return ctx.by_order(ctx.fallback());
    } else {
      return std::nullopt;
    }
  } else if (ctx.fallback() >= 0 && runs(ctx.ask(ctx.fallback(), n, want).support)) {
    return ctx.by_order(ctx.fallback());
  } else {
    return std::nullopt;
  }
}

}  // namespace ampx::planner_detail
