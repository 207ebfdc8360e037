// Shared by the CUDA plugin tests: the plugin path (overridable for carried
// binaries), the reason to skip when there is no device, and one node run
// through a plugin's buffers and prepared kernel.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.hpp"
#include "loaded_plugin.hpp"
#include "run_on_plugin.hpp"

namespace ampx::test {

// AMPX_TEST_PLUGIN_DIR overrides the build directory: scripts/device-check.sh
// runs these binaries on another machine, from a carried directory.
inline std::string plugin_dir() {
  const char* d = std::getenv("AMPX_TEST_PLUGIN_DIR");
  return d && *d ? std::string(d) : std::string(AMPX_PLUGIN_BUILD_DIR);
}

inline std::string plugin_path(const char* name) {
  return plugin_dir() + "/libampx_backend_" + name + ".so";
}

// True when AMPX_EXPECT_CUDA_DEVICE=1: a GPU run, where "no device" fails.
inline bool expect_device() {
  const char* e = std::getenv("AMPX_EXPECT_CUDA_DEVICE");
  return e && std::string(e) == "1";
}

inline std::string plugin_note(const Plugin& p) {
  ampx_plugin_info info{};
  info.struct_size = sizeof info;
  p.ok(p.api->plugin_info(p.plugin, &info));
  return info.note;
}

inline int32_t device_count(const Plugin& p) {
  int32_t n = -1;
  p.ok(p.api->device_count(p.plugin, &n));
  return n;
}

// Empty when cuda:0 exists; otherwise why not (the plugin's note), for
// GTEST_SKIP. Asked once per process.
inline const std::string& no_device_reason() {
  static const std::string reason = [] {
    Plugin p(plugin_path("cuda"));
    if (device_count(p) > 0) return std::string();
    return "cuda plugin: " + plugin_note(p);
  }();
  return reason;
}

// Use at the top of every test that needs a GPU.
#define AMPX_REQUIRE_CUDA_DEVICE()                                                           \
  do {                                                                                       \
    const std::string& why_ = ::ampx::test::no_device_reason();                              \
    if (!why_.empty()) {                                                                     \
      if (::ampx::test::expect_device()) FAIL() << "AMPX_EXPECT_CUDA_DEVICE=1 but " << why_; \
      GTEST_SKIP() << why_;                                                                  \
    }                                                                                        \
  } while (0)

inline ampx_device_props props_of(const Plugin& p, int32_t device = 0) {
  ampx_device_props props{};
  props.struct_size = sizeof props;
  p.ok(p.api->device_props(p.plugin, device, &props));
  return props;
}

// "sm_90" -> 90, from the fingerprint; 0 when absent.
inline int compute_capability(const Plugin& p) {
  const std::string fp = props_of(p).fingerprint;
  const size_t at = fp.find("/sm_");
  return at == std::string::npos ? 0 : std::atoi(fp.c_str() + at + 4);
}

using plugin_support::support_name;

}  // namespace ampx::test
