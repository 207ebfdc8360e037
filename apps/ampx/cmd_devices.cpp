// `ampx devices`: plugins found, their devices, and the plugins skipped.
#include "commands.hpp"
#include "devices_output.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace ampx::cli {
namespace {

struct DevicesOptions {
  Format format = Format::kText;
  bool ops = false;  // --ops: only the op x dtype table of native kernels
};

// `ampx devices --ops`: one row per op, one column per device, the float
// dtypes the device answers native for (devices_json's `native`, so the text
// and the JSON cannot disagree); `-` where not native.
void print_native_table(const nlohmann::json& listing) {
  const auto& devices = listing["devices"];
  std::vector<std::string> ops;  // every op any device lists, by name (a JSON object's order)
  for (const auto& d : devices) {
    if (!d.contains("native")) continue;
    for (const auto& [op, dtypes] : d["native"].items())
      if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
  }
  std::sort(ops.begin(), ops.end());
  std::cout << "native kernels (the planner's capability question at the probe's quick shapes; "
               "'-': emulated or unsupported):\n";
  std::string header = fmt::format("  {:<18}", "op");
  for (const auto& d : devices) header += fmt::format(" {:<14}", d["id"].get<std::string>());
  while (!header.empty() && header.back() == ' ') header.pop_back();
  std::cout << header << "\n";
  auto cell = [](const nlohmann::json& dtypes) {
    std::string s;
    for (const char* name : {"f32", "f16", "bf16"}) {
      const bool native = std::find(dtypes.begin(), dtypes.end(), name) != dtypes.end();
      s += fmt::format("{}{:<4}", s.empty() ? "" : " ", native ? name : "-");
    }
    return s;
  };
  for (const std::string& op : ops) {
    std::string row = fmt::format("  {:<18}", op);
    for (const auto& d : devices) {
      if (d.contains("native_error")) {
        row += fmt::format(" {:<14}", "error");
      } else {
        const auto& native = d["native"];
        row += fmt::format(" {:<14}", native.contains(op) ? cell(native[op]) : "not asked");
      }
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    std::cout << row << "\n";
  }
  for (const auto& d : devices)
    if (d.contains("native_error"))
      std::cout << fmt::format("  {}: {}\n", d["id"].get<std::string>(),
                               d["native_error"].get<std::string>());
}

int run_devices(const GlobalOptions& global, const DevicesOptions& opts) {
  const Session session(session_options(global));
  const plugins::PluginHost& host = session.host();
  if (opts.format == Format::kJson) {
    const nlohmann::json j = devices_json(host);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  if (opts.ops) {
    print_native_table(devices_json(host));
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
  cmd->add_flag("--ops", opts->ops,
                "only the table of native kernels: op x dtype per device (the JSON's 'native')");
  return [&global, opts] { return run_devices(global, *opts); };
}

}  // namespace ampx::cli
