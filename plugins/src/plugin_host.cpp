#include <ampx/plugins/plugin_host.hpp>

#include <ampx/plugins/discovery.hpp>
#include <ampx/plugins/loaded_plugin.hpp>

#include <ampx/plugins/preflight.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace ampx::plugins {
namespace {

namespace fs = std::filesystem;

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

// The identity of a path for duplicate checks: canonical when it exists,
// otherwise absolute and normalised.
fs::path identity(const fs::path& path) {
  std::error_code ec;
  fs::path result = fs::weakly_canonical(path, ec);
  if (ec) result = fs::absolute(path, ec).lexically_normal();
  return ec ? path.lexically_normal() : result;
}

constexpr const char* kReferencePluginName = "cpu_ref";

// The reference backend may come only from ampx's own plugin directories
// (the build tree's or the install's): a `cpu_ref` from --plugin-dir or
// AMPX_PLUGIN_PATH would silently replace the oracle every result is
// checked against, and the fallback.
bool in_own_plugin_dir(const fs::path& file, const std::vector<fs::path>& own_dirs) {
  const fs::path dir = identity(file.parent_path());
  for (const fs::path& own : own_dirs)
    if (identity(own) == dir) return true;
  return false;
}

// PluginHostOptions::own_dirs, or the default ones.
std::vector<fs::path> own_plugin_dirs(const PluginHostOptions& options) {
  return options.own_dirs.empty() ? default_plugin_dirs() : options.own_dirs;
}

}  // namespace

PluginHost::PluginHost(PluginHostOptions options) : options_(std::move(options)) {
  std::vector<fs::path> dirs = options_.extra_dirs;
  if (options_.use_env_path) {
    for (fs::path& dir : split_path_list(env_or_empty("AMPX_PLUGIN_PATH"))) {
      dirs.push_back(std::move(dir));
    }
  }
  if (options_.use_default_dirs) {
    for (fs::path& dir : own_plugin_dirs(options_)) dirs.push_back(std::move(dir));
  }
  std::vector<fs::path> seen_dirs;
  for (const fs::path& dir : dirs) {
    if (dir.empty()) continue;
    fs::path id = identity(dir);
    if (std::find(seen_dirs.begin(), seen_dirs.end(), id) != seen_dirs.end()) continue;
    seen_dirs.push_back(std::move(id));
    search_dirs_.push_back(dir.lexically_normal());
  }
  env_excluded_ = split_name_list(env_or_empty("AMPX_DISABLE_PLUGINS"));

  for (const fs::path& dir : search_dirs_) {
    spdlog::debug("looking for backend plugins in {}", dir.string());
    for (const fs::path& file : list_plugin_files(dir)) load_file(file);
  }
  spdlog::debug("{} backend plugin(s) loaded, {} skipped, {} device(s)", plugins_.size(),
                skipped_.size(), devices_.size());
}

PluginHost::PluginHost(PluginHost&&) noexcept = default;
PluginHost& PluginHost::operator=(PluginHost&&) noexcept = default;
PluginHost::~PluginHost() = default;

