// ampx plugin-check PATH.so: the conformance kit (plugins/check).
#include <ampx/plugin_check/plugin_check.hpp>

#include "cli_common.hpp"
#include "commands.hpp"

#include <filesystem>
#include <iostream>

namespace ampx::cli {
namespace {

struct PluginCheckOptions {
  std::string file;
  int device = -1;
  std::vector<std::string> ops;
  std::vector<std::string> dtypes;
  bool perf = false;
  double timeout_s = 10;
  std::string compute_mode;  // empty: what the plugin declares
  Format format = Format::kText;
};

int run_plugin_check(const GlobalOptions& global, const PluginCheckOptions& o) {
  if (!std::filesystem::is_regular_file(o.file))
    throw UsageError("plugin-check: '" + o.file + "' is not a file");
  check::CheckOptions co;
  if (o.device >= 0) co.device = o.device;
  co.ops = o.ops;
  for (const std::string& d : o.dtypes) {
    if (d == "f32")
      co.dtypes.push_back(AMPX_DTYPE_F32);
    else if (d == "f16")
      co.dtypes.push_back(AMPX_DTYPE_F16);
    else if (d == "bf16")
      co.dtypes.push_back(AMPX_DTYPE_BF16);
    else
      throw UsageError("--dtype '" + d + "': expected f32, f16 or bf16");
  }
  co.perf = o.perf;
  co.timeout_s = o.timeout_s;
  if (o.compute_mode == "f16-accumulate")
    co.compute_mode = opset::ComputeMode::kF16Accumulate;
  else if (o.compute_mode == "f32-accumulate")
    co.compute_mode = opset::ComputeMode::kF32Accumulate;
  else if (!o.compute_mode.empty())
    throw UsageError("--compute-mode '" + o.compute_mode +
                     "': expected f32-accumulate or f16-accumulate");
  if (global.threads > 0) co.plugin_options = "threads=" + std::to_string(global.threads);
  for (const auto& dir : global.plugin_dirs) {
    const auto ref = std::filesystem::path(dir) / "libampx_backend_cpu_ref.so";
    if (co.reference.empty() && std::filesystem::exists(ref)) co.reference = ref;
  }
  const check::CheckReport report = check::check_plugin(o.file, co);
  if (o.device >= 0 && o.device >= report.devices && report.devices > 0)
    throw UsageError("--device " + std::to_string(o.device) + ": the plugin has " +
                     std::to_string(report.devices) + " device(s)");
  if (o.format == Format::kJson)
    std::cout << check::check_json(report);
  else
    check::print_check_text(std::cout, report, o.perf);
  return report.ok() ? 0 : 1;
}

}  // namespace

Action add_plugin_check_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand(
      "plugin-check",
      "Check a backend plugin: ABI, error paths, and every op case it answers against cpu_ref");
  auto opts = std::make_shared<PluginCheckOptions>();
  cmd->add_option("PATH", opts->file, "the plugin file (libampx_backend_<name>.so)")->required();
  cmd->add_option("--device", opts->device, "only this device index (default: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--op", opts->ops, "only cases of this op type (repeatable)")->take_all();
  cmd->add_option("--dtype", opts->dtypes, "only this dtype: f32, f16, bf16 (repeatable)")
      ->take_all();
  cmd->add_flag("--perf", opts->perf, "time each case on the plugin and on cpu_ref");
  cmd->add_option("--timeout", opts->timeout_s,
                  "seconds a step may call into the plugin without progress before it is "
                  "reported as hung (each step runs in a child process)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--compute-mode", opts->compute_mode,
                  "how the plugin accumulates f16: f32-accumulate (the op set's contract) or "
                  "f16-accumulate (the looser f16-accumulation tolerance); default: what the "
                  "plugin declares (ABI 1.3 numerics extension), else f32-accumulate");
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_plugin_check(global, *opts); };
}

}  // namespace ampx::cli
