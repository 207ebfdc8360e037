// `ampx plan`: the effective mixed-precision plan of a model on its devices:
// precision and placement of every node, with reasons.
#include "commands.hpp"
#include "plan_output.hpp"

#include <ampx/models/load_model.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

struct PlanOptions {
  std::string model;
  DeviceArgs devices;
  ModelArgs model_args;
  PolicyOptions policy;
  Format format = Format::kText;
};

int run_plan(const GlobalOptions& global, const PlanOptions& opts) {
  AmpPolicy policy = opts.policy.to_policy();
  const Graph graph = load_model(opts.model, opts.model_args.to_options());
  const auto host = make_plugin_host(global);
  const PlannedModel pm =
      plan_model(host, graph, opts.model, opts.devices, opts.policy, policy, false, false);
  const AmpPlan& plan = pm.plan;
  const auto& choice = pm.dtype_choice;
  if (opts.format == Format::kJson) {
    auto j = plan_to_json(plan, opts.model);
    if (choice) j["dtype_auto"] = half_choice_to_json(*choice);
    if (!pm.selection.ranking.empty()) j["device_ranking"] = pm.selection.ranking;
    std::cout << j.dump(2) << "\n";
  } else {
    if (choice)
      std::cout << "--dtype auto: " << dtype_name(choice->half) << " (" << choice->f16_effective
                << " nodes native in f16, " << choice->bf16_effective << " in bf16)\n";
    for (const auto& line : pm.selection.ranking) std::cout << "--device auto: " << line << "\n";
    print_plan_text(std::cout, plan, opts.model);
  }
  return 0;
}

}  // namespace

Action add_plan_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("plan", "Show the effective AMP plan of a model on a device");
  auto opts = std::make_shared<PlanOptions>();
  cmd->add_option("MODEL", opts->model, "builtin:cnn, builtin:mlp, builtin:encoder or FILE.onnx")
      ->required();
  opts->model_args.add_to(*cmd);
  opts->devices.add_to(*cmd);
  opts->policy.add_to(*cmd);
  opts->policy.add_stored_plan_sources_to(*cmd);
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_plan(global, *opts); };
}

}  // namespace ampx::cli
