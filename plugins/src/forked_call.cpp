#include <ampx/plugins/forked_call.hpp>

#include <ampx/plugins/signal_name.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

namespace ampx::plugins {
namespace {

// The child's exit status when the function returned: an unusual value, so
// that a plugin's exit() or a sanitizer's report (1 by default) is not
// taken for it.
constexpr int kReturned = 91;

void write_all(int fd, const char* data, size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // the caller is gone: nothing to tell
    data += w;
    n -= static_cast<size_t>(w);
  }
}

// Splits whole messages (a 4-byte length, then the bytes) off the front of
// `pending`.
void take_messages(std::string& pending, std::vector<std::string>& out) {
  size_t at = 0;
  while (pending.size() - at >= sizeof(uint32_t)) {
    uint32_t n = 0;
    std::memcpy(&n, pending.data() + at, sizeof n);
    if (pending.size() - at - sizeof n < n) break;
    out.emplace_back(pending, at + sizeof n, n);
    at += sizeof n + n;
  }
  pending.erase(0, at);
}

[[noreturn]] void child(const std::function<void(const ChildPipe&)>& body, int fd,
                        ForkOptions::Output output) {
  if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    if (output == ForkOptions::Output::kNothing) ::dup2(null, STDERR_FILENO);
    ::close(null);
  }
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, SIG_DFL);
  try {
    body(ChildPipe(fd));
  } catch (...) {
    // The body reports what it wants to; an escaped exception still ends
    // the child as "returned" after what it sent.
  }
  ::_exit(kReturned);
}

}  // namespace

void ChildPipe::send(std::string_view message) const noexcept {
  const auto n = static_cast<uint32_t>(message.size());
  char head[sizeof n];
  std::memcpy(head, &n, sizeof n);
  write_all(fd_, head, sizeof head);
  write_all(fd_, message.data(), message.size());
}

std::string ForkOutcome::describe() const {
  switch (kind) {
    case Kind::kSignaled:
      return fmt::format("crashed ({})", signal_name(signal));
    case Kind::kExited:
      return fmt::format("exited (status {})", exit_status);
    case Kind::kTimedOut:
      return fmt::format("hung (killed after {:g} s)", timeout_s);
    case Kind::kReturned:
    case Kind::kNotForked:
      break;
  }
  return "";
}

ForkOutcome run_forked(const std::function<void(const ChildPipe&)>& body,
                       const ForkOptions& options) {
  ForkOutcome out;
  out.timeout_s = options.timeout_s;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return out;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return out;
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(body, fds[1], options.output);
  }
  ::close(fds[1]);
  const int fd = fds[0];
  std::string pending;
  auto last = start;
  bool eof = false, timed_out = false;
  int status = 0;
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    const auto from = options.deadline == ForkOptions::Deadline::kFromLastMessage ? last : start;
    const double left = options.timeout_s - std::chrono::duration<double>(now - from).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (!eof) {
      pollfd p{fd, POLLIN, 0};
      const int wait_ms = static_cast<int>(std::min(left, 0.25) * 1000) + 1;
      if (::poll(&p, 1, wait_ms) > 0) {
        char buf[65536];
        const ssize_t got = ::read(fd, buf, sizeof buf);
        if (got > 0) {
          pending.append(buf, static_cast<size_t>(got));
          const size_t before = out.messages.size();
          take_messages(pending, out.messages);
          if (out.messages.size() != before) last = std::chrono::steady_clock::now();
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          eof = true;
        }
      }
    } else {
      // The pipe closed (the child exited, or closed it and runs on).
      ::usleep(1000);
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) break;
  }
  if (timed_out) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    out.kind = ForkOutcome::Kind::kTimedOut;
  } else {
    // What it wrote before it ended.
    char buf[65536];
    for (ssize_t got; (got = ::read(fd, buf, sizeof buf)) > 0;)
      pending.append(buf, static_cast<size_t>(got));
    take_messages(pending, out.messages);
    if (WIFSIGNALED(status)) {
      out.kind = ForkOutcome::Kind::kSignaled;
      out.signal = WTERMSIG(status);
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kReturned) {
      out.kind = ForkOutcome::Kind::kReturned;
    } else {
      out.kind = ForkOutcome::Kind::kExited;
      out.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
  }
  ::close(fd);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace ampx::plugins
