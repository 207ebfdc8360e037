// A plan made ready to run (Session::compile): fused per device (compiled
// mode), lowered to an ExecutionPlan and given to the executor of its
// ExecutionMode; and, when asked for, the reference it is verified against
// (`ampx run`'s check, run_check.hpp).
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/exec/execution_mode.hpp>
#include <ampx/exec/execution_plan.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/memory_budget.hpp>
#include <ampx/exec/plan_executor.hpp>
#include <ampx/exec/run_profile.hpp>
#include <ampx/session/run_check.hpp>

#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampx {

// Whether compile() also prepares the reference run: the graph planned O0
// f32 on cpu_ref:0, its memory checked at once beside the plan's (a plan
// larger than the machine is refused before any input is made).
enum class ReferenceCheck { kNone, kPrepare };

struct CompileOptions {
  FusionOptions fusion{};
  // The graph inputs and outputs that stay on the device between runs (a
  // training step's weights, see exec/executor.hpp).
  std::vector<StateBinding> state{};
  // nullopt: SessionOptions::max_memory_bytes and max_memory_origin, with
  // no host memory beside the plan.
  std::optional<MemoryLimit> memory{};
  // kCompiled: fused, prepared once, one arena per device. kEager: the
  // EagerExecutor, node by node at every run (`fusion` is ignored: an eager
  // run fuses nothing).
  ExecutionMode mode = ExecutionMode::kCompiled;
  ReferenceCheck reference = ReferenceCheck::kNone;
};

// A planned graph, fused for its mode and lowered (Session::lower): the
// ExecutionPlan `ampx plan --lowered` prints, with the graph its steps index.
struct LoweredModel {
  std::unique_ptr<FusedGraph> fused;  // heap: plan.graph points into it
  ExecutionPlan plan;
};

// Keeps its graph; the Session (its plugins) and the planned graph must
// outlive it.
class CompiledModel {
 public:
  std::vector<HostTensor> run(std::span<const HostTensor> inputs) { return executor().run(inputs); }
  // A profiled run (`ampx run --per-node/--trace`): every kernel and copy
  // timed, see exec/run_profile.hpp for the summary and the trace file.
  std::vector<HostTensor> run(std::span<const HostTensor> inputs, RunProfile& profile) {
    return executor().run(inputs, profile);
  }
  // The same, the inputs read in place (the Python package's NumPy arrays).
  std::vector<HostTensor> run(std::span<const HostTensorView> inputs) {
    return executor().run(inputs);
  }
  std::vector<HostTensor> run(std::span<const HostTensorView> inputs, RunProfile& profile) {
    return executor().run(inputs, profile);
  }
  const ExecutorStats& stats() const { return executor().stats(); }
  const FusedGraph& fused() const { return *lowered_.fused; }
  const ExecutionPlan& execution_plan() const { return lowered_.plan; }
  ExecutionMode mode() const { return mode_; }
  // The executor itself: its device-resident state (training), profiles.
  PlanExecutor& executor();
  const PlanExecutor& executor() const;
  // Frees the devices' memory (arenas, weights, prepared kernels) while
  // keeping what verify_against_reference() needs, so that the reference
  // never runs beside the plan; run() throws std::logic_error after it.
  void release() { executor_.reset(); }

  // `outputs` (a run of `inputs`) against the same inputs through the
  // reference prepared at compile (CompileOptions::reference), judged by
  // the tolerance of the lowest precision the plan computes in.
  // std::logic_error when no reference was prepared.
  RunCheck verify_against_reference(std::span<const HostTensor> inputs,
                                    const std::vector<HostTensor>& outputs) const;

 private:
  friend class Session;
  struct Reference {
    const plugins::Device* device = nullptr;
    AmpPlan plan;
    MemoryLimit memory;
  };
  CompiledModel(LoweredModel lowered, ExecutionMode mode, std::unique_ptr<PlanExecutor> executor)
      : lowered_(std::move(lowered)), mode_(mode), executor_(std::move(executor)) {}
  LoweredModel lowered_;  // the executor refers to its graph
  ExecutionMode mode_ = ExecutionMode::kCompiled;
  std::unique_ptr<PlanExecutor> executor_;
  // With ReferenceCheck::kPrepare: the model's output names and the
  // plan's lowest precision, taken at compile.
  std::optional<Reference> reference_;
  std::vector<std::string> output_names_;
  DType lowest_precision_ = DType::kF32;
};

}  // namespace ampx
