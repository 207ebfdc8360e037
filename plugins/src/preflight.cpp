#include <ampx/plugins/preflight.hpp>

#include <ampx/backend_api.h>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/plugins/forked_call.hpp>
#include <ampx/plugins/loaded_plugin.hpp>

#include "smoke_launch.hpp"

#include <sys/stat.h>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <system_error>

namespace ampx::plugins {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// What the child sends: 's' + the stage it enters (the last one names where
// a crash, hang or exit happened), 'x' + a C++ exception that crossed the
// ABI, 'w' + what a smoke launch found wrong, kDone at the end.
constexpr char kStage = 's', kThrew = 'x', kWrong = 'w', kDone = 'k';
constexpr const char* kLoading = "loading the library (ampx_plugin_entry)";

// Small nodes every device is asked about: what the planner asks first.
void ask_capabilities(const LoadedPlugin& p, int32_t device) {
  const int64_t vec[] = {2, 8}, a_dims[] = {4, 8}, b_dims[] = {8, 4}, y_dims[] = {4, 4};
  for (ampx_dtype dt : {AMPX_DTYPE_F32, AMPX_DTYPE_F16}) {
    const ampx_tensor_desc v{sizeof(ampx_tensor_desc), dt, 2, vec, nullptr};
    const ampx_tensor_desc a{sizeof(ampx_tensor_desc), dt, 2, a_dims, nullptr};
    const ampx_tensor_desc b{sizeof(ampx_tensor_desc), dt, 2, b_dims, nullptr};
    const ampx_tensor_desc y{sizeof(ampx_tensor_desc), dt, 2, y_dims, nullptr};
    const ampx_tensor_desc two[] = {v, v}, ab[] = {a, b};
    const ampx_node_desc nodes[] = {
        {sizeof(ampx_node_desc), "Relu", "preflight", 1, &v, 1, &v, 0, nullptr},
        {sizeof(ampx_node_desc), "Add", "preflight", 2, two, 1, &v, 0, nullptr},
        {sizeof(ampx_node_desc), "MatMul", "preflight", 2, ab, 1, &y, 0, nullptr},
    };
    for (const ampx_node_desc& n : nodes) {
      ampx_capability cap{};
      cap.struct_size = sizeof cap;
      // A status is fine (the planner reports it); an exception is not.
      if (ampx_status* s = p.guarded("query_capability", [&] {
            return p.api().query_capability(p.instance(), device, &n, &cap);
          }))
        p.api().status_destroy(s);
    }
  }
}

void child(const fs::path& file, const PreflightOptions& opts, const ChildPipe& pipe) {
  const auto send = [&](char kind, const std::string& text) { pipe.send(kind + text); };
  try {
    send(kStage, kLoading);
    auto plugin = LoadedPlugin::open(file);
    send(kStage, "plugin_create or device enumeration");
    PluginCreateOptions co;
    co.log_level = 6;  // off: the child must not touch the host's logger
    co.options = opts.plugin_options;
    plugin->create(co);
    send(kStage, "device enumeration");
    const auto& props = plugin->device_props();
    send(kStage, "capability queries");
    for (size_t d = 0; d < props.size(); ++d) ask_capabilities(*plugin, static_cast<int32_t>(d));
    if (opts.smoke == PreflightOptions::Smoke::kLaunch) {
      const std::string wrong =
          detail::smoke_launch(*plugin, [&](const std::string& stage) { send(kStage, stage); });
      if (!wrong.empty()) send(kWrong, wrong);
    }
    (void)plugin.release();  // no plugin_destroy, no dlclose: the child _exit()s
  } catch (const PluginThrew& e) {
    send(kThrew, e.operation() + " " + e.plugin_message());
  } catch (...) {
    // A reported error: the in-process load says what it is.
  }
  send(kDone, "");
}

PreflightVerdict run_child(const fs::path& file, const PreflightOptions& opts) {
  ForkOptions fo;
  fo.timeout_s = opts.timeout_s;
  fo.output = ForkOptions::Output::kNothing;  // nothing of the plugin's on the host's terminal
  const ForkOutcome out = run_forked([&](const ChildPipe& pipe) { child(file, opts, pipe); }, fo);
  PreflightVerdict v;
  v.seconds = out.seconds;
  if (out.kind == ForkOutcome::Kind::kNotForked) {
    spdlog::warn("pre-flight of {}: no child process: {}", file.string(), std::strerror(errno));
    return v;
  }
  std::string where = kLoading, threw, wrong;
  bool done = false;
  for (const std::string& m : out.messages) {
    if (m.empty()) continue;
    const std::string text = m.substr(1);
    if (m[0] == kStage) where = text;
    if (m[0] == kThrew) threw = text;
    if (m[0] == kWrong) wrong = text;
    if (m[0] == kDone) done = true;
  }
  if (!out.returned() || !done) {
    v.ok = false;
    v.reason = out.kind == ForkOutcome::Kind::kReturned ? "ended early" : out.describe();
    v.reason += " in " + where;
  } else if (!threw.empty()) {
    v.ok = false;
    v.reason = threw;  // "device_props(0) threw a C++ exception across the C ABI (...)"
  } else if (!wrong.empty()) {
    v.ok = false;
    v.reason = "failed a smoke launch: " + wrong;
  }
  return v;
}

std::string cache_key(const fs::path& file) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  // The checks' version: a verdict of fewer checks (before the smoke
  // launch) is not reused.
  return fmt::format("{}|{}|{}.{:09}|abi {}.{}|checks 2", (ec ? file : canonical).string(),
                     static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
                     static_cast<long long>(st.st_mtim.tv_nsec), AMPX_ABI_VERSION_MAJOR,
                     AMPX_ABI_VERSION_MINOR);
}

