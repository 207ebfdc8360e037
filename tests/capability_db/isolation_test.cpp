// run_child: the child process runner under the probe. Crash signals by
// name, the time limit (SIGKILL), and line-by-line output as it comes.
#include <ampx/capability/probe_isolation.hpp>

#include <gtest/gtest.h>

#include <csignal>

namespace ampx::capability {
namespace {

TEST(RunChild, DeliversLinesAndExitCode) {
  std::vector<std::string> lines;
  const auto r = run_child({"/bin/sh", "-c", "echo one; echo two; printf three; exit 3"}, 10,
                           [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(r.kind, ChildOutcome::Kind::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(RunChild, ReportsTheCrashSignal) {
  const auto r = run_child({"/bin/sh", "-c", "kill -SEGV $$"}, 10, {});
  EXPECT_EQ(r.kind, ChildOutcome::Kind::kSignaled);
  EXPECT_EQ(signal_name(r.signal), "SIGSEGV");
}

TEST(RunChild, KillsAChildThatOutlivesItsTime) {
  // exec: the shell itself sleeps, so SIGKILL leaves no orphan holding the pipe.
  const auto r = run_child({"/bin/sh", "-c", "echo started; exec sleep 30"}, 0.5, {});
  EXPECT_EQ(r.kind, ChildOutcome::Kind::kTimedOut);
  EXPECT_LT(r.seconds, 5);
}

TEST(RunChild, MissingExecutableThrows) {
  EXPECT_THROW(run_child({"/nonexistent/ampx"}, 1, {}), std::runtime_error);
}

TEST(RunChild, SignalNames) {
  EXPECT_EQ(signal_name(SIGABRT), "SIGABRT");
  EXPECT_EQ(signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(signal_name(63), "signal 63");
}

}  // namespace
}  // namespace ampx::capability
