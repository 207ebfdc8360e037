// `ampx plugin-check`: the conformance kit for backend plugins, on the model
// of ggml's test-backend-ops. For one plugin file:
//   - ABI: the pre-flight child first (a plugin that crashes there gets a
//     report), then the entry symbol, versions, table size and required
//     members (the host's own load checks), plugin_create, enumeration;
//   - error paths: bad arguments give statuses, never crashes, and the
//     device stays usable after a refused huge allocation;
//   - every case of the op-case catalogue (op_cases.hpp) x dtype: the
//     plugin's answer is honoured (`unsupported` is not run, and its
//     kernel_prepare must refuse), and whatever it answers `native` or
//     `emulated` is run and compared with cpu_ref at the shipped tolerance
//     (opset/tolerances.hpp); data movement bit for bit. A failing `native` answer
//     is reported as a lie;
//   - with `perf`, each run case timed on the plugin, on cpu_ref and on the
//     oneDNN plugin (the fast CPU peer) where it is installed.
// The plugin never runs in this process: every step that calls into it runs
// in a forked child (plugins::run_forked) that loads it afresh, reports each
// result over a pipe and goes on with the next step; a step that crashes,
// exits or hangs becomes a FAIL line naming the step and the signal, and a
// fresh child goes on after it. Outputs lie between guard bytes, so a kernel
// that writes outside them fails its case; run the check under
// AddressSanitizer to catch the rest.
#pragma once

#include <ampx/backend_api.h>
#include <ampx/opset/tolerances.hpp>

#include <cstdint>

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace ampx::check {

struct CheckOptions {
  std::optional<int32_t> device;   // default: every device of the plugin
  std::vector<std::string> ops;    // op types (empty: all)
  std::vector<ampx_dtype> dtypes;  // default f32, f16, bf16
  bool perf = false;
  // How the plugin computes on f16 (opset/tolerances.hpp): its f16 results
  // are held to that mode's tolerance. Empty: what the plugin declares (its
  // numerics extension, ABI 1.3), else the op set's contract, f32-accumulate.
  std::optional<opset::ComputeMode> compute_mode;
  std::string plugin_options;  // passed to plugin_create
  // Each step that calls into the plugin (loading, an error path, a case's
  // prepare and launch) runs in a child process: one that makes no progress
  // for this long is killed and reported as hung. The loading pre-flight
  // gets twice as long.
  double timeout_s = 10;
  // cpu_ref, the reference (empty: found in the default plugin directories).
  std::filesystem::path reference;
  // With perf: the oneDNN plugin, timed as the fast CPU peer (empty: next
  // to the reference; absent there: no peer column).
  std::filesystem::path peer;
};

// One ABI or error-path check.
struct AbiCheck {
  std::string what;
  bool ok = true;
  std::string detail;
  // The ABI minor version that made this a rule (backend_api.h says which);
  // 0: every version.
  uint32_t since_minor = 0;
  // Failed a rule newer than the ABI the plugin declares: reported as
  // advice ("not required before 1.3"), not as a failure.
  bool advice = false;
};

enum class Verdict {
  kPass,
  kFail,         // emulated (or native data movement) with wrong results, or a failing run
  kLie,          // answered native, results wrong
  kUnsupported,  // answered unsupported (and prepare refused it)
};
const char* verdict_name(Verdict v);

struct CaseResult {
  std::string device;  // "<plugin>:<index>"
  std::string name;    // the catalogue's case name
  std::string op;
  ampx_dtype dtype = AMPX_DTYPE_F32;
  ampx_support answer = AMPX_SUPPORT_UNSUPPORTED;
  std::string note;  // the plugin's capability note
  Verdict verdict = Verdict::kPass;
  double error = 0;      // worst relative error over the outputs (0: bitwise)
  double tolerance = 0;  // what it was held to
  std::string message;   // why it failed, when it did
  // perf: median microseconds per launch; flops and bytes of the node.
  double plugin_us = -1, reference_us = -1, flops = 0, bytes = 0;
  // perf: the same on the oneDNN peer, -1 when it is absent or does not
  // run the case.
  double peer_us = -1;
};

struct CheckReport {
  std::filesystem::path file;
  std::string plugin, version;
  uint32_t abi_major = 0, abi_minor = 0;
  std::string peer;  // with perf: the timed peer plugin's name, "" when none
  opset::ComputeMode compute_mode = opset::ComputeMode::kF32Accumulate;  // as checked
  // Where compute_mode came from: "plugin" (its numerics extension),
  // "default" (no extension: the op set's contract) or "command-line".
  std::string compute_mode_source = "default";
  int32_t devices = 0;
  std::string note;  // plugin_info.note
  std::vector<AbiCheck> abi;
  std::vector<CaseResult> cases;
  bool ok() const noexcept;
};

// Never throws for a misbehaving plugin: every problem is a failed check.
// Throws std::runtime_error when the reference cannot be loaded.
CheckReport check_plugin(const std::filesystem::path& file, const CheckOptions& options);

// The report as a table: the ABI checks, then one line per op x dtype (the
// worst case of that op and dtype on each device, with its error and
// tolerance), failures listed in full, and a summary line. `perf`: GFLOP/s
// and GB/s of the plugin, cpu_ref and the peer per case.
void print_check_text(std::ostream& out, const CheckReport& report, bool perf);
// The report as JSON, schema ampx.plugin_check/1 (docs/PLUGINS.md).
std::string check_json(const CheckReport& report);

}  // namespace ampx::check
