#include <ampx/plugins/preflight.hpp>

#include <ampx/backend_api.h>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/regular_file.hpp>
#include <ampx/plugins/loaded_plugin.hpp>
#include <ampx/plugins/signal_name.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
#include <thread>

namespace ampx::plugins {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The stages the child reports, in order; the last one reached names where
// a crash, hang or exit happened.
constexpr const char* kStages[] = {"loading the library (ampx_plugin_entry)",
                                   "plugin_create or device enumeration", "device enumeration",
                                   "capability queries"};
constexpr char kDone = 'k';

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
      (void)p.api().query_capability(p.instance(), device, &n, &cap);  // a status is fine
    }
  }
}

[[noreturn]] void child(const fs::path& file, const std::string& options, int out) {
  auto stage = [&](char c) { (void)!::write(out, &c, 1); };
  // Nothing of the plugin's on the host's terminal.
  if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  // A crash must end the child by its signal: a sanitizer's (or the
  // host's) handlers would report it and exit with a status instead.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
  try {
    stage('0');
    auto plugin = LoadedPlugin::open(file);
    stage('1');
    PluginCreateOptions co;
    co.log_level = 6;  // off: the child must not touch the host's logger
    co.options = options;
    plugin->create(co);
    stage('2');
    const auto& props = plugin->device_props();
    stage('3');
    for (size_t d = 0; d < props.size(); ++d) ask_capabilities(*plugin, static_cast<int32_t>(d));
    (void)plugin.release();  // no plugin_destroy, no dlclose: _exit below
  } catch (...) {
    // A reported error: the in-process load says what it is.
  }
  stage(kDone);
  ::_exit(0);
}

PreflightVerdict run_child(const fs::path& file, const PreflightOptions& opts) {
  PreflightVerdict v;
  int fds[2];
  if (::pipe(fds) != 0) {
    spdlog::warn("pre-flight of {}: pipe: {}", file.string(), std::strerror(errno));
    return v;
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    spdlog::warn("pre-flight of {}: fork: {}", file.string(), std::strerror(errno));
    ::close(fds[0]);
    ::close(fds[1]);
    return v;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(file, opts.plugin_options, fds[1]);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  char last = 0;
  int status = 0;
  bool reaped = false, timed_out = false;
  for (;;) {
    char buf[16];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) last = buf[n - 1];
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      reaped = true;
      while ((n = ::read(fds[0], buf, sizeof buf)) > 0) last = buf[n - 1];
      break;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > opts.timeout_s) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::close(fds[0]);
  v.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string where =
      last >= '0' && last <= '3' ? kStages[last - '0'] : std::string("loading the library");
  if (timed_out) {
    v.ok = false;
    v.reason = fmt::format("hung in {} (killed after {:.0f} s)", where, opts.timeout_s);
  } else if (reaped && WIFSIGNALED(status)) {
    v.ok = false;
    v.reason = fmt::format("crashed ({}) in {}", signal_name(WTERMSIG(status)), where);
  } else if (last != kDone) {
    v.ok = false;
    v.reason = fmt::format("exited (status {}) in {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                           where);
  }
  return v;
}

std::string cache_key(const fs::path& file) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return {};
  return fmt::format("{}|{}|{}.{:09}|abi {}.{}", (ec ? file : canonical).string(),
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
