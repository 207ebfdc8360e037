// `ampx devices`: plugins found, their devices, and the plugins skipped.
#include "commands.hpp"
#include "devices_output.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

struct DevicesOptions {
  Format format = Format::kText;
};

int run_devices(const GlobalOptions& global, const DevicesOptions& opts) {
  const Session session(session_options(global));
  const plugins::PluginHost& host = session.host();
  if (opts.format == Format::kJson) {
    const nlohmann::json j = devices_json(host);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("devices ({}):\n", host.devices().size());
  for (const auto& d : host.devices()) {
    const auto& p = d.props();
    std::cout << fmt::format("  {:<14} {} [{}]\n", d.id(), p.name, device_type_name(p.type));
    std::cout << fmt::format("  {:<14} vendor: {}; driver: {}; memory: {} MiB; units: {}\n", "",
                             p.vendor, p.driver_version, p.memory_bytes >> 20, p.compute_units);
    std::cout << fmt::format("  {:<14} fingerprint: {}\n", "", p.fingerprint);
  }
  std::cout << fmt::format("\nplugins loaded ({}):\n", host.plugins().size());
  for (const auto& p : host.plugins()) {
    std::cout << fmt::format("  {} {} (ABI {}.{}) {}\n", p.name, p.version, p.abi_major,
                             p.abi_minor, p.file.string());
    if (!p.library.empty()) std::cout << fmt::format("      built on: {}\n", p.library);
    if (!p.note.empty()) std::cout << fmt::format("      note: {}\n", p.note);
    for (const auto& o : p.options)
      std::cout << fmt::format("      option {}={}: {}\n", o.key, o.values, o.doc);
    std::cout << fmt::format("      f16 kernels: {}{}\n", accumulation_name(p),
                             p.declares_numerics ? "" : " (not declared: the op set's contract)");
  }
  std::cout << fmt::format("\nplugins skipped ({}):\n", host.skipped().size());
  for (const auto& s : host.skipped())
    std::cout << fmt::format("  {}: {}\n", s.name_hint, s.reason);
  return 0;
}

}  // namespace

Action add_devices_command(CLI::App& app, const GlobalOptions& global) {
  auto* cmd = app.add_subcommand("devices", "List plugins, devices and skipped plugins");
  auto opts = std::make_shared<DevicesOptions>();
  add_format_option(*cmd, opts->format);
  return [&global, opts] { return run_devices(global, *opts); };
}

}  // namespace ampx::cli
