// Discovery, loading and the registry of backend plugins and their devices.
#pragma once

#include <ampx/plugins/buffer.hpp>
#include <ampx/plugins/device.hpp>
#include <ampx/plugins/kernel.hpp>
#include <ampx/plugins/status.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ampx/plugins/loaded_plugin.hpp"

namespace ampx::plugins {

class LoadedPlugin;

// A plugin that loaded and registered its devices.
struct PluginRecord {
  std::string name;     // plugin_name
  std::string version;  // plugin_version
  std::string library;  // plugin_info: library and version it is built on
  std::string note;     // plugin_info: why it has the devices it has
  std::filesystem::path file;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<std::string> device_ids;
  std::vector<PluginOption> options;  // the option keys it documents (ABI 1.2)
  // How its f16 kernels accumulate (ABI 1.3 numerics extension), and
  // whether it said so (else the default, f32).
  ampx_accumulation f16_accumulation = AMPX_ACCUMULATE_F32;
  bool declares_numerics = false;
};

// A plugin file that was not used, and why.
struct SkippedPlugin {
  std::filesystem::path file;
  std::string name_hint;  // plugin_name if known, else from the file name
  std::string reason;     // one line, starts with the file name
};

struct PluginHostOptions {
  // Searched first (tests use this).
  std::vector<std::filesystem::path> extra_dirs;
  // AMPX_PLUGIN_PATH (':'-separated directories), searched next.
  bool use_env_path = true;
  // Then ampx's own plugin directories, the only ones the reference
  // backend's name is accepted from: the build-tree plugin directory and
  // the install plugin directory (default_plugin_dirs()), or, where
  // own_dirs names any, those instead: the Python package names its
  // `ampx/plugins`, beside its module, which no executable-relative
  // directory finds.
  bool use_default_dirs = true;
  std::vector<std::filesystem::path> own_dirs;
  // Plugin names not to load; AMPX_DISABLE_PLUGINS (comma-separated) is
  // always added. A file whose name gives an excluded name is not even opened.
  std::vector<std::string> excluded_plugins;
  // Host log level passed to plugins, 0 = trace .. 6 = off.
  int log_level = 2;
  // Per plugin name: the "key=value;key=value" string passed to plugin_create.
  std::map<std::string, std::string, std::less<>> plugin_options;
  // For plugins without an entry in plugin_options (e.g. "threads=4" from
  // `ampx --threads`): plugins ignore keys they do not know.
  std::string default_plugin_options;
  // Pre-flight (ampx/plugins/preflight.hpp): each plugin's loading, enumeration and
  // first capability queries run first in a child process; one that
  // crashes, hangs past preflight_timeout_s or exits there is skipped with
  // the reason. Verdicts are cached in preflight_cache (empty: the default,
  // $AMPX_PREFLIGHT_CACHE or ~/.cache/ampx/plugin_preflight.json).
  // false (`ampx --trust-plugins`): load in-process at once.
  bool preflight = true;
  double preflight_timeout_s = 20;
  std::filesystem::path preflight_cache;
};

// Finds and loads every plugin in the search directories (in order; within a
// directory by file name). The first plugin with a given plugin_name wins. A
// plugin that cannot be loaded, fails validation or fails to initialise is
// skipped with a warning and listed in skipped(); the constructor does not
// throw for plugin failures.
//
// Plugins stay loaded while the PluginHost or any Device, Buffer or Kernel of
// theirs is alive; the last one to go calls plugin_destroy and unloads the
// library. Not thread-safe (see Device).
class PluginHost {
 public:
  explicit PluginHost(PluginHostOptions options = {});
  PluginHost(PluginHost&&) noexcept;
  PluginHost& operator=(PluginHost&&) noexcept;
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;
  ~PluginHost();

  const std::vector<PluginRecord>& plugins() const noexcept { return plugins_; }
  const std::vector<SkippedPlugin>& skipped() const noexcept { return skipped_; }
  // In discovery order: plugin by plugin, each plugin's devices by index.
  std::span<const Device> devices() const noexcept { return devices_; }
  // nullptr if absent.
  const Device* find_device(std::string_view id) const noexcept;
  // Throws std::invalid_argument
  //   "unknown device 'x:0' (available: cpu_ref:0, ...)", with
  //   ": plugin x was skipped: <reason>" after the id when it was.
  const Device& device(std::string_view id) const;
  // The directories searched, in order, duplicates removed.
  std::vector<std::filesystem::path> search_dirs() const { return search_dirs_; }

 private:
  void load_file(const std::filesystem::path& file);
  void skip(const std::filesystem::path& file, std::string name_hint, std::string reason,
            bool warn = true);
  std::string exclusion_of(std::string_view name) const;

  PluginHostOptions options_;
  std::vector<std::filesystem::path> search_dirs_;
  std::vector<std::string> env_excluded_;
  // (canonical path, path as found) of every file tried, to spot one file twice.
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> seen_files_;
  std::vector<std::shared_ptr<const LoadedPlugin>> loaded_;
  std::vector<PluginRecord> plugins_;
  std::vector<SkippedPlugin> skipped_;
  std::vector<Device> devices_;
};

}  // namespace ampx::plugins
