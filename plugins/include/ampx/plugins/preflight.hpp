// Pre-flight: a plugin's loading, device enumeration and first capability
// queries, run first in a forked child, so that a plugin that crashes,
// hangs or calls exit() there costs a skipped plugin with the reason, never
// the host. Kernels still run in-process (`ampx plugin-check` is what
// catches a kernel that corrupts memory).
//
// The child loads the file (LoadedPlugin::open), creates the instance with
// the host's options, reads every device's properties and asks every device
// a few small capability queries (Relu, Add, MatMul in f32 and f16). It
// reports each stage on a pipe and leaves with _exit(), running no
// destructors. Errors the plugin reports properly (a status, a bad table)
// are not the pre-flight's business: the in-process load reports them.
//
// Verdicts are cached in a JSON file (schema ampx.preflight/1), keyed by the
// plugin file's canonical path, size, modification time and the host's ABI
// version; a rebuilt or replaced plugin is checked again.
#pragma once

#include <filesystem>
#include <string>

namespace ampx::plugins {

struct PreflightVerdict {
  bool ok = true;
  std::string reason;  // when not ok: "crashed (SIGSEGV) in plugin_create", ...
  bool cached = false;
  double seconds = 0;  // of the child, 0 when cached
};

struct PreflightOptions {
  double timeout_s = 20;        // per plugin file
  std::filesystem::path cache;  // empty: no cache
  std::string plugin_options;   // passed to plugin_create, as in-process
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