json read_cache(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return json::object();
  try {
    json j = json::parse(fileio::read_regular_file(path, uint64_t{64} << 20));
    if (j.is_object() && j.value("schema", "") == "ampx.preflight/1" && j["entries"].is_object())
      return j;
  } catch (const std::exception&) {
  }
  spdlog::warn("plugin pre-flight cache {} is unreadable; starting afresh", path.string());
  return json::object();
}

// Atomic (fileio): a cache that cannot be written only costs the next run
// its pre-flight.
void write_cache(const fs::path& path, const json& j) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  try {
    fileio::write_file_atomically(path, j.dump(1) + "\n");
  } catch (const std::exception& e) {
    spdlog::debug("plugin pre-flight cache: {}", e.what());
  }
}

}  // namespace

fs::path default_preflight_cache() {
  if (const char* p = std::getenv("AMPX_PREFLIGHT_CACHE")) return p;  // "": no cache
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return fs::path(x) / "ampx" / "plugin_preflight.json";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "ampx" / "plugin_preflight.json";
  return {};
}

PreflightVerdict preflight_plugin(const fs::path& file, const PreflightOptions& opts) {
  const std::string key = opts.cache.empty() ? std::string() : cache_key(file);
  json cache;
  if (!key.empty()) {
    cache = read_cache(opts.cache);
    if (cache.contains("entries") && cache["entries"].contains(key)) {
      const json& e = cache["entries"][key];
      PreflightVerdict v;
      v.ok = e.value("ok", true);
      v.reason = e.value("reason", "");
      v.cached = true;
      return v;
    }
  }
  PreflightVerdict v = run_child(file, opts);
  spdlog::debug("pre-flight of {}: {} in {:.3f} s", file.string(), v.ok ? "ok" : v.reason,
                v.seconds);
  if (!key.empty()) {
    cache["schema"] = "ampx.preflight/1";
    cache["entries"][key] = {{"ok", v.ok}, {"reason", v.reason}};
    write_cache(opts.cache, cache);
  }
  return v;
}

}  // namespace ampx::plugins
