// The Trainer's compiled step (private to frontend/session: trainer.cpp and
// trainer_sharding.cpp).
#pragma once

#include <ampx/session/trainer.hpp>
#include <ampx/train/fused_update.hpp>

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
  void write_state(size_t i, std::span<const std::byte> bytes) {
    exec().write_state(i, bytes);
    for (size_t j = 0; j < copies.size(); ++j)
      if (copies[j].weight_input == tg.state[i].binding.input)
        exec().write_state(tg.state.size() + j, copy_bytes(copies[j].dtype, bytes));
  }
  HostTensor read_state(size_t i) const { return exec().read_state(i); }
};

}  // namespace ampx::train
