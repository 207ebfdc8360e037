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

}  // namespace ampx::test
