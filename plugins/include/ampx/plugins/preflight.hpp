// Pre-flight: a plugin's loading, device enumeration, first capability
// queries and a smoke launch, run first in a forked child
// (ampx/plugins/forked_call.hpp), so that a plugin that crashes, hangs,
// calls exit() or lets a C++ exception cross the C ABI there costs a skipped
// plugin with the reason, never the host.
//
// The child loads the file (LoadedPlugin::open), creates the instance with
// the host's options, reads every device's properties and asks every device
// a few small capability queries (Relu, Add, MatMul in f32 and f16). Then
// the smoke launch (src/smoke_launch.hpp): on every device, one small Relu,
// Add and Gemm in each dtype the plugin answers `native` for them is
// prepared, launched on buffers with guard bytes and checked against the
// reference kernels; a kernel that crashes, hangs, writes outside its
// output or gives wrong results fails the pre-flight. Kernels still run in
// the host's process afterwards (as in ONNX Runtime and ggml: a healthy
// plugin costs nothing per launch); `ampx plugin-check` checks every case.
// The child reports each stage on a pipe and leaves with _exit(), running no
// destructors. Errors the plugin reports properly (a status, a bad table)
// are not the pre-flight's business: the in-process load reports them.
//
// Verdicts are cached in a JSON file (schema ampx.preflight/1), keyed by the
// plugin file's canonical path, size, modification time, the host's ABI
// version and the checks' version; a rebuilt or replaced plugin is checked
// again.
#pragma once

#include <filesystem>
#include <string>

namespace ampx::plugins {

struct PreflightVerdict {
  bool ok = true;
  // When not ok: "crashed (SIGSEGV) in plugin_create or device enumeration",
  // "hung (killed after 20 s) in a smoke launch (Gemm f16 on device 0)",
  // "threw a C++ exception across the C ABI in device enumeration (...)",
  // "failed a smoke launch: Relu f32 on device 0: wrong results (...)".
  std::string reason;
  bool cached = false;
  double seconds = 0;  // of the child, 0 when cached
};

struct PreflightOptions {
  double timeout_s = 20;        // per plugin file
  std::filesystem::path cache;  // empty: no cache
  std::string plugin_options;   // passed to plugin_create, as in-process
  // kNone: no smoke launch (`ampx plugin-check` launches every case itself,
  // each in a child).
  enum class Smoke { kLaunch, kNone };
  Smoke smoke = Smoke::kLaunch;
};

// The default cache file: $AMPX_PREFLIGHT_CACHE (empty: none), else
// $XDG_CACHE_HOME/ampx/plugin_preflight.json, else
// $HOME/.cache/ampx/plugin_preflight.json; empty when none can be named.
std::filesystem::path default_preflight_cache();

// Runs (or recalls) the pre-flight of one plugin file. Never throws: a
// failure to fork or to write the cache is logged and the verdict is ok
// (the plugin is then loaded as without pre-flight).
PreflightVerdict preflight_plugin(const std::filesystem::path& file, const PreflightOptions& opts);

}  // namespace ampx::plugins
