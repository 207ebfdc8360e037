// The C++ side of `ampx train` (docs/TRAINING.md): a model, a Session's
// devices and an amp policy in; epochs of shuffled mini-batches through one
// compiled training step, evaluation, and the trained model out.
//
//   ampx::Session session({.devices = "onednn:0"});
//   ampx::train::Trainer trainer(session, session.load("builtin:digits-cnn"), options);
//   for (int e = 0; e < 10; ++e) {
//     auto r = trainer.train_epoch(train_set);
//     auto ev = trainer.evaluate(test_set);
//   }
//   ampx::Graph trained = trainer.trained_model();
//   save_checkpoint(dir, trainer.checkpoint());  // later: restore(read_checkpoint(file))
#pragma once

#include <ampx/amp/planner.hpp>
#include <ampx/session/session.hpp>
#include <ampx/train/checkpoint.hpp>
#include <ampx/train/data_parallel.hpp>
#include <ampx/train/datasets.hpp>
#include <ampx/train/loss_scale.hpp>
#include <ampx/train/overflow_diagnostics.hpp>
#include <ampx/train/sharded_optimizer.hpp>
#include <ampx/train/shared_state.hpp>
#include <ampx/train/training_graph.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampx::train {

struct TrainerOptions {
  TrainingGraphOptions graph;
  AmpPolicy policy;
  int64_t batch = 32;
  uint64_t seed = 0;  // data order and dropout masks
  // Plan as a policy-string framework would (PlanOptions::capability_blind):
  // cpu_ref's emulated 16-bit then really rounds to 16-bit on any machine.
  bool capability_blind = false;
  // PyNative-style dispatch (exec/eager_executor.hpp): the planned step,
  // unfused, run node by node, each kernel prepared and given buffers of its
  // own at every step, the state kept on the device between steps. The
  // update is always per tensor (update_lowering's fused pass is a
  // compiler's). Session::compile with ExecutionMode::kEager builds it, and
  // checks one step's memory as it does a compiled step's.
  bool eager = false;
  // The loss-scale schedule; unset: the level's default
  // (LossScaleOptions::default_for). It also decides whether an overflowed
  // step is skipped (graph.skip_nonfinite is set from it).
  std::optional<LossScaleOptions> loss_scale;
  // Per-layer overflow diagnostics and the automatic FP32 fallback
  // (docs/TRAINING.md, "Overflow diagnostics").
  OverflowOptions overflow;
  // The optimizer as one fused pass where the updates' device runs it
  // (train/fused_update.hpp, docs/TRAINING.md): the guard and every update
  // in one node that also writes the forward's 16-bit weight copies.
  // kPerTensor keeps one node per weight and a Cast per 16-bit weight (the
  // same bits, slower; for comparisons).
  enum class UpdateLowering { kFused, kPerTensor } update_lowering = UpdateLowering::kFused;
  // Data parallelism across the ranks of an MPI job (docs/DISTRIBUTED.md);
  // null: this process alone. Every rank passes its own, made with the
  // same options, and the same model, options and data. `batch` is then
  // per rank, the global batch size() times it: each step reads its share
  // of one global batch in the order the seed fixes, the gradients are
  // summed over the ranks before the update guard, BatchNorm uses the
  // global batch's statistics, and every rank ends each step with the
  // same state.
  std::shared_ptr<DataParallel> data_parallel;
};

// One step as the loss-scale schedule saw it.
struct StepRecord {
  int64_t step = 0;      // counted from 1 over the whole run
  double loss = 0;       // unscaled
  double scale = 1;      // the loss scale the step ran with
  bool finite = true;    // all gradients finite (else: skipped, unless loss scale none)
  double grad_norm = 0;  // of the unscaled gradients; +inf when not finite
  // Wall time of the compiled step's run (EpochResult::step_ms's terms),
  // with a sharded optimizer's all-gather after it; NaN for the profiled
  // step, which is not timed.
  double run_ms = 0;
  // Data parallelism: the step's all-reduces from start to completion,
  // summed, and the part of it the step waited for (within run_ms).
  double comm_ms = 0;
  double exposed_comm_ms = 0;
};

// An epoch's communication in a data-parallel run (this rank's figures).
struct DataParallelEpoch {
  int ranks = 1;
  int rank = 0;
  int64_t global_batch = 0;
  int buckets = 0;  // per step
  std::string allreduce_dtype;
  uint64_t wire_bytes_per_step = 0;
  double comm_ms_per_step = 0;
  double exposed_comm_ms_per_step = 0;
  int synchronized_per_step = 0;  // BatchNorm statistics' reductions
  // Rows of a last global batch smaller than the rank count, not trained.
  int64_t dropped_rows = 0;
  // ZeRO-1 (--shard-optimizer): the gradients are reduced to their owners
  // (wire_bytes_per_step counts them), and after each step the owners'
  // updated weights are all-gathered (not overlapped: within
  // comm_ms_per_step and exposed_comm_ms_per_step too).
  bool sharded_optimizer = false;
  uint64_t allgather_bytes_per_step = 0;
  double allgather_ms_per_step = 0;
};

