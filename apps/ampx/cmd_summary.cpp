// `ampx summary`: effective 16-bit coverage of every built-in model at every
// amp level on every device found: the quick answer to "what does O2 mean here".
#include "commands.hpp"
#include "plan_output.hpp"

#include <ampx/models/builtin_models.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

struct SummaryOptions {
  std::string dtype = "f16";
  Format format = Format::kText;
};

int run_summary(const GlobalOptions& global, const SummaryOptions& opts) {
  PolicyOptions po;
  po.dtype = opts.dtype;
  AmpPolicy base = po.to_policy();
  const auto host = make_plugin_host(global);
  if (host.devices().empty()) throw std::runtime_error("no devices found (see `ampx devices`)");
  nlohmann::json rows = nlohmann::json::array();
  if (opts.format == Format::kText)
    std::cout << fmt::format("{:<8} {:<16} {:<5} {:<5} {:>5} {:>9} {:>10} {:>14} {:>6} {:>12}\n",
                             "model", "device", "amp", "dtype", "nodes", "intended", "effective",
                             "no-native-kern", "casts", "weight-casts");
  for (auto model : builtin_model_names()) {
    const Graph graph = make_builtin_model(model);
    for (const auto& device : host.devices()) {
      DeviceCapabilities caps(device);
      for (AmpLevel level : {AmpLevel::kO0, AmpLevel::kO1, AmpLevel::kO2, AmpLevel::kO3}) {
        AmpPolicy policy = base;
        policy.level = level;
        nlohmann::json row{{"model", "builtin:" + std::string(model)},
                           {"device", device.id()},
                           {"amp", std::string(amp_level_name(level))}};
        try {
          po.resolve_dtype(graph, policy, caps);
          row["dtype"] = std::string(dtype_name(policy.half));
          const AmpPlan plan =
              plan_amp(graph, policy, caps, ampx::PlanOptions{.build_graph = false});
          const auto& s = plan.summary;
          row["summary"] = summary_to_json(s);
          if (opts.format == Format::kText)
            std::cout << fmt::format(
                "{:<8} {:<16} {:<5} {:<5} {:>5} {:>9} {:>10} {:>14} {:>6} {:>12}\n", model,
                device.id(), amp_level_name(level), dtype_name(policy.half), s.nodes,
                s.intended_16bit, s.effective_16bit, s.kept_fp32_no_native,
                s.casts - s.casts_on_constants, s.casts_on_constants);
        } catch (const std::exception& e) {
          row["error"] = e.what();
          spdlog::warn("{} on {} at {}: {}", model, device.id(), amp_level_name(level), e.what());
          if (opts.format == Format::kText)
            std::cout << fmt::format("{:<8} {:<16} {:<5} error: {}\n", model, device.id(),
                                     amp_level_name(level), e.what());
        }
        rows.push_back(std::move(row));
      }
    }
  }
  if (opts.format == Format::kJson) {
    std::cout << nlohmann::json{{"schema", "ampx.summary/1"}, {"rows", std::move(rows)}}.dump(2)
              << "\n";
  } else {
    std::cout << "\nintended: nodes the amp level sends to 16-bit; effective: nodes that run in "
                 "16-bit because the device has a native kernel; no-native-kern: intended but "
                 "kept f32; casts: run on every inference; weight-casts: folded once at load.\n";
  }
  return 0;
}

}  // namespace

Action add_summary_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "summary", "Effective-precision summary of every built-in model at O0-O3 on every device");
  auto opts = std::make_shared<SummaryOptions>();
  cmd->add_option("--dtype", opts->dtype, "16-bit type: f16, bf16 or auto (per device and level)")
      ->capture_default_str();
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_summary(global, *opts); };
}

}  // namespace ampx::cli
