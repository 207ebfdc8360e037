// `ampx export`: a model's effective plan on one device, written back as an
// ONNX model (opset 17) that any ONNX runtime can run: 16-bit nodes and
// weights where the plan has them, Casts exactly where it puts them.
#include "commands.hpp"
#include "plan_output.hpp"

#include <ampx/onnx/onnx_export.hpp>
#include <ampx/session/session.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

struct ExportOptions {
  std::string model;
  DeviceArgs devices;
  std::string output;
  ModelArgs model_args;
  PolicyOptions policy;
  Format format = Format::kText;
};

int run_export(const GlobalOptions& global, const ExportOptions& opts) {
  (void)opts.policy.to_policy();  // a bad flag fails before the model loads
  const Graph graph = load_model(opts.model, opts.model_args.to_options());
  SessionOptions so = session_options(global);
  opts.devices.apply_to(so);
  opts.policy.apply_to(so);
  Session session(std::move(so));
  const PlannedModel pm =
      session.plan(graph, opts.policy.plan_request(opts.model, opts.devices, PlanPurpose::kExport));
  const AmpPlan& plan = pm.plan;
  const AmpPolicy& policy = pm.policy;
  const auto& choice = pm.dtype_choice;

  onnx_io::ExportOptions eo;
  eo.doc = fmt::format("ampx export of {}: plan {}{}", opts.model, plan_title(plan),
                       opts.policy.capability_blind ? " (capability-blind)" : "");
  for (ValueId v : graph.outputs()) eo.output_names.push_back(graph.value(v).name);
  onnx_io::ExportStats st;
  onnx_io::write_onnx(plan.graph, opts.output, eo, &st);

  if (opts.format == Format::kJson) {
    nlohmann::json j{{"schema", "ampx.export/1"},
                     {"model", opts.model},
                     {"output", opts.output},
                     {"device", plan.device_id},
                     {"amp", std::string(amp_level_name(policy.level))},
                     {"dtype", std::string(dtype_name(policy.half))},
                     {"capability_blind", opts.policy.capability_blind},
                     {"opset", 17},
                     {"nodes", st.nodes},
                     {"nodes_16bit", st.nodes_16bit},
                     {"casts", st.casts},
                     {"folded_casts", st.folded_casts},
                     {"initializers", st.initializers},
                     {"initializers_16bit", st.initializers_16bit},
                     {"initializer_bytes", st.initializer_bytes},
                     {"initializer_16bit_bytes", st.initializer_16bit_bytes},
                     {"bytes", st.model_bytes},
                     {"plan", summary_to_json(plan.summary)}};
    if (choice) j["dtype_auto"] = half_choice_to_json(*choice);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{}: plan {} -> {}\n", opts.model, plan_title(plan), opts.output);
  std::cout << fmt::format("  ONNX opset 17: {} nodes ({} computing in 16-bit), {} Casts\n",
                           st.nodes, st.nodes_16bit, st.casts);
  std::cout << fmt::format(
      "  initializers: {} ({} in 16-bit, {} Casts of weights folded), {:.2f} MiB\n",
      st.initializers, st.initializers_16bit, st.folded_casts,
      static_cast<double>(st.initializer_bytes) / 1048576.0);
  std::cout << fmt::format("  file: {} bytes\n", st.model_bytes);
  return 0;
}

}  // namespace

Action add_export_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "export", "Write a model's effective AMP plan on a device as an ONNX model (opset 17)");
  auto opts = std::make_shared<ExportOptions>();
  cmd->add_option("MODEL", opts->model, "builtin:cnn, builtin:mlp, builtin:encoder or FILE.onnx")
      ->required();
  cmd->add_option("-o,--output", opts->output, "the ONNX file to write (atomically)")->required();
  opts->model_args.add_to(*cmd);
  opts->devices.add_to(*cmd);
  opts->policy.add_to(*cmd);
  opts->policy.add_stored_plan_sources_to(*cmd);
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_export(global, *opts); };
}

}  // namespace ampx::cli
