// Runs a command in a child process with a time limit and reads its stdout
// line by line as it comes (the probe child's progress stream). The probe
// runs each device this way: a driver that crashes takes only its child down
// (reported with the signal's name), one that hangs is killed with SIGKILL
// when the limit is reached.
#pragma once

#include <ampx/plugins/signal_name.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ampx::capability {

struct ChildOutcome {
  enum class Kind {
    kExited,    // exit_code tells success (0) or failure
    kSignaled,  // killed by `signal` (a crash: SIGSEGV, SIGABRT, ...)
    kTimedOut,  // still running at the limit: killed with SIGKILL
  };
  Kind kind = Kind::kExited;
  int exit_code = 0;
  int signal = 0;
  double seconds = 0;  // wall time

  bool ok() const noexcept { return kind == Kind::kExited && exit_code == 0; }
};

// argv[0] is the executable's path (not searched on PATH). stdin is
// /dev/null, stderr is inherited, stdout goes through a pipe to `on_line`
// (without the newline; a last line without newline is delivered too).
// Throws std::runtime_error when the child cannot be started.
ChildOutcome run_child(const std::vector<std::string>& argv, double timeout_s,
                       const std::function<void(const std::string& line)>& on_line);

// "SIGSEGV", "SIGABRT", ...; "signal <n>" for one without a name here.
using plugins::signal_name;

// The running executable (/proc/self/exe), to re-run ampx as its own child.
std::string self_executable();

}  // namespace ampx::capability
