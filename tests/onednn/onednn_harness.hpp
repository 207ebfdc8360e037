// Shared by the oneDNN plugin tests: both plugins loaded through the C ABI,
// one node run through a plugin's buffers and prepared kernel.
#pragma once

#include <string>
#include <vector>

#include "harness.hpp"
#include "loaded_plugin.hpp"
#include "run_on_plugin.hpp"

namespace ampx::test {

inline std::string plugin_path(const char* name) {
  return std::string(AMPX_PLUGIN_BUILD_DIR) + "/libampx_backend_" + name + ".so";
}

// plugin_info.note (with debug_counters=1 it holds the plugin's counters).
inline std::string plugin_note(const Plugin& p) {
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(p.api->plugin_info(p.plugin, &info));
  return info.note;
}

}  // namespace ampx::test
