// Shared by the oneDNN plugin tests: both plugins loaded through the C ABI,
// one node run through a plugin's buffers and prepared kernel.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
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

// The number after `label` in plugin_note(p) (debug_counters=1: "thread
// checks: ", "pinned ", "launch threads "); a failure and -1 when
// the note has none.
inline long long note_number(const Plugin& p, const std::string& label) {
  const std::string note = plugin_note(p);
  const size_t at = note.find(label);
  long long n = -1;
  if (at == std::string::npos || std::sscanf(note.c_str() + at + label.size(), "%lld", &n) != 1)
    ADD_FAILURE() << "no '" << label << "' in the note: " << note;
  return n;
}

// Whether the plugin runs below AVX-512 (its fingerprint's ISA), where
// oneDNN 2.6 has no 16-bit jit kernels.
inline bool below_avx512(const Plugin& p) {
  ampx_device_props props{};
  props.struct_size = sizeof props;
  p.ok(p.api->device_props(p.plugin, 0, &props));
  const std::string fp = props.fingerprint;
  for (const char* isa : {"/sse41/", "/avx/", "/avx2/", "/avx2_vnni/"})
    if (fp.find(isa) != std::string::npos) return true;
  return false;
}

// debug_counters=1's "kernel runs: primitive P, loop L" so far; a failure
// (and zeros) when the note has none.
struct KernelRuns {
  unsigned long long primitive = 0, loop = 0;
};
inline KernelRuns kernel_runs(const Plugin& p) {
  const std::string note = plugin_note(p);
  KernelRuns r;
  const size_t at = note.find("kernel runs: ");
  if (at == std::string::npos ||
      std::sscanf(note.c_str() + at, "kernel runs: primitive %llu, loop %llu", &r.primitive,
                  &r.loop) != 2)
    ADD_FAILURE() << "no kernel runs in the note: " << note;
  return r;
}

// A suite comparing the onednn plugin with cpu_ref, both loaded once per
// suite (oneDNN's engine and primitive caches are the slow part). CRTP:
// each suite its own pair; `Derived::kOptions` is onednn's option string
// ("debug_counters=1" where a test reads the counters), `Base` gtest's
// Test or TestWithParam<...>.
template <class Derived, class Base = ::testing::Test>
class OnednnVsRef : public Base {
 protected:
  static void SetUpTestSuite() {
    owned_onednn_ = std::make_unique<Plugin>(plugin_path("onednn"), Derived::kOptions);
    owned_ref_ = std::make_unique<Plugin>(plugin_path("cpu_ref"));
    onednn_ = owned_onednn_.get();
    ref_ = owned_ref_.get();
  }
  static void TearDownTestSuite() {
    onednn_ = ref_ = nullptr;
    owned_onednn_.reset();
    owned_ref_.reset();
  }
  static inline Plugin* onednn_ = nullptr;
  static inline Plugin* ref_ = nullptr;

 private:
  static inline std::unique_ptr<Plugin> owned_onednn_, owned_ref_;
};

}  // namespace ampx::test
