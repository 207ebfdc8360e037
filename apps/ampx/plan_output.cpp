#include "plan_output.hpp"

#include <fmt/format.h>
#include <algorithm>

namespace ampx::cli {

namespace {
std::string support_name(ampx_support s) {
  switch (s) {
    case AMPX_SUPPORT_NATIVE:
      return "native";
    case AMPX_SUPPORT_EMULATED:
      return "emulated";
    default:
      return "unsupported";
  }
}
}  // namespace

std::string plan_title(const AmpPlan& plan) {
  return std::string(amp_level_name(plan.policy.level)) + " " +
         std::string(dtype_name(plan.policy.half)) + " on " + plan.device_id;
}

nlohmann::json summary_to_json(const PlanSummary& s) {
  return {{"nodes", s.nodes},
          {"float_nodes", s.float_nodes},
          {"intended_16bit", s.intended_16bit},
          {"effective_16bit", s.effective_16bit},
          {"kept_fp32_no_native_kernel", s.kept_fp32_no_native},
          {"kept_fp32_cost", s.kept_fp32_cost},
          {"casts", s.casts},
          {"casts_on_constants", s.casts_on_constants}};
}

nlohmann::json half_choice_to_json(const HalfChoice& c) {
  return {{"chosen", std::string(dtype_name(c.half))},
          {"f16_effective", c.f16_effective},
          {"bf16_effective", c.bf16_effective},
          {"any_native", c.any_native}};
}

nlohmann::json plan_to_json(const AmpPlan& plan, const std::string& model) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : plan.nodes) {
    nlohmann::json j{{"name", n.name},
                     {"op", std::string(op_name(n.op))},
                     {"intended", std::string(dtype_name(n.intended))},
                     {"effective", std::string(dtype_name(n.effective))},
                     {"reason", n.reason()},
                     {"intent_reason", std::string(intent_reason_name(n.intent_reason))}};
    if (!n.origin.empty()) j["origin"] = n.origin;
    if (n.is_float_node && is_16bit_float(n.intended)) {
      j["device_16bit_support"] = support_name(n.support_16bit);
      if (const auto note = plan.note_of(n); !note.empty()) j["device_note"] = note;
    }
    if (n.predicted_us >= 0) j["predicted_us"] = n.predicted_us;
    if (n.time_f32_us >= 0) j["time_f32_us"] = n.time_f32_us;
    if (n.time_16_us >= 0) j["time_16bit_us"] = n.time_16_us;
    nodes.push_back(std::move(j));
  }
  nlohmann::json casts = nlohmann::json::array();
  for (const auto& c : plan.casts)
    casts.push_back({{"name", c.name},
                     {"value", c.value},
                     {"from", std::string(dtype_name(c.from))},
                     {"to", std::string(dtype_name(c.to))},
                     {"on_constant", c.on_constant}});
  nlohmann::json j{{"schema", "ampx.plan/1"},
                   {"model", model},
                   {"device", plan.device_id},
                   {"amp", std::string(amp_level_name(plan.policy.level))},
                   {"dtype", std::string(dtype_name(plan.policy.half))},
                   {"nodes", std::move(nodes)},
                   {"casts", std::move(casts)},
                   {"summary", summary_to_json(plan.summary)}};
  if (plan.predicted_us >= 0) {
    j["predicted_us"] = plan.predicted_us;
    j["cost_source"] = plan.cost_source;
  }
  return j;
}

void print_plan_text(std::ostream& out, const AmpPlan& plan, const std::string& model) {
  size_t wn = 4, wo = 2;
  for (const auto& n : plan.nodes) {
    wn = std::max(wn, n.name.size());
    wo = std::max(wo, op_name(n.op).size());
  }
  out << fmt::format("{}: {}\n\n", model, plan_title(plan));
  const bool costs = plan.predicted_us >= 0;
  out << fmt::format("{:<{}}  {:<{}}  {:<9}  {:<9}  {:<17}{}\n", "node", wn, "op", wo, "intended",
                     "effective", "reason", costs ? "  predicted (f32 / 16-bit)" : "");
  auto us = [](double v) { return v < 0 ? std::string("?") : fmt::format("{:.1f}", v); };
  for (const auto& n : plan.nodes) {
    std::string cost;
    if (costs) {
      cost = "  " + us(n.predicted_us) + " us";
      if (n.time_f32_us >= 0) cost += " (" + us(n.time_f32_us) + " / " + us(n.time_16_us) + ")";
    }
    if (!n.origin.empty()) cost += "  [from " + n.origin + "]";
    out << fmt::format("{:<{}}  {:<{}}  {:<9}  {:<9}  {:<17}{}\n", n.name, wn, op_name(n.op), wo,
                       dtype_name(n.intended), dtype_name(n.effective), n.reason(), cost);
  }
  out << fmt::format("\ncasts inserted: {}\n", plan.casts.size());
  for (const auto& c : plan.casts)
    out << fmt::format("  {}  ({} {} -> {}{})\n", c.name, c.value, dtype_name(c.from),
                       dtype_name(c.to), c.on_constant ? ", weight: folded at load" : "");
  const auto& s = plan.summary;
  out << fmt::format(
      "\nsummary: {} nodes ({} float), intended 16-bit {}, effectively 16-bit {}, kept f32 "
      "for lack of a native kernel {}, kept f32 by cost {}, casts {} ({} on weights)\n",
      s.nodes, s.float_nodes, s.intended_16bit, s.effective_16bit, s.kept_fp32_no_native,
      s.kept_fp32_cost, s.casts, s.casts_on_constants);
  if (costs)
    out << fmt::format("predicted time per run: {:.1f} us, from {}\n", plan.predicted_us,
                       plan.cost_source);
}

}  // namespace ampx::cli
