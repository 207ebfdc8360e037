// test_native: a test-only plugin that runs the reference CPU kernels but
// answers capability queries as configured by environment variables, read
// once at plugin_create:
//
//   AMPX_TEST_NATIVE_OPS        comma-separated op types answered `native` in
//                               16-bit; `*` = all; unset/empty = none (16-bit
//                               is then `emulated`).
//   AMPX_TEST_UNSUPPORTED_OPS   comma-separated op types answered
//                               `unsupported` in 16-bit; `*` = all. Wins over
//                               AMPX_TEST_NATIVE_OPS.
//   AMPX_TEST_MISSING_OPS       comma-separated op types the plugin cannot
//                               run at all, in any dtype (a backend that
//                               lacks ops: the placement tests).
//   AMPX_TEST_NATIVE_DTYPES     the 16-bit dtypes those two lists apply to:
//                               comma-separated of f16, bf16 (default both).
//                               A 16-bit node of another dtype is `emulated`.
//
//   AMPX_TEST_NATIVE_COUNTERS=1  plugin_info's note reports how many times
//                               the host called kernel_prepare and
//                               buffer_alloc ("kernel_prepare=N buffer_alloc=M",
//                               counted at the C ABI since the plugin loaded):
//                               the executor tests count what each executor
//                               asks of a plugin.
//   AMPX_TEST_NATIVE_LOG_LEVEL=1  plugin_info's note reports the host log
//                               level plugin_create was given ("log_level=N",
//                               after the counters when both are on), and
//                               plugin_create logs "created at host log level
//                               N" at debug (so only a host at debug or trace
//                               prints it): the tests that the Session's and
//                               the CLI's level reach plugins.
//   AMPX_TEST_NATIVE_CRASH_IN_LAUNCH=1  every kernel launch raises SIGSEGV;
//   AMPX_TEST_NATIVE_HANG_IN_LAUNCH=1   every kernel launch sleeps forever
//                               (both for the probe's isolation tests: the
//                               driver that crashes or hangs; read per launch,
//                               so only a process started with them is hit).
//
// f32 (and integer) nodes are always `native`. Nodes the kernels cannot run
// are `unsupported` whatever the configuration. Cost hint: f32 at 2 GFLOP/s;
// a `native` 16-bit node costs exactly half of the same node in f32, an
// `emulated` one its (16-bit bytes) cost plus conversions, as cpu_ref says.
#include <unistd.h>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "ampx/backend_api.h"
#include "ampx/host_plugin.hpp"
#include "ampx/plugin_support.hpp"

namespace {

using ampx::host_plugin::CapabilityAnswer;
using ampx::host_plugin::CapabilityPolicy;

constexpr double kFlopsPerSecond = 2e9;

std::set<std::string> env_list(const char* name) {
  std::set<std::string> items;
  const char* v = std::getenv(name);
  if (!v) return items;
  std::string cur;
  for (const char* p = v;; ++p) {
    if (*p == ',' || *p == '\0') {
      const size_t b = cur.find_first_not_of(" \t"), e = cur.find_last_not_of(" \t");
      if (b != std::string::npos) items.insert(cur.substr(b, e - b + 1));
      cur.clear();
      if (*p == '\0') break;
    } else {
      cur += *p;
    }
  }
  return items;
}

std::string join(const std::set<std::string>& s) {
  std::string r;
  for (const auto& x : s) r += (r.empty() ? "" : ",") + x;
  return r;
}

class TestNativePolicy final : public CapabilityPolicy {
 public:
  TestNativePolicy()
      : native_(env_list("AMPX_TEST_NATIVE_OPS")),
        unsupported_(env_list("AMPX_TEST_UNSUPPORTED_OPS")),
        missing_(env_list("AMPX_TEST_MISSING_OPS")) {
    const char* dt = std::getenv("AMPX_TEST_NATIVE_DTYPES");
    if (dt && *dt) {
      const auto d = env_list("AMPX_TEST_NATIVE_DTYPES");
      f16_ = d.count("f16") > 0;
      bf16_ = d.count("bf16") > 0;
    }
  }

