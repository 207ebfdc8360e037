// `ampx devices`: plugins found, their devices, and the plugins skipped.
#include "commands.hpp"

#include <fmt/format.h>
#include <ampx/opset/tolerances.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace ampx::cli {
namespace {

const char* device_type_name(ampx_device_type t) {
  switch (t) {
    case AMPX_DEVICE_CPU:
      return "cpu";
    case AMPX_DEVICE_GPU:
      return "gpu";
    default:
      return "other";
  }
}

struct DevicesOptions {
  Format format = Format::kText;
};

// The compute mode of a plugin's f16 kernels, as plugin-check names it.
const char* accumulation_name(const plugins::PluginRecord& p) {
  return opset::compute_mode_name(opset::compute_mode_of(p.f16_accumulation));
}

int run_devices(const GlobalOptions& global, const DevicesOptions& opts) {
  const Session session(session_options(global));
  const plugins::PluginHost& host = session.host();
  if (opts.format == Format::kJson) {
    nlohmann::json j{{"schema", "ampx.devices/1"}};
    j["search_dirs"] = nlohmann::json::array();
    for (const auto& d : host.search_dirs()) j["search_dirs"].push_back(d.string());
    j["plugins"] = nlohmann::json::array();
    for (const auto& p : host.plugins()) {
      nlohmann::json options = nlohmann::json::array();
      for (const auto& o : p.options)
        options.push_back({{"key", o.key}, {"values", o.values}, {"doc", o.doc}});
      j["plugins"].push_back({{"name", p.name},
                              {"version", p.version},
                              {"file", p.file.string()},
                              {"abi", fmt::format("{}.{}", p.abi_major, p.abi_minor)},
                              {"library", p.library},
                              {"note", p.note},
                              {"devices", p.device_ids},
                              {"options", options},
                              {"f16_accumulation", accumulation_name(p)}});
    }
    j["devices"] = nlohmann::json::array();
    for (const auto& d : host.devices()) {
      const auto& p = d.props();
      j["devices"].push_back({{"id", d.id()},
                              {"plugin", d.plugin_name()},
                              {"name", p.name},
                              {"vendor", p.vendor},
                              {"driver_version", p.driver_version},
                              {"fingerprint", p.fingerprint},
                              {"memory_bytes", p.memory_bytes},
                              {"type", device_type_name(p.type)},
                              {"compute_units", p.compute_units}});
    }
    j["skipped"] = nlohmann::json::array();
    for (const auto& s : host.skipped())
      j["skipped"].push_back(
          {{"file", s.file.string()}, {"name", s.name_hint}, {"reason", s.reason}});
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
