#include "plan_output.hpp"

#include <ampx/plugin_support.hpp>

#include <fmt/format.h>
#include <algorithm>

namespace ampx::cli {

std::string plan_title(const AmpPlan& plan) {
  return std::string(amp_level_name(plan.policy.level)) + " " +
         std::string(dtype_name(plan.policy.half)) + " on " + plan.device_id +
         (plan.tuned.empty() ? "" : ", tuned");
}

nlohmann::json summary_to_json(const PlanSummary& s) {
  return {{"nodes", s.nodes},
          {"float_nodes", s.float_nodes},
          {"intended_16bit", s.intended_16bit},
          {"effective_16bit", s.effective_16bit},
          {"kept_fp32_no_native_kernel", s.kept_fp32_no_native},
          {"kept_fp32_cost", s.kept_fp32_cost},
          {"kept_fp32_tuned", s.kept_fp32_tuned},
          {"casts", s.casts},
          {"casts_on_constants", s.casts_on_constants},
          {"fallbacks", s.fallbacks},
          {"placed_by_cost", s.placed_by_cost},
          {"pinned", s.pinned},
          {"copies", s.copies},
          {"copy_bytes", s.copy_bytes}};
}

nlohmann::json placement_to_json(const AmpPlan& plan) {
  nlohmann::json devices = nlohmann::json::array();
  for (size_t d = 0; d < plan.devices.size(); ++d)
    devices.push_back(
        {{"id", plan.devices[d]},
         {"fallback_only", d < plan.fallback_only.size() && plan.fallback_only[d]},
         {"nodes",
          d < plan.summary.nodes_per_device.size() ? plan.summary.nodes_per_device[d] : 0}});
  nlohmann::json copies = nlohmann::json::array();
  for (const CopyRecord& c : plan.copies)
    copies.push_back({{"value", c.value},
                      {"from", plan.devices[static_cast<size_t>(c.from)]},
                      {"to", plan.devices[static_cast<size_t>(c.to)]},
                      {"bytes", c.bytes}});
  return {{"devices", std::move(devices)},
          {"fallbacks", plan.summary.fallbacks},
          {"placed_by_cost", plan.summary.placed_by_cost},
          {"pinned", plan.summary.pinned},
          {"copies", std::move(copies)},
          {"copy_bytes_per_run", plan.summary.copy_bytes}};
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
                     {"intent_reason", std::string(intent_reason_name(n.intent_reason))},
                     {"device", plan.devices.at(static_cast<size_t>(n.device))},
                     {"placement", std::string(placement_reason_name(n.placement))}};
    if (!n.placement_note.empty()) j["placement_note"] = n.placement_note;
    if (!n.origin.empty()) j["origin"] = n.origin;
    if (n.is_float_node && is_16bit_float(n.intended)) {
      j["device_16bit_support"] = plugin_support::support_name(n.support_16bit);
      if (const auto note = plan.note_of(n); !note.empty()) j["device_note"] = note;
    }
    if (n.predicted_us >= 0) {
      j["predicted_us"] = n.predicted_us;
      j["cost_origin"] = capability::cost_origin_name(n.cost_origin);
    }
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
                     {"on_constant", c.on_constant},
                     {"device", plan.devices.at(static_cast<size_t>(c.device))}});
  nlohmann::json j{{"schema", "ampx.plan/1"},
                   {"model", model},
                   {"device", plan.device_id},
                   {"amp", std::string(amp_level_name(plan.policy.level))},
                   {"dtype", std::string(dtype_name(plan.policy.half))},
                   {"nodes", std::move(nodes)},
                   {"casts", std::move(casts)},
                   {"placement", placement_to_json(plan)},
                   {"summary", summary_to_json(plan.summary)}};
  if (plan.predicted_us >= 0) {
    j["predicted_us"] = plan.predicted_us;
    j["cost_source"] = plan.cost_source;
    j["predictions_by_origin"] = {{"measured", plan.predicted_measured},
                                  {"probe", plan.predicted_probe},
                                  {"hint", plan.predicted_hint}};
  }
  if (!plan.tuned.empty()) j["tuned"] = plan.tuned;
  return j;
}

