// A plugin host over the test plugins' build directory only
// (AMPX_TEST_PLUGIN_DIR, a compile definition of the test targets), its
// test_native plugin configured through the environment it reads when it
// is created: which ops it answers natively, which it lacks, and whether it
// counts kernel prepares and buffer allocations (its plugin_info note,
// Device::plugin_note()).
#pragma once

#include <ampx/plugins/plugin_host.hpp>

#include <cstdlib>

namespace ampx::test {

enum class NativeCounters { kOff, kOn };

struct TestNativeOptions {
  const char* native_ops = "*";  // AMPX_TEST_NATIVE_OPS
  const char* missing_ops = "";  // AMPX_TEST_MISSING_OPS, unset again after creation
  NativeCounters counters = NativeCounters::kOff;  // AMPX_TEST_NATIVE_COUNTERS
};

inline plugins::PluginHost test_native_host(const TestNativeOptions& o = {}) {
  ::setenv("AMPX_TEST_NATIVE_OPS", o.native_ops, 1);
  ::setenv("AMPX_TEST_MISSING_OPS", o.missing_ops, 1);
  if (o.counters == NativeCounters::kOn) ::setenv("AMPX_TEST_NATIVE_COUNTERS", "1", 1);
  plugins::PluginHostOptions opts;
  opts.extra_dirs = {AMPX_TEST_PLUGIN_DIR};
  opts.use_env_path = false;
  plugins::PluginHost h(opts);
  ::unsetenv("AMPX_TEST_MISSING_OPS");
  return h;
}

}  // namespace ampx::test
