// The Trainer's compiled step (private to frontend/session: trainer.cpp and
// trainer_sharding.cpp).
#pragma once

#include <ampx/session/trainer.hpp>
#include <ampx/train/fused_update.hpp>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace ampx::train {

// One compiled training step for one batch size.
struct Trainer::Program {
  TrainingGraph tg;
  PlannedModel planned;  // its source: tg.step
  const AmpPlan& plan() const { return planned.plan; }
  // TrainerOptions::eager: compiled with ExecutionMode::kEager, the
  // planned step run node by node (nothing fused).
  std::optional<CompiledModel> compiled;
  // The fused optimizer's 16-bit weight copies: state after tg.state's,
  // derived from the weights (written whenever a weight is), never read back.
  std::vector<WeightCopy> copies;
  // Data parallelism: what the executor hands the gradients to.
  std::unique_ptr<StepExchange> exchange;

  PlanExecutor& exec() { return compiled->executor(); }
  const PlanExecutor& exec() const { return compiled->executor(); }
  const FusedGraph& ran() const { return compiled->fused(); }
  std::vector<HostTensor> run(std::span<const HostTensor> in) { return exec().run(in); }
  // ZeRO-1 (train/sharded_optimizer.hpp): per weight (state order) its
  // working dtype, what the all-gather sends; per state entry the dtype
  // this rank holds it in (another rank's weight as its 16-bit copy).
  // Empty unless sharded.
  std::vector<DType> working;
  std::vector<DType> held;
  // Some rank holds another's weight as a 16-bit copy (the same answer on
  // every rank: from `working`, not this rank's `held`), so that the f32
  // masters must be gathered to read the whole state.
  bool copies_held_somewhere() const {
    return std::any_of(working.begin(), working.end(), [](DType d) { return d != DType::kF32; });
  }

  // f32 bytes for a state entry held as a 16-bit copy are rounded to it.
  void write_state(size_t i, std::span<const std::byte> bytes) {
    if (i < held.size() && held[i] != DType::kF32 &&
        bytes.size() == tg.state[i].initial.data.size()) {
      exec().write_state(i, copy_bytes(held[i], bytes));
      return;
    }
    exec().write_state(i, bytes);
    for (size_t j = 0; j < copies.size(); ++j)
      if (copies[j].weight_input == tg.state[i].binding.input)
        exec().write_state(tg.state.size() + j, copy_bytes(copies[j].dtype, bytes));
  }
  HostTensor read_state(size_t i) const { return exec().read_state(i); }
};

}  // namespace ampx::train
