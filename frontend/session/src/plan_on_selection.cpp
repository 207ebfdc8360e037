#include <ampx/session/plan_on_selection.hpp>
#include <ampx/tune/tuned_plan_key.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>

namespace ampx {

AmpPlan plan_on_selection(const Graph& graph, const std::string& model_name,
                          const AmpPolicy& policy, const DeviceSelection& selection,
                          std::span<const DevicePin> pins, const PlanOptions& options,
                          TunedPlans tuned, const std::optional<std::string>& db_path) {
  const auto devices = selection.plan_devices();
  const bool costs = std::all_of(selection.devices.begin(), selection.devices.end(),
                                 [](const SelectedDevice& d) { return d.cost != nullptr; });
  std::optional<StoredTuning> tuning;
  if (tuned == TunedPlans::kUse && costs && !options.capability_blind && !options.tuned_f32)
    tuning =
        find_tuned_plan(graph, model_name, tuned_plan_lookup_key(policy, selection, pins), db_path);
  if (!tuning) return plan_amp(graph, policy, devices, options, pins);
  spdlog::info("{}: using the stored {}", model_name, tuning->note);
  PlanOptions with_tuning = options;
  with_tuning.tuned_f32 = &tuning->f32_nodes;
  AmpPlan plan = plan_amp(graph, policy, devices, with_tuning, pins);
  plan.tuned = tuning->note;
  return plan;
}

}  // namespace ampx
