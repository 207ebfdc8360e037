#include "devices_output.hpp"

#include <ampx/capability/native_dtypes.hpp>
#include <ampx/opset/tolerances.hpp>
#include <ampx/plugin_support.hpp>
#include <ampx/session/device_capabilities.hpp>

#include <fmt/format.h>

#include <cstring>
#include <string>

namespace ampx::cli {
namespace {

// A fixed-size field of ampx_device_props, up to its NUL or its end.
template <size_t N>
std::string field(const char (&chars)[N]) {
  return std::string(chars, strnlen(chars, N));
}

// The device's `native` object: op -> the float dtypes it runs natively
// (capability::native_dtypes, the planner's own question). A plugin whose
// query fails gets `native_error` instead, so one plugin's bad answer does
// not hide the others' devices.
void add_native(const plugins::Device& device, nlohmann::json& out) {
  try {
    DeviceCapabilities caps(device);
    nlohmann::json native = nlohmann::json::object();
    for (const auto& op : capability::native_dtypes(caps)) {
      nlohmann::json names = nlohmann::json::array();
      for (const ampx_dtype dt : op.native) names.push_back(plugin_support::dtype_name(dt));
      native[op.op] = std::move(names);
    }
    out["native"] = std::move(native);
  } catch (const std::exception& e) {
    out["native_error"] = e.what();
  }
}

}  // namespace

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

const char* accumulation_name(const plugins::PluginRecord& p) {
  return opset::compute_mode_name(opset::compute_mode_of(p.f16_accumulation));
}

nlohmann::json devices_json(const plugins::PluginHost& host) {
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
    nlohmann::json device{{"id", d.id()},
                          {"plugin", d.plugin_name()},
                          {"name", field(p.name)},
                          {"vendor", field(p.vendor)},
                          {"driver_version", field(p.driver_version)},
                          {"fingerprint", field(p.fingerprint)},
                          {"memory_bytes", p.memory_bytes},
                          {"type", device_type_name(p.type)},
                          {"compute_units", p.compute_units}};
    add_native(d, device);
    j["devices"].push_back(std::move(device));
  }
  j["skipped"] = nlohmann::json::array();
  for (const auto& s : host.skipped())
    j["skipped"].push_back(
        {{"file", s.file.string()}, {"name", s.name_hint}, {"reason", s.reason}});
  return j;
}

}  // namespace ampx::cli