struct EpochResult {
  int epoch = 0;  // counted from 1
  int64_t steps = 0;
  double loss = 0;     // mean over the samples of steps with a finite loss (NaN: none)
  double step_ms = 0;  // mean wall time of a step (the run of the compiled step)
  double samples_per_s = 0;
  int64_t overflow_steps = 0;       // steps whose gradients were not all finite
  double loss_scale = 1;            // at the end of the epoch
  std::vector<StepRecord> records;  // every step of the epoch, in order
  // With diagnostics: the epoch's overflowed steps, each naming the layer
  // that went non-finite first; and the layers the automatic fallback
  // moved to f32 during the epoch, with the time the new step took to
  // plan and compile.
  std::vector<OverflowEvent> overflows;
  std::vector<FallbackRecord> fallbacks;
  double replan_ms = 0;
  std::optional<DataParallelEpoch> data_parallel;
};

// One step of a run, profiled (Trainer::profile_at_step): every kernel,
// Cast and copy timed, each waited for, with what it ran on.
struct ProfiledStep {
  int64_t step = 0;  // counted from 1 over the whole run
  int epoch = 0;     // counted from 1
  int64_t rows = 0;  // samples in its batch
  RunProfile profile;
  std::vector<double> predicted;     // per profiled step: the plan's (step_predictions), -1: none
  std::vector<std::string> devices;  // the plan's devices, as StepTiming::device indexes them
};

// The run stopped itself: LossScaler::given_up() (docs/TRAINING.md).
// `epoch` holds the steps of the epoch it stopped in, up to the last.
class TrainingStopped : public std::runtime_error {
 public:
  TrainingStopped(const std::string& what, EpochResult epoch)
      : std::runtime_error(what), epoch(std::move(epoch)) {}
  EpochResult epoch;
};

struct Evaluation {
  double loss = 0;
  double accuracy = 0;  // cross entropy only: arg max against the label
  int64_t samples = 0;
};

class Trainer {
 public:
  // After this many overflowed steps in a row at the lowest loss scale the
  // trainer turns the overflow diagnostics on by itself, so that a run
  // that then gives up (LossScaler::kMaxOverflowsAtFloor) names the layer.
  static constexpr int64_t kDiagnoseAfterOverflows = 10;

