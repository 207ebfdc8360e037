// check_null_handles(): the header's rule that bad arguments get statuses,
// never crashes, for NULL handles and arguments; each probe isolated in a
// child process first.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ampx/plugins/signal_name.hpp>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "check_steps.hpp"

namespace ampx::check {
namespace {

// The child's exit codes: unusual values, so that a sanitizer's report
// (exit code 1 by default) or a plugin's exit() is not taken for either.
constexpr int kReturnedStatus = 90, kReturnedSuccess = 91;

}  // namespace

std::string outcome_in_child(const Call& call, bool quiet) {
  const pid_t pid = fork();
  if (pid < 0) return "";  // cannot isolate: make the call in-process only
  if (pid == 0) {
    if (quiet) {
      const int null_fd = open("/dev/null", O_WRONLY);
      if (null_fd >= 0) dup2(null_fd, STDERR_FILENO);
    }
    // _exit: no atexit handlers, no leak report, nothing of the parent's
    // state flushed twice.
    _exit(call() != nullptr ? kReturnedStatus : kReturnedSuccess);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return "";
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return "hung (killed after 10 s)";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFSIGNALED(status)) return "crashed (" + plugins::signal_name(WTERMSIG(status)) + ")";
  if (WIFEXITED(status) && WEXITSTATUS(status) == kReturnedSuccess) return "returned success";
  if (WIFEXITED(status) && WEXITSTATUS(status) == kReturnedStatus) return "";
  return "crashed (exit status " + std::to_string(WEXITSTATUS(status)) +
         ": a sanitizer's report or the plugin's exit())";
}

void check_null_handles(const plugins::LoadedPlugin& p, int32_t devices,
                        std::vector<AbiCheck>& out) {
  const ampx_plugin_api& api = p.api();
  auto expect_status = [&](const std::string& what, const Call& call) {
    AbiCheck c{what, true, outcome_in_child(call)};
    if (!c.detail.empty()) {
      c.ok = false;
    } else if (ampx_status* s = call()) {
      const char* m = api.status_message(s);
      c.detail = m ? std::string(m, strnlen(m, 300)) : "";
      api.status_destroy(s);
    } else {
      c = {what, false, "returned success"};
    }
    out.push_back(std::move(c));
    return out.back().ok;
  };
  unsigned char byte = 0;
  expect_status("copy_to_device to a NULL buffer",
                [&] { return api.copy_to_device(nullptr, 0, &byte, 1); });
  expect_status("copy_to_host from a NULL buffer",
                [&] { return api.copy_to_host(&byte, nullptr, 0, 1); });
  expect_status("kernel_launch of a NULL kernel",
                [&] { return api.kernel_launch(nullptr, nullptr, 0, nullptr, 0); });
  if (devices == 0) return;
  ampx_kernel* k = nullptr;
  if (expect_status("kernel_prepare of a NULL node", [&] {
        k = reinterpret_cast<ampx_kernel*>(&byte);  // not NULL: the plugin must clear it
        return api.kernel_prepare(p.instance(), 0, nullptr, &k);
      })) {
    out.push_back({"kernel_prepare that failed left its out handle NULL", k == nullptr,
                   k == nullptr ? "" : "the out handle was left as it was"});
  }
  if (k != nullptr && k != reinterpret_cast<ampx_kernel*>(&byte)) api.kernel_destroy(k);
  ampx_capability cap{};
  cap.struct_size = sizeof cap;
  expect_status("query_capability of a NULL node",
                [&] { return api.query_capability(p.instance(), 0, nullptr, &cap); });
  expect_status("synchronize of device " + std::to_string(devices) + " (out of range)",
                [&] { return api.synchronize(p.instance(), devices); });
}

}  // namespace ampx::check
