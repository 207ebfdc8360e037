// Shared by the Vulkan plugin tests: plugins loaded through the C ABI, one
// node run through a plugin's buffers and prepared kernel, and the skip for
// machines without a Vulkan device.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "loaded_plugin.hpp"
#include "run_on_plugin.hpp"

namespace ampx::test {

inline std::string plugin_path(const char* name) {
  // Appended step by step: GCC 12 warns (-Warray-bounds, a false positive)
  // on the chained operator+ of a literal once this is inlined.
  std::string path = AMPX_PLUGIN_BUILD_DIR;
  path += "/libampx_backend_";
  path += name;
  path += ".so";
  return path;
}

inline int32_t device_count(const Plugin& p) {
  int32_t n = 0;
  p.ok(p.api->device_count(p.plugin, &n));
  return n;
}

inline std::string plugin_note(const Plugin& p) {
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(p.api->plugin_info(p.plugin, &info));
  return info.note;
}

// With AMPX_VULKAN_VALIDATION set (the test suite sets it), the plugin's
// note ends in "Khronos validation on, N errors": N must be 0.
inline void expect_no_validation_errors(const Plugin& p) {
  if (!std::getenv("AMPX_VULKAN_VALIDATION")) return;
  const std::string note = plugin_note(p);
  EXPECT_NE(note.find("Khronos validation on, 0 errors"), std::string::npos) << note;
}

// Skips the test (visibly, with the plugin's reason) without a Vulkan device.
#define AMPX_SKIP_WITHOUT_VULKAN(plugin)                                         \
  do {                                                                           \
    if (::ampx::test::device_count(plugin) == 0)                                 \
      GTEST_SKIP() << "no Vulkan device: " << ::ampx::test::plugin_note(plugin); \
  } while (0)

}  // namespace ampx::test