  // `forward`: weights as constants, first output the prediction. Throws
  // std::invalid_argument for bad options, GraphError for a model autodiff
  // cannot differentiate.
  Trainer(Session& session, Graph forward, TrainerOptions options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One epoch: `data` in an order shuffled by (seed, epoch), batches of
  // `batch` and a last partial batch. `progress(done, total, running_loss)`
  // after every step. Throws TrainingStopped when overflows at the lowest
  // loss scale go on (LossScaler::kMaxOverflowsAtFloor in a row).
  EpochResult train_epoch(const Dataset& data,
                          const std::function<void(int64_t, int64_t, double)>& progress = {});
  // The loss and accuracy of the current weights in inference mode.
  Evaluation evaluate(const Dataset& data);

  // Every state tensor (weights, running statistics, optimizer moments),
  // named as in TrainingGraph::state. A sharded run (ZeRO-1) holds the
  // moments of its own weights only; where it holds other ranks' weights
  // as 16-bit copies, state() is collective (every rank calls it together,
  // as evaluate(), checkpoint() and trained_model(), which use it): the f32
  // masters are gathered from their owners.
  std::vector<HostTensor> state() const;
  // Throws std::invalid_argument naming the first tensor whose name or type
  // is not the step's, writing nothing.
  void set_state(const std::vector<HostTensor>& state);
  // Progress counters, kept in checkpoints.
  int epoch() const { return epoch_; }
  int64_t step() const { return step_; }

  // Writes checkpoint() into `dir` (save_checkpoint's file names, the
  // `keep` newest kept) and returns the file, empty on ranks that write
  // none. Alone, or on rank 0 of a data-parallel run: one file. With a
  // sharded optimizer (ZeRO-1) collective: every rank writes its shard,
  // and rank 0 the manifest once every rank has (train/checkpoint.hpp);
  // a rank that cannot write makes every rank throw.
  std::filesystem::path save_checkpoint(const std::filesystem::path& dir, int keep);
  // ZeRO-1: this rank's state against the unsharded run's; nullopt unless
  // the optimizer is sharded.
  const std::optional<ShardedMemory>& sharded_memory() const { return sharded_memory_; }

  // Resume (docs/TRAINING.md, "Checkpoints"). checkpoint() is the run as it
  // stands: every state tensor, the epoch and step, the seed, the model's
  // fingerprint, run_options(), the loss-scale schedule and where it
  // stands, and the automatic fallback's layers and windows. A later run
  // of the same model, options and seed restore()s it and continues as
  // the uninterrupted run would, bit for bit on cpu_ref. A sharded run's
  // checkpoint() holds this rank's state: every weight and running
  // statistic, and the optimizer moments it owns.
  Checkpoint checkpoint() const;
  // What restore() does with the checkpoint's loss-scale state: take it up
  // (a checkpoint of another schedule is refused), or start this run's
  // schedule afresh (`ampx train --reset-loss-scale`).
  enum class LossScaleOnRestore { kResume, kStartAfresh };
  // Checks `c` first, changing nothing when it throws std::invalid_argument
  // in one line: another model, other options, another seed, another
  // loss-scale schedule (kResume), a fallback layer that is not a node of
  // the model, or state that does not fit the step. Then the layers it
  // moved to f32 are planned f32 again (the step re-planned before the
  // state goes in), and the fallback windows, state, progress and (kResume)
  // loss-scale state are taken up.
  void restore(const Checkpoint& c, LossScaleOnRestore loss_scale = LossScaleOnRestore::kResume);
  // What a resumed run must share with the run that wrote the checkpoint,
  // as JSON text (Checkpoint::options): optimizer, lr, momentum, nesterov,
  // weight decay, batch, loss, amp level, the 16-bit type as resolved
  // (`--dtype auto` may pick another elsewhere) and the frozen weights.
  std::string run_options() const;
  // model_fingerprint() of the forward graph as given (before each reader
  // of a shared initializer got its own copy).
  const std::string& model_fingerprint() const { return model_fingerprint_; }

  // The forward model with the trained weights and statistics (each
  // shared initializer's copies as initializers of their own).
  Graph trained_model() const;
  // The operands given their own copy of a shared initializer
  // (untie_shared_state; empty when nothing was shared).
  const std::vector<SharedStateCopy>& shared_copies() const { return shared_copies_; }
  // The plan of the full-batch step: every node's intended and effective
  // precision, device and reason, backward and updates included.
  const AmpPlan& plan() const;
  const TrainingGraph& training_graph() const;
  // The full-batch step's executor statistics (arena, weights, state bytes).
  const ExecutorStats* step_stats() const;
  // The full-batch step as it runs: the plan's graph after the optimizer's
  // lowering (train/fused_update.hpp) and fusion.
  const Graph& step_graph() const;
  // One training step on the first batch of `data`, profiled: every kernel
  // timed (it trains: the state moves on by one step).
  RunProfile profile_step(const Dataset& data);
  // Profiles the run's step `step` (counted from 1 over the whole run, as
  // step()) when train_epoch reaches it: that step runs like the others, on
  // its batch, but through the executor's profiled run, and profiled_step()
  // holds it afterwards. Its wall time, whose kernels each waited for the
  // one before, is left out of the epoch's step_ms and samples/s. Throws
  // std::invalid_argument for a step < 1 or one already run.
  void profile_at_step(int64_t step);
  const std::optional<ProfiledStep>& profiled_step() const { return profiled_; }
  const TrainerOptions& options() const { return options_; }
  // The loss-scale schedule and its state (kept in checkpoints), and why
  // the schedule is what it is ("dynamic loss scaling, MindSpore's O2
  // default ...", or "set by the caller").
  const LossScaler& loss_scaler() const { return scaler_; }
  const std::string& loss_scale_reason() const { return loss_scale_reason_; }
  // The overflow diagnostics (null unless options.overflow asks for them),
  // and the layers moved to f32 so far (kept in checkpoints).
  const OverflowDiagnostics* overflow_diagnostics() const {
    return diagnostics_ ? &*diagnostics_ : nullptr;
  }
  const std::vector<FallbackRecord>& fallbacks() const { return fallbacks_; }
  // Moves `records`' layers to f32 (a resumed run's): re-plans and
  // recompiles the step, keeping the state. Throws std::invalid_argument
  // naming a layer that is not a node of the model.
  void set_fallbacks(std::vector<FallbackRecord> records);
  // The fallback's windows (kept in checkpoints; empty without the
  // diagnostics).
  std::vector<FallbackWindow> fallback_windows() const {
    return diagnostics_ ? diagnostics_->windows() : std::vector<FallbackWindow>{};
  }

 private:
  struct Program;
  Program& program(int64_t batch);  // compiled on first use; holds the state while active
  // Data parallelism: the step's gradients and synchronized statistics
  // handed to the ranks' exchange.
  void attach_exchange(Program& p);
  // What every rank must share, checked once after the first plan.
  void require_agreement(const Program& p);
  int ranks() const { return options_.data_parallel ? options_.data_parallel->size() : 1; }
  int rank() const { return options_.data_parallel ? options_.data_parallel->rank() : 0; }
  // Per weight in the step's state order: what its gradient travels as
  // (decided from the first plan, the same for every later one).
  std::vector<DType> wire_dtypes_;
  int64_t agreed_data_size_ = -1;
  // ZeRO-1: each weight's owner (the step's weights in state order), and
  // the all-gather's buffer.
  std::vector<int> weight_owner_;
  std::vector<std::byte> gathered_;
  std::optional<ShardedMemory> sharded_memory_;
  bool sharded() const { return !weight_owner_.empty(); }
  // Owners decided, this rank's weights named in options_.graph.
  void shard_weights();
  // After a step: every owner's updated weights into every rank's step
  // (each in its working dtype); returns the time it took.
  double gather_weights(Program& p);
  // Collective: every weight's f32 master from its owner, in state order.
  std::vector<HostTensor> gather_masters(const Program& p) const;
  // The all-gather: ranks' blocks one after the other, each its weights in
  // bucket order, weight k as wire[k] (16-bit: the master rounded); fills
  // `buffer`, returns each weight's offset in it.
  std::vector<uint64_t> all_gather_weights(const Program& p, std::span<const DType> wire,
                                           std::vector<std::byte>& buffer) const;
  ShardedMemory measure_sharding(const Program& p) const;
  Program& activate(int64_t batch);
  // The data inputs of step step_ + 1 on `rows` of `data`.
  // `loss_weight` scales this rank's loss seed: its share of the global
  // batch against an even share (1 but in an uneven last batch).
  std::vector<HostTensor> step_inputs(const Program& p, const Dataset& data,
                                      std::span<const int64_t> rows,
                                      double loss_weight = 1.0) const;
  // How the step and the evaluation are planned (Session::plan).
  PlanRequest plan_request() const;
  Session& session_;
  Graph forward_;
  TrainerOptions options_;
  // The devices the first step was planned for: every later plan's.
  std::optional<DeviceSelection> selection_;
  std::map<int64_t, std::unique_ptr<Program>> programs_;
  Program* active_ = nullptr;
  LossScaler scaler_;
  std::string loss_scale_reason_;
  std::optional<OverflowDiagnostics> diagnostics_;
  std::vector<FallbackRecord> fallbacks_;
  std::vector<SharedStateCopy> shared_copies_;
  std::string model_fingerprint_;
  // std::invalid_argument naming the first record whose layer is not a
  // node of the model.
  void check_fallback_layers(const std::vector<FallbackRecord>& records) const;
  // std::invalid_argument naming the first tensor that does not fit the step.
  void check_state(const std::vector<HostTensor>& state) const;
  // `tensors`' state of this step, by name, in the step's order: a sharded
  // run's checkpoint holds every rank's moments, an unsharded one's may be
  // read by a sharded run. Throws std::invalid_argument naming a tensor the
  // step needs and `tensors` lack, or one it holds that is neither this
  // step's state nor another rank's optimizer moment of its weights.
  std::vector<HostTensor> state_by_name(const std::vector<HostTensor>& tensors) const;
  // Drops every compiled step and compiles the current batch's again under
  // the current policy, with the state carried over; returns the time.
  double replan();
  void start_diagnostics(const Program& p);
  // Turns the probe on mid-run (re-planned); returns the time.
  double enable_diagnostics();
  // After a step: the automatic fallback's layers due now, re-planned.
  void fall_back_due_layers(EpochResult& r);
  // TrainingStopped's one line, naming the layer when the probe saw it.
  std::string stop_message(double last_loss) const;
  int epoch_ = 0;
  int64_t step_ = 0;
  int64_t profile_at_ = 0;  // profile_at_step(); 0: none
  std::optional<ProfiledStep> profiled_;
};

// Dataset checks shared by the CLI and the Trainer: matching counts, labels
// in [0, classes), no NaN or infinity in the inputs; throws
// std::invalid_argument naming `what` and the first bad row.
void check_dataset(const Dataset& data, const std::string& what, int64_t classes);

}  // namespace ampx::train
