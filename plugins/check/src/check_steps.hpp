// Internal to the conformance kit: the check steps, and the session that
// runs them in child processes.
#pragma once

#include <ampx/plugin_check/plugin_check.hpp>
#include <ampx/plugin_check/run_node.hpp>
#include <ampx/plugins/loaded_plugin.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampx::check {

// Where a step's results go (in the child: over the pipe, as they come).
class Sink {
 public:
  virtual ~Sink() = default;
  // The call about to be made into the plugin: a crash or hang there is
  // reported under this name.
  virtual void begin(const std::string& what) = 0;
  virtual void add(AbiCheck check) = 0;
  // A case's capability answer, sent before its kernel runs: a crash after
  // it still reports what the plugin claimed.
  virtual void answered(ampx_support support, const std::string& note) = 0;
};

// One call of the plugin's, made in a forked child (10 s at most,
// plugins::run_forked): "" when it returned a status, "returned success"
// when it returned NULL, else how it ended ("crashed (SIGSEGV)", "hung
// (killed after 10 s)", ...). "" too when no child could be made.
// kQuiet: the child's stderr goes to /dev/null (a call expected to print).
using Call = std::function<ampx_status*()>;
enum class ChildOutput { kStderr, kQuiet };
std::string outcome_in_child(const Call& call, ChildOutput output = ChildOutput::kStderr);

// The ABI minor that made NULL and repeated destroys survivable, and a
// failed call's out handle NULL, rules (backend_api.h).
inline constexpr uint32_t kDestroyAndOutHandleRulesSince = 3;

// NULL handles and arguments, and synchronize of a device out of range:
// each call is made first in a forked child, so a plugin that crashes on
// a bad argument gets a failed check ("crashed (SIGSEGV)"); a call that
// survived is made again for its message. Also: a kernel_prepare that
// failed left its out handle NULL.
void check_null_handles(const plugins::LoadedPlugin& p, int32_t devices, Sink& out);

// The destroy and free functions given NULL, and given a handle destroyed
// before (backend_api.h: both are survived), each in a forked child.
void check_destroys(const plugins::LoadedPlugin& p, int32_t devices, Sink& out);

// Copies within and between buffers at offsets, and a kernel reading and
// writing views at offsets into larger buffers: the bytes named change, and
// no other byte does. Skipped (visibly) where the plugin has no devices.
void check_copies(const plugins::LoadedPlugin& p, Sink& out);
void check_views(const plugins::LoadedPlugin& p, Sink& out);

// What the child found for one case of the catalogue on one device.
struct CaseRun {
  ampx_support answer = AMPX_SUPPORT_UNSUPPORTED;
  std::string note;
  // kRefused: unsupported, and prepare refused it too; kAccepted:
  // unsupported, but prepare accepted it; kRan: outputs below; kError: a
  // status or a kernel that wrote outside its output (message).
  enum class Outcome { kRefused, kAccepted, kRan, kError };
  Outcome outcome = Outcome::kError;
  std::string message;
  std::vector<std::vector<unsigned char>> outputs;
  double us = -1;  // with perf: median of 5 launches
};

// One step: what it checks and what the child runs for it. A case step
// returns its CaseRun; an ABI step adds its checks to the sink.
struct Step {
  std::string what;
  std::function<std::optional<CaseRun>(const plugins::LoadedPlugin&, Sink&)> run;
  bool is_case = false;
};

// What the children reported.
struct SessionResult {
  bool loaded = false;  // a child loaded and created the plugin
  std::string plugin, version, note;
  uint32_t abi_major = 0, abi_minor = 0;
  size_t table_size = 0;
  int32_t devices = 0;
  bool declares_numerics = false;
  ampx_accumulation f16_accumulation = AMPX_ACCUMULATE_F32;
  std::vector<AbiCheck> abi;                  // in step order
  std::vector<std::optional<CaseRun>> cases;  // per step; empty when none came
  // Per case step whose child ended without its result: how it ended, and
  // the answer it had given (unsupported when none came).
  std::vector<std::string> case_failures;
  std::vector<std::pair<ampx_support, std::string>> answers;
};

// Loads the plugin in a child (the report's header), then runs steps()
// there, in order; a child that crashes, exits or hangs in a step is
// reported under that step, and a fresh child goes on with the next one.
// `steps` is called with the plugin's device count (in the child).
using StepList = std::function<std::vector<Step>(int32_t devices)>;
SessionResult run_session(const std::filesystem::path& file, const CheckOptions& options,
                          const StepList& steps);

}  // namespace ampx::check