void print_plan_text(std::ostream& out, const AmpPlan& plan, const std::string& model) {
  size_t wn = 4, wo = 2, wd = 6, wp = 9;
  const bool placed = plan.devices.size() > 1;
  for (const auto& n : plan.nodes) {
    wn = std::max(wn, n.name.size());
    wo = std::max(wo, op_name(n.op).size());
    if (!placed) continue;
    wd = std::max(wd, plan.devices[static_cast<size_t>(n.device)].size());
    wp = std::max(wp, n.placement_text().size());
  }
  // Multi-device plans: each node's device and why it is there.
  auto where = [&](const NodePlan& n) {
    if (!placed) return std::string();
    return fmt::format("  {:<{}}  {:<{}}", plan.devices[static_cast<size_t>(n.device)], wd,
                       n.placement_text(), wp);
  };
  out << fmt::format("{}: {}\n\n", model, plan_title(plan));
  const bool costs = plan.predicted_us >= 0;
  const std::string where_head =
      placed ? fmt::format("  {:<{}}  {:<{}}", "device", wd, "placement", wp) : "";
  std::string head =
      fmt::format("{:<{}}  {:<{}}  {:<9}  {:<9}  {:<17}{}{}", "node", wn, "op", wo, "intended",
                  "effective", "reason", where_head, costs ? "  predicted (f32 / 16-bit)" : "");
  while (!head.empty() && head.back() == ' ') head.pop_back();
  out << head << "\n";
  auto us = [](double v) { return v < 0 ? std::string("?") : fmt::format("{:.1f}", v); };
  for (const auto& n : plan.nodes) {
    std::string cost;
    if (costs) {
      cost = "  " + us(n.predicted_us) + " us";
      if (n.cost_origin == capability::CostOrigin::kMeasured) cost += "*";
      if (n.time_f32_us >= 0) cost += " (" + us(n.time_f32_us) + " / " + us(n.time_16_us) + ")";
    }
    if (!n.origin.empty()) cost += "  [from " + n.origin + "]";
    std::string line =
        fmt::format("{:<{}}  {:<{}}  {:<9}  {:<9}  {:<17}{}{}", n.name, wn, op_name(n.op), wo,
                    dtype_name(n.intended), dtype_name(n.effective), n.reason(), where(n), cost);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << fmt::format("\ncasts inserted: {}\n", plan.casts.size());
  for (const auto& c : plan.casts)
    out << fmt::format("  {}  ({} {} -> {}{}{})\n", c.name, c.value, dtype_name(c.from),
                       dtype_name(c.to), c.on_constant ? ", weight: folded at load" : "",
                       placed ? ", on " + plan.devices[static_cast<size_t>(c.device)] : "");
  if (placed) {
    out << fmt::format("\ncopies per run: {} ({} bytes)\n", plan.copies.size(),
                       plan.summary.copy_bytes);
    for (const auto& c : plan.copies)
      out << fmt::format("  {}  {} -> {}  ({} bytes)\n", c.value,
                         plan.devices[static_cast<size_t>(c.from)],
                         plan.devices[static_cast<size_t>(c.to)], c.bytes);
  }
  const auto& s = plan.summary;
  out << fmt::format(
      "\nsummary: {} nodes ({} float), intended 16-bit {}, effectively 16-bit {}, kept f32 "
      "for lack of a native kernel {}, kept f32 by cost {}{}, casts {} ({} on weights)\n",
      s.nodes, s.float_nodes, s.intended_16bit, s.effective_16bit, s.kept_fp32_no_native,
      s.kept_fp32_cost,
      plan.tuned.empty() ? "" : fmt::format(", kept f32 by tuning {}", s.kept_fp32_tuned), s.casts,
      s.casts_on_constants);
  if (placed) {
    std::string per;
    for (size_t d = 0; d < plan.devices.size(); ++d)
      per += fmt::format("{}{} on {}{}", d ? ", " : "", s.nodes_per_device[d], plan.devices[d],
                         plan.fallback_only[d] ? " (fallback only)" : "");
    out << fmt::format(
        "placement: {}; fallbacks {}, by cost {}, pinned {}; copies per run {} ({} bytes)\n", per,
        s.fallbacks, s.placed_by_cost, s.pinned, s.copies, s.copy_bytes);
  }
  if (costs)
    out << fmt::format(
        "predicted time per run: {:.1f} us, from {} (nodes and Casts priced by: {} measured in "
        "context (*), "
        "{} probe, {} plugin hints)\n",
        plan.predicted_us, plan.cost_source, plan.predicted_measured, plan.predicted_probe,
        plan.predicted_hint);
  if (!plan.tuned.empty())
    out << fmt::format("tuned: the stored {} (ampx tune; --no-tuned plans without it)\n",
                       plan.tuned);
}

}  // namespace ampx::cli
