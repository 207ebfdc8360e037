// How a plan is shown: a table for people, JSON (schema ampx.plan/1, see
// docs/cli-json.md) for programs.
#pragma once

#include <ampx/amp/planner.hpp>

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

namespace ampx::cli {

nlohmann::json summary_to_json(const PlanSummary& s);
// The plan's devices (with their node counts), fallbacks and per-run copies.
nlohmann::json placement_to_json(const AmpPlan& plan);
nlohmann::json plan_to_json(const AmpPlan& plan, const std::string& model);
// The `dtype_auto` member of plan/run JSON when --dtype auto chose.
nlohmann::json half_choice_to_json(const HalfChoice& c);
void print_plan_text(std::ostream& out, const AmpPlan& plan, const std::string& model);
// "O2 f16 on cpu_ref:0"
std::string plan_title(const AmpPlan& plan);

}  // namespace ampx::cli
