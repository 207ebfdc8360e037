// ampx.devices(): the plugins found, their devices and the plugins skipped,
// written by the CLI's `ampx devices --format json` writer (devices_output.hpp).
#include "bindings.hpp"

#include "devices_output.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

namespace ampx::python {
namespace {

std::string list_devices(const std::vector<std::string>& plugin_dirs,
                         const std::vector<std::string>& exclude_plugins) {
  SessionOptions options = base_session_options();
  for (const std::string& d : plugin_dirs) options.plugin_dirs.emplace_back(d);
  options.excluded_plugins = exclude_plugins;
  std::optional<Session> session;
  {
    nb::gil_scoped_release release;  // the pre-flight children take a while
    session.emplace(std::move(options));
  }
  return cli::devices_json(session->host()).dump();
}

}  // namespace

void register_devices(nb::module_& m) {
  m.def("list_devices", &list_devices, nb::arg("plugin_dirs") = std::vector<std::string>{},
        nb::arg("exclude_plugins") = std::vector<std::string>{},
        "`ampx devices --format json` (schema ampx.devices/1), the CLI's own writer: plugins, "
        "devices (with their native dtypes per op) and skipped plugins, as a JSON text.");
}

}  // namespace ampx::python