std::string PluginHost::exclusion_of(std::string_view name) const {
  if (name.empty()) return {};
  const auto has = [&](const auto& names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (has(options_.excluded_plugins)) return "excluded by PluginHostOptions::excluded_plugins";
  if (has(env_excluded_)) return "excluded by AMPX_DISABLE_PLUGINS";
  return {};
}

void PluginHost::skip(const fs::path& file, std::string name_hint, std::string reason, bool warn) {
  if (warn) {
    spdlog::warn("skipping backend plugin {} ({})", reason, file.parent_path().string());
  } else {
    spdlog::info("not loading backend plugin {} ({})", reason, file.parent_path().string());
  }
  skipped_.push_back(SkippedPlugin{file, std::move(name_hint), std::move(reason)});
}

void PluginHost::load_file(const fs::path& file) {
  const std::string file_name = file.filename().string();
  std::string name = plugin_name_hint(file);

  // The same file reached twice (e.g. through a symlinked directory).
  fs::path id = identity(file);
  for (const auto& [seen_id, seen_file] : seen_files_) {
    if (seen_id == id) {
      skip(file, name, file_name + ": duplicate of " + seen_file.string());
      return;
    }
  }
  seen_files_.emplace_back(std::move(id), file);

  // Excluded by file name: not even opened (the point of excluding a plugin
  // may be that it misbehaves when loaded).
  if (std::string why = exclusion_of(name); !why.empty()) {
    skip(file, name, file_name + ": " + why, /*warn=*/false);
    return;
  }

  if (options_.preflight) {
    PreflightOptions po;
    po.timeout_s = options_.preflight_timeout_s;
    po.cache =
        options_.preflight_cache.empty() ? default_preflight_cache() : options_.preflight_cache;
    const auto it = options_.plugin_options.find(name);
    po.plugin_options =
        it != options_.plugin_options.end() ? it->second : options_.default_plugin_options;
    const PreflightVerdict v = preflight_plugin(file, po);
    if (!v.ok) {
      skip(file, name,
           file_name + ": " + v.reason + " (pre-flight" + (v.cached ? ", cached verdict" : "") +
               "; not loaded)");
      return;
    }
  }

  std::unique_ptr<LoadedPlugin> plugin;
  try {
    plugin = LoadedPlugin::open(file);
  } catch (const PluginLoadError& e) {
    skip(file, name, e.what());
    return;
  }
  name = plugin->name();
  if (std::string why = exclusion_of(name); !why.empty()) {
    skip(file, name, file_name + ": " + why, /*warn=*/false);
    return;
  }
  if (name == kReferencePluginName && !in_own_plugin_dir(file, own_plugin_dirs(options_))) {
    skip(file, name,
         file_name + ": the name '" + name +
             "' belongs to ampx's reference backend, the numerical oracle; a plugin of that "
             "name outside ampx's own plugin directory is not loaded");
    return;
  }
  const auto winner = std::find_if(plugins_.begin(), plugins_.end(),
                                   [&](const PluginRecord& r) { return r.name == name; });
  if (winner != plugins_.end()) {
    skip(file, name, file_name + ": duplicate of " + winner->file.string());
    return;
  }

  PluginCreateOptions create_options;
  create_options.log_level = options_.log_level;
  if (const auto it = options_.plugin_options.find(name); it != options_.plugin_options.end()) {
    create_options.options = it->second;
  } else {
    create_options.options = options_.default_plugin_options;
  }
  try {
    plugin->create(create_options);
  } catch (const PluginError& e) {
    skip(file, name, file_name + ": " + e.what());
    return;
  } catch (const PluginLoadError& e) {
    skip(file, name, e.what());
    return;
  }

  const std::shared_ptr<const LoadedPlugin> shared = std::move(plugin);
  PluginRecord record;
  record.name = shared->name();
  record.version = shared->version();
  record.library = shared->library();
  record.note = shared->note();
  record.file = file;
  record.abi_major = shared->abi_major();
  record.abi_minor = shared->abi_minor();
  record.options = shared->options();
  record.f16_accumulation = shared->f16_accumulation();
  record.declares_numerics = shared->declares_numerics();
  const auto& props = shared->device_props();
  for (size_t i = 0; i < props.size(); ++i) {
    devices_.push_back(Device(shared, static_cast<int32_t>(i), props[i]));
    record.device_ids.push_back(devices_.back().id());
  }
  spdlog::debug("loaded backend plugin {} {} (ABI {}.{}) from {}: {} device(s){}{}", record.name,
                record.version, record.abi_major, record.abi_minor, file.string(), props.size(),
                record.note.empty() ? "" : "; ", record.note);
  loaded_.push_back(shared);
  plugins_.push_back(std::move(record));
}

const Device* PluginHost::find_device(std::string_view id) const noexcept {
  const auto it =
      std::find_if(devices_.begin(), devices_.end(), [&](const Device& d) { return d.id() == id; });
  return it != devices_.end() ? &*it : nullptr;
}

const Device& PluginHost::device(std::string_view id) const {
  if (const Device* found = find_device(id)) return *found;
  std::string available;
  for (const Device& d : devices_) {
    if (!available.empty()) available += ", ";
    available += d.id();
  }
  if (available.empty()) available = "none";
  // A device of a plugin that was skipped: say why, not only that it is absent.
  std::string why;
  const std::string_view plugin = id.substr(0, id.find(':'));
  for (const SkippedPlugin& s : skipped_)
    if (s.name_hint == plugin) why = ": plugin " + s.name_hint + " was skipped: " + s.reason;
  throw std::invalid_argument("unknown device '" + std::string(id) + "'" + why +
                              " (available: " + available + ")");
}

}  // namespace ampx::plugins
