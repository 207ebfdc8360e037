// ampx.devices(): the plugins found, their devices and the plugins skipped,
// as `ampx devices --format json` (schema ampx.devices/1) lists them.
#include "bindings.hpp"

#include <ampx/opset/tolerances.hpp>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

namespace ampx::python {
namespace {

// A fixed-size field of ampx_device_props, up to its NUL or its end.
template <size_t N>
std::string field(const char (&chars)[N]) {
  return std::string(chars, strnlen(chars, N));
}

const char* device_kind(ampx_device_type t) {
  switch (t) {
    case AMPX_DEVICE_CPU:
      return "cpu";
    case AMPX_DEVICE_GPU:
      return "gpu";
    default:
      return "other";
  }
}

nb::dict list_devices(const std::vector<std::string>& plugin_dirs,
                      const std::vector<std::string>& exclude_plugins) {
  SessionOptions options = base_session_options();
  for (const std::string& d : plugin_dirs) options.plugin_dirs.emplace_back(d);
  options.excluded_plugins = exclude_plugins;
  std::optional<Session> session;
  {
    nb::gil_scoped_release release;  // the pre-flight children take a while
    session.emplace(std::move(options));
  }
  const plugins::PluginHost& host = session->host();
  nb::list devices, plugin_list, skipped, dirs;
  for (const plugins::Device& d : host.devices()) {
    const auto& p = d.props();
    nb::dict r;
    r["id"] = d.id();
    r["plugin"] = d.plugin_name();
    r["name"] = field(p.name);
    r["kind"] = device_kind(p.type);
    r["vendor"] = field(p.vendor);
    r["driver_version"] = field(p.driver_version);
    r["fingerprint"] = field(p.fingerprint);
    r["memory_bytes"] = p.memory_bytes;
    r["compute_units"] = p.compute_units;
    devices.append(r);
  }
  for (const plugins::PluginRecord& p : host.plugins()) {
    nb::dict r;
    r["name"] = p.name;
    r["version"] = p.version;
    r["file"] = p.file.string();
    r["abi"] = std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor);
    r["library"] = p.library;
    r["note"] = p.note;
    r["devices"] = p.device_ids;
    r["f16_accumulation"] = opset::compute_mode_name(opset::compute_mode_of(p.f16_accumulation));
    plugin_list.append(r);
  }
  for (const plugins::SkippedPlugin& s : host.skipped()) {
    nb::dict r;
    r["file"] = s.file.string();
    r["name"] = s.name_hint;
    r["reason"] = s.reason;
    skipped.append(r);
  }
  for (const auto& d : host.search_dirs()) dirs.append(d.string());
  nb::dict out;
  out["schema"] = "ampx.devices/1";
  out["search_dirs"] = dirs;
  out["plugins"] = plugin_list;
  out["devices"] = devices;
  out["skipped"] = skipped;
  return out;
}

}  // namespace

void register_devices(nb::module_& m) {
  m.def("list_devices", &list_devices, nb::arg("plugin_dirs") = std::vector<std::string>{},
        nb::arg("exclude_plugins") = std::vector<std::string>{},
        "Plugins, devices and skipped plugins as `ampx devices --format json` lists them "
        "(schema ampx.devices/1).");
}

}  // namespace ampx::python
