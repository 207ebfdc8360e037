#include <ampx/capability/probe_isolation.hpp>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>

extern char** environ;

namespace ampx::capability {
namespace {

// Owns a file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  int get() const noexcept { return fd_; }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct FileActions {
  posix_spawn_file_actions_t fa;
  FileActions() { posix_spawn_file_actions_init(&fa); }
  ~FileActions() { posix_spawn_file_actions_destroy(&fa); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
};

}  // namespace

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the running executable: " + ec.message());
  return p.string();
}

ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s,
                       const std::function<void(const std::string& line)>& on_line) {
  if (argv.empty()) throw std::invalid_argument("run_child: empty command");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  Fd read_end(fds[0]), write_end(fds[1]);

  FileActions actions;
  posix_spawn_file_actions_addopen(&actions.fa, 0, "/dev/null", O_RDONLY, 0);
  // dup2 clears O_CLOEXEC on the child's fd 1 only; both pipe ends close on exec.
  posix_spawn_file_actions_adddup2(&actions.fa, write_end.get(), 1);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0].c_str(), &actions.fa, nullptr, args.data(), environ);
  if (rc != 0) throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(rc));
  write_end.reset();  // so that the read end sees EOF when the child exits

  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  ChildOutcome out;
  std::string pending;
  bool eof = false, timed_out = false;
  int status = 0;
  bool reaped = false;
  while (!reaped) {
    const double left = timeout_s - elapsed();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (!eof) {
      pollfd p{read_end.get(), POLLIN, 0};
      const int n = ::poll(&p, 1, static_cast<int>(std::min(left, 0.25) * 1000) + 1);
      if (n > 0) {
        char buf[4096];
        const ssize_t got = ::read(read_end.get(), buf, sizeof buf);
        if (got > 0) {
          pending.append(buf, static_cast<size_t>(got));
          for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
            if (on_line) on_line(pending.substr(0, nl));
            pending.erase(0, nl + 1);
          }
        } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
          eof = true;
        }
      }
    } else {
      // The child closed stdout but may still run (or hang): poll its exit.
      ::usleep(10000);
    }
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) reaped = true;
  }
  if (timed_out) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    out.kind = ChildOutcome::Kind::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    out.kind = ChildOutcome::Kind::kSignaled;
    out.signal = WTERMSIG(status);
  } else {
    out.kind = ChildOutcome::Kind::kExited;
    out.exit_code = WEXITSTATUS(status);
  }
  // Whatever the child wrote before it ended (it may have exited with data
  // still in the pipe).
  if (!timed_out) {
    char buf[4096];
    for (ssize_t got; (got = ::read(read_end.get(), buf, sizeof buf)) > 0;)
      pending.append(buf, static_cast<size_t>(got));
  }
  for (size_t nl; (nl = pending.find('\n')) != std::string::npos;) {
    if (on_line) on_line(pending.substr(0, nl));
    pending.erase(0, nl + 1);
  }
  if (!pending.empty() && on_line) on_line(pending);
  out.seconds = elapsed();
  return out;
}

}  // namespace ampx::capability
