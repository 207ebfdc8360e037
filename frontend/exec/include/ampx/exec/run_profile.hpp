// Per-node timing of executor runs (`ampx run --per-node`, `--trace FILE`,
// Session's profiled runs): every kernel, Cast and copy of a run with its
// measured time, how it was measured, and the summaries built from several
// runs (median per step, totals per op) and the Chrome trace-event file
// that Perfetto and chrome://tracing load.
#pragma once

#include <ampx/plugins/kernel.hpp>

#include <string>
#include <vector>

namespace ampx {

// One step of one profiled run, in run order.
struct StepTiming {
  std::string name;     // the node (a fused node: its own name), or the copied value
  std::string op;       // the op type, or "Copy"
  int device = 0;       // index into the executor's devices; a copy: its destination
  int copy_from = -1;   // a copy: the source device; -1 for kernels
  std::string dtype;    // the first output's dtype (a copy: the value's)
  std::string shapes;   // "f32[8,3,32,32], f32[64,3,3,3] -> f32[8,64,32,32]"
  double start_us = 0;  // host clock, since the run began
  double us = 0;        // measured: device time where the device reports it, else host
  plugins::Kernel::TimingMethod method = plugins::Kernel::TimingMethod::kHost;
  // From the plugin's kernel report (ABI 1.4), empty / 0 without one and
  // for copies: what the node ran on ("convolution_forward jit:avx2",
  // "loop: reference kernel"), and the conversions its launch ran besides
  // the kernel (reorders between layouts, write-backs of values it read in
  // another layout), their time included in `us`; `casts` of them also
  // changed the dtype.
  std::string implementation;
  uint64_t reorders = 0;
  double reorder_us = 0;
  uint64_t casts = 0;
};

// One profiled run: every step is run to completion before the next, so
// the total is larger than an unprofiled run's (the per-step waits).
struct RunProfile {
  std::vector<StepTiming> steps;
  double total_us = 0;
};

// The same step over several runs: the median of its times.
struct StepSummary {
  // From the first run; `us` and `reorder_us` are the medians.
  StepTiming step;
  double predicted_us = -1;  // from the plan, < 0 when it has none
  double min_us = 0, max_us = 0;
};
struct OpSummary {
  std::string op;
  int steps = 0;
  double us = 0;            // sum of the steps' medians
  double predicted_us = 0;  // sum of the predictions that exist
  int predicted_steps = 0;
  uint64_t reorders = 0;  // of the first run's steps
  double reorder_us = 0;  // sum of the steps' medians
};
struct ProfileSummary {
  std::vector<StepSummary> steps;  // run order
  std::vector<OpSummary> ops;      // by measured time, largest first
  double median_total_us = 0;
  // "device" where every kernel was timed on its device, "host" where none
  // was, else "mixed".
  std::string method;
};

const char* timing_method_name(plugins::Kernel::TimingMethod m);

// `runs` must all come from one executor (the same steps in the same
// order); `predicted_per_step[i]` is step i's prediction (< 0: none; the
// vector may be shorter). Throws std::invalid_argument on no runs or runs of
// different executors.
ProfileSummary summarize_profiles(const std::vector<RunProfile>& runs,
                                  const std::vector<double>& predicted_per_step);

// The Chrome trace-event format (a JSON object with "traceEvents"): one
// complete event ("ph": "X") per step of every run, runs one after another
// on the time axis, one track per device and one for copies. Each event's
// args carry node, op, device, dtype, shapes, predicted and measured time,
// the timing method and, where the plugin reports them, the implementation
// and the reorders (count, us) and casts among them.
std::string chrome_trace_json(const std::vector<RunProfile>& runs,
                              const std::vector<std::string>& device_ids,
                              const std::vector<double>& predicted_per_step);

}  // namespace ampx
