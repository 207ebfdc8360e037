// A plan made ready to run (Session::compile): fused per device, kernels
// prepared, weights uploaded; and, when asked for, the reference it is
// verified against (`ampx run`'s check, run_check.hpp).
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/exec/execution_mode.hpp>
#include <ampx/exec/executor.hpp>
#include <ampx/exec/fusion.hpp>
#include <ampx/exec/memory_budget.hpp>
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
  // kEager is refused until the eager executor lands (std::invalid_argument).
  ExecutionMode mode = ExecutionMode::kCompiled;
  ReferenceCheck reference = ReferenceCheck::kNone;
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
  const ExecutorStats& stats() const { return executor().stats(); }
  const FusedGraph& fused() const { return *fused_; }
  // The executor itself: its device-resident state (training), profiles.
  Executor& executor();
  const Executor& executor() const;
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
  CompiledModel(std::unique_ptr<FusedGraph> fused, std::unique_ptr<Executor> executor)
      : fused_(std::move(fused)), executor_(std::move(executor)) {}
  std::unique_ptr<FusedGraph> fused_;  // heap: the executor refers to its graph
  std::unique_ptr<Executor> executor_;
  // With ReferenceCheck::kPrepare: the model's output names and the
  // plan's lowest precision, taken at compile.
  std::optional<Reference> reference_;
  std::vector<std::string> output_names_;
  DType lowest_precision_ = DType::kF32;
};

}  // namespace ampx