  CapabilityAnswer answer(const ampx_node_desc& node) const override {
    CapabilityAnswer a;
    // What this node would cost in f32 (for an f32 node: its own cost).
    const double f32_cost = ampx::host_plugin::cost_hint_us_as_f32(node, kFlopsPerSecond);
    bool f16 = false, bf16 = false;
    if (!ampx::host_plugin::node_uses_16bit(node, &f16, &bf16)) {
      a.support = AMPX_SUPPORT_NATIVE;
      a.cost_us = f32_cost;
      return a;
    }
    const std::string op = node.op_type ? node.op_type : "";
    const bool configured = (f16 && f16_) || (bf16 && bf16_);
    if (configured && listed(unsupported_, op)) {
      a.support = AMPX_SUPPORT_UNSUPPORTED;
      a.note = "test_native: AMPX_TEST_UNSUPPORTED_OPS";
    } else if (configured && listed(native_, op)) {
      a.support = AMPX_SUPPORT_NATIVE;
      a.cost_us = f32_cost / 2;
      a.note = "test_native: AMPX_TEST_NATIVE_OPS";
    } else {
      a.support = AMPX_SUPPORT_EMULATED;
      a.cost_us = ampx::host_plugin::cost_hint_us(node, kFlopsPerSecond, true);
      a.note = "16-bit storage, f32 compute";
    }
    return a;
  }

  bool can_run(const ampx_node_desc& node, std::string* why) const override {
    const std::string op = node.op_type ? node.op_type : "";
    if (listed(missing_, op)) {
      if (why) *why = "test_native: no " + op + " kernel (AMPX_TEST_MISSING_OPS)";
      return false;
    }
    return CapabilityPolicy::can_run(node, why);
  }
  std::unique_ptr<ampx::reference::CpuKernel> make_kernel(
      const ampx_node_desc& node) const override {
    std::string why;
    if (!can_run(node, &why)) throw ampx::reference::UnsupportedNode(why);
    return CapabilityPolicy::make_kernel(node);
  }

  // The configuration changes the answers, so it is part of the fingerprint.
  std::string fingerprint_suffix() const override {
    return "native=" + join(native_) + ";unsupported=" + join(unsupported_) +
           ";missing=" + join(missing_) + ";dtypes=" + (f16_ ? "f16" : "") +
           (f16_ && bf16_ ? "," : "") + (bf16_ ? "bf16" : "");
  }

 private:
  static bool listed(const std::set<std::string>& s, const std::string& op) {
    return s.count("*") > 0 || s.count(op) > 0;
  }
  std::set<std::string> native_, unsupported_, missing_;
  bool f16_ = true, bf16_ = true;
};

std::unique_ptr<CapabilityPolicy> make_policy(const ampx::plugin_support::PluginOptions&) {
  return std::make_unique<TestNativePolicy>();
}

constexpr ampx::host_plugin::HostPluginSpec kSpec{"test_native", "1.0.0", "ampx reference kernels",
                                                  "test_native CPU", &make_policy};

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string(v) == "1";
}

// The reference launch, behind the misbehaviour switches.
ampx_status* (*g_reference_launch)(ampx_kernel*, const ampx_buffer_view*, size_t,
                                   const ampx_buffer_view*, size_t) = nullptr;

ampx_status* misbehaving_launch(ampx_kernel* kernel, const ampx_buffer_view* inputs,
                                size_t num_inputs, const ampx_buffer_view* outputs,
                                size_t num_outputs) {
  if (env_on("AMPX_TEST_NATIVE_CRASH_IN_LAUNCH")) {
    // Default action first: a sanitizer's SEGV handler would turn the crash
    // into a report and an exit code, and the test wants a real SIGSEGV.
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
  }
  if (env_on("AMPX_TEST_NATIVE_HANG_IN_LAUNCH"))
    for (;;) ::pause();
  return g_reference_launch(kernel, inputs, num_inputs, outputs, num_outputs);
}

