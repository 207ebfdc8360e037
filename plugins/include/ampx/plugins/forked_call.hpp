// Runs a piece of host code that calls into a plugin in a forked child with
// a time limit, so that a plugin that crashes, hangs or calls exit() costs
// that child, never the caller. The child reports over a pipe, in messages;
// the caller gets the messages that arrived whole and how the child ended.
// The one implementation behind the plugin pre-flight
// (ampx/plugins/preflight.hpp) and `ampx plugin-check`'s isolated steps.
//
// The child runs only the given function and leaves with _exit(): no
// destructors, no atexit handlers, nothing of the caller's buffered output
// flushed twice. Crash signals are reset to their defaults first, so that a
// crash ends the child by its signal (a sanitizer's handler would turn it
// into an exit status). POSIX only.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::plugins {

// The child's end of the message pipe.
class ChildPipe {
 public:
  explicit ChildPipe(int fd) noexcept : fd_(fd) {}
  // One message (any bytes; framed with its length). Blocks while the pipe
  // is full; the caller reads while the child runs.
  void send(std::string_view message) const noexcept;

 private:
  int fd_;
};

struct ForkOptions {
  double timeout_s = 10;
  // Where the limit counts from: the child's start, or its last message
  // (a child that reports progress may run as long as it keeps reporting).
  enum class Deadline { kFromStart, kFromLastMessage };
  Deadline deadline = Deadline::kFromStart;
  // What the child may print: stderr only (stdout, which may carry the
  // caller's report, goes to /dev/null), or nothing.
  enum class Output { kStderr, kNothing };
  Output output = Output::kStderr;
};

struct ForkOutcome {
  enum class Kind {
    kReturned,   // the function returned
    kSignaled,   // killed by `signal` (a crash: SIGSEGV, SIGABRT, ...)
    kExited,     // called exit() (or a sanitizer did, after its report)
    kTimedOut,   // still running at the limit: killed with SIGKILL
    kNotForked,  // no child could be made (pipe or fork failed): nothing ran
  };
  Kind kind = Kind::kNotForked;
  int signal = 0;
  int exit_status = 0;
  double timeout_s = 0;               // the limit it ran under
  double seconds = 0;                 // wall time
  std::vector<std::string> messages;  // those that arrived whole, in order

  bool returned() const noexcept { return kind == Kind::kReturned; }
  // How it ended, for a one-line reason: "crashed (SIGSEGV)", "hung (killed
  // after 10 s)", "exited (status 1)"; "" when it returned or never ran.
  std::string describe() const;
};

// Runs body(pipe) in a forked child. Never throws for what the child does.
ForkOutcome run_forked(const std::function<void(const ChildPipe&)>& body,
                       const ForkOptions& options);

}  // namespace ampx::plugins
