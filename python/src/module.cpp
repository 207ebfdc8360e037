// The `ampx._ampx` module: logging as the CLI sets it up, and the parts
// registered by the other files (one concept per file).
#include "bindings.hpp"

#include <nanobind/stl/string.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <boost/dll/runtime_symbol_info.hpp>

namespace ampx::python {

std::filesystem::path module_directory() {
  boost::dll::fs::error_code ec;
  const std::filesystem::path self = boost::dll::this_line_location(ec);
  if (ec || self.empty()) return {};
  return self.parent_path();
}

namespace {

// Warnings and errors on stderr, one line each with the CLI's prefix (the
// nodes that fall back, a plugin skipped); `log_level` changes the level.
void setup_logging() {
  if (spdlog::get("ampx")) return;
  auto logger = spdlog::stderr_color_mt("ampx");
  logger->set_pattern("ampx: %^%l%$: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::warn);
}

void set_log_level(const std::string& level) {
  const auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw std::invalid_argument("log level '" + level +
                                "': expected trace, debug, info, warn, error, critical or off");
  spdlog::set_level(lvl);
}

}  // namespace
}  // namespace ampx::python

NB_MODULE(_ampx, m) {
  using namespace ampx::python;
  m.doc() = "ampx's Session (docs/PYTHON.md); use the package `ampx`, not this module";
  setup_logging();
  m.def("set_log_level", &set_log_level, nb::arg("level"),
        "The level of ampx's log on stderr: trace, debug, info, warn (the default), error, "
        "critical or off.");
  m.def(
      "package_plugin_dir", [] { return (module_directory() / "plugins").string(); },
      "The plugin directory shipped with the package, searched after AMPX_PLUGIN_PATH.");
  register_errors(m);
  register_devices(m);
  register_session(m);
  register_plan(m);
  register_compiled(m);
  register_signature(m);
}