// Counted at the ABI for AMPX_TEST_NATIVE_COUNTERS (one thread at a time
// per plugin instance, as the ABI says; the tests use one instance).
uint64_t g_prepares = 0, g_allocs = 0;
ampx_status* (*g_reference_prepare)(ampx_plugin*, int32_t, const ampx_node_desc*,
                                    ampx_kernel**) = nullptr;
ampx_status* (*g_reference_alloc)(ampx_plugin*, int32_t, uint64_t, ampx_buffer**) = nullptr;
ampx_status* (*g_reference_info)(ampx_plugin*, ampx_plugin_info*) = nullptr;

ampx_status* counting_prepare(ampx_plugin* plugin, int32_t device, const ampx_node_desc* node,
                              ampx_kernel** out) {
  ++g_prepares;
  return g_reference_prepare(plugin, device, node, out);
}

ampx_status* counting_alloc(ampx_plugin* plugin, int32_t device, uint64_t bytes,
                            ampx_buffer** out) {
  ++g_allocs;
  return g_reference_alloc(plugin, device, bytes, out);
}

// The log level each instance was created with, for AMPX_TEST_NATIVE_LOG_LEVEL
// (per instance: a test makes sessions of different levels side by side).
std::mutex g_levels_mutex;
std::map<const ampx_plugin*, int32_t> g_levels;
ampx_status* (*g_reference_create)(const ampx_plugin_create_args*, ampx_plugin**) = nullptr;

ampx_status* level_noting_create(const ampx_plugin_create_args* args, ampx_plugin** out) {
  ampx_status* st = g_reference_create(args, out);
  if (st || !env_on("AMPX_TEST_NATIVE_LOG_LEVEL")) return st;
  // Read within the host's struct_size, as every plugin must (2: info, the
  // level a plugin assumes when the host says nothing).
  const int32_t level = args && AMPX_HAS_MEMBER(*args, ampx_plugin_create_args, log_level)
                            ? args->log_level
                            : static_cast<int32_t>(ampx::plugin_support::LogLevel::info);
  {
    const std::lock_guard<std::mutex> lock(g_levels_mutex);
    g_levels[*out] = level;
  }
  ampx::plugin_support::plugin_log(level, ampx::plugin_support::LogLevel::debug, "test_native",
                                   "created at host log level " + std::to_string(level));
  return nullptr;
}

ampx_status* counting_info(ampx_plugin* plugin, ampx_plugin_info* out) {
  ampx_status* st = g_reference_info(plugin, out);
  if (st) return st;
  std::string note;
  if (env_on("AMPX_TEST_NATIVE_COUNTERS"))
    note = "kernel_prepare=" + std::to_string(g_prepares) +
           " buffer_alloc=" + std::to_string(g_allocs);
  if (env_on("AMPX_TEST_NATIVE_LOG_LEVEL")) {
    const std::lock_guard<std::mutex> lock(g_levels_mutex);
    const auto it = g_levels.find(plugin);
    note += (note.empty() ? "" : " ") + std::string("log_level=") +
            (it == g_levels.end() ? std::string("unknown") : std::to_string(it->second));
  }
  if (!note.empty()) std::snprintf(out->note, sizeof out->note, "%s", note.c_str());
  return nullptr;
}

}  // namespace

extern "C" AMPX_PLUGIN_EXPORT const ampx_plugin_api* ampx_plugin_entry(void) {
  static const ampx_plugin_api api = [] {
    ampx_plugin_api a = *ampx::host_plugin::host_plugin_entry<kSpec>();
    g_reference_launch = a.kernel_launch;
    a.kernel_launch = &misbehaving_launch;
    g_reference_prepare = a.kernel_prepare;
    a.kernel_prepare = &counting_prepare;
    g_reference_alloc = a.buffer_alloc;
    a.buffer_alloc = &counting_alloc;
    g_reference_info = a.plugin_info;
    a.plugin_info = &counting_info;
    g_reference_create = a.plugin_create;
    a.plugin_create = &level_noting_create;
    return a;
  }();
  return &api;
}
