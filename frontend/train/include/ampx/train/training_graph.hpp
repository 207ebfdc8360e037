// The training step as one graph: forward (BatchNorm and Dropout in
// training mode), loss, backward (autodiff) and the optimizer updates on
// f32 master weights. Weights, optimizer moments and running statistics
// are state (exec/executor.hpp, StateBinding): graph inputs that the
// executor keeps on the device, and graph outputs that replace them.
#pragma once

#include <ampx/exec/executor.hpp>
#include <ampx/exec/host_tensor.hpp>
#include <ampx/ir/graph.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace ampx::train {

enum class OptimizerKind { kSgd, kAdam, kAdamW };
// "sgd", "adam", "adamw"; parse throws std::invalid_argument naming the text.
std::string_view optimizer_name(OptimizerKind kind);
OptimizerKind parse_optimizer(std::string_view text);

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::kSgd;
  double lr = 0.01;                                   // > 0
  double momentum = 0.0;                              // SGD, in [0, 1)
  bool nesterov = false;                              // SGD, needs momentum > 0
  double weight_decay = 0.0;                          // >= 0; Adam: L2, AdamW: decoupled
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;  // Adam, AdamW
  // Throws std::invalid_argument naming the bad option.
  void validate() const;
};

enum class LossKind { kCrossEntropy, kMse };

// Over which rows a BatchNorm of the forward takes its batch statistics.
// kLocal: this process's batch (one BatchNormTraining node). kSynchronized:
// every BatchNorm becomes the composition of train/sync_batch_norm.hpp,
// whose per-channel sums travel as one value S (TrainingGraph::
// synchronized); summed over the ranks of a data-parallel run before it is
// read, they make the statistics the global batch's (PyTorch's
// SyncBatchNorm). On one process, with nothing summed, both forms compute
// the same step (within f32 rounding).
enum class BatchStatistics { kLocal, kSynchronized };

struct TrainingGraphOptions {
  OptimizerOptions optimizer;
  LossKind loss = LossKind::kCrossEntropy;
  // Weights not trained: node-override-style patterns (a value name, or a
  // prefix ending in '*').
  std::vector<std::string> freeze;
  double dropout_ratio_default = 0.5;  // a Dropout without a ratio
  // UpdateGuard's attributes (docs/OPS.md): clip the unscaled gradients to
  // this global L2 norm (0: no clipping), and skip the update of a step
  // whose gradients are not all finite (loss scaling's overflow skip).
  double clip_grad_norm = 0.0;
  bool skip_nonfinite = false;
  // The overflow diagnostics' probe (docs/TRAINING.md): one TensorStats
  // node over every layer's activation and every gradient its backward
  // produces, its stats an output of the step. `underflow_below` is the
  // 16-bit type's smallest normal (f16: 2^-14), the line the underflow
  // share counts against.
  bool diagnose_overflow = false;
  double underflow_below = 0x1p-14;
  BatchStatistics batch_statistics = BatchStatistics::kLocal;
  // ZeRO-1 (docs/DISTRIBUTED.md, "Sharded optimizer"): the weights this
  // rank updates, by name; unset: every weight. Every gradient is still
  // computed and read by the update guard (a data-parallel run sends each
  // to its owner), but only these weights get an update and optimizer
  // moments; the others are state the step reads and leaves as it was
  // (their owner's update arrives between steps). The guard's attributes
  // are then neutral (no clipping, no skip: hyper' = hyper) and its
  // statistics this rank's alone: the caller reduces them over the ranks
  // and writes the verdict into hyper' before the first update reads it
  // (train/sharded_optimizer.hpp, guard_verdict()).
  std::optional<std::vector<std::string>> owned_weights;
};

// One value of the step that a data-parallel run sums over the ranks (in
// place, between its producer and its first reader; f32): a synchronized
// BatchNorm's statistics S = [Σx (C), Σx² (C), count (1)], and the total
// gradient of S. Names of values of TrainingGraph::step, which the planner
// and fusion keep.
struct SynchronizedValue {
  std::string layer;    // the BatchNorm (a node of the model)
  std::string forward;  // S: "<layer>/sync/stats"
  // The gradient of S, every contribution summed; empty when no gradient
  // flows through S (the BatchNorm's input depends on no trained weight).
  std::string gradient;
};

// One tensor the diagnostics probe: row `index` of the step's "overflow"
// output (TensorStats: [amax, non-finite share, underflow share]).
struct OverflowProbe {
  enum class Kind { kActivation, kGradient };
  std::string layer;   // the forward node (a node of the model)
  std::string tensor;  // the probed value's name in the step
  Kind kind = Kind::kActivation;
  size_t input = 0;  // kGradient: the layer's input it is the gradient of
  int64_t elements = 0;
};
std::string_view probe_kind_name(OverflowProbe::Kind kind);  // "activation", "gradient"

enum class StateRole { kWeight, kRunningMean, kRunningVar, kMomentum, kAdamM, kAdamV };
std::string_view state_role_name(StateRole role);  // "weight", "running_mean", ...

struct StateEntry {
  std::string name;  // the weight's name; "<weight>/momentum" etc. for optimizer state
  StateRole role;
  StateBinding binding;  // into TrainingGraph::step's inputs and outputs
  HostTensor initial;    // the model's value, or zeros
};

// The step's inputs other than the state, by what they carry. Their
// positions in TrainingGraph::step are resolved once, when the step is built
// (TrainingGraph::input()), so that no user indexes the step by a number.
enum class TrainingInput {
  kData,         // the model's inputs (the Trainer feeds the first: a batch of samples)
  kLabels,       // "labels": i64 [N] for cross entropy, the prediction's type for MSE
  kHyper,        // "hyper": f32, the optimizer's per-step scalars (docs/OPS.md)
  kLossScale,    // "loss_scale": f32 [], the backward pass's seed
  kDropoutSeed,  // "dropout_seed/<node>": i64 [1], one per Dropout (dropout_nodes' order)
};
inline constexpr size_t kTrainingInputs = 5;
// The step's outputs other than the state.
enum class TrainingOutput {
  kLoss,        // "loss": f32 [], unscaled
  kPrediction,  // the model's first output
  kGuard,       // UpdateGuard's stats [2]: all gradients finite 1/0, their unscaled global norm
  kOverflow,    // with diagnose_overflow: TensorStats [probes, 3] (OverflowProbe's rows)
};
inline constexpr size_t kTrainingOutputs = 4;
// "data", "labels", "hyper", "loss_scale", "dropout_seed"; "loss",
// "prediction", "guard", "overflow".
std::string_view training_input_name(TrainingInput slot);
std::string_view training_output_name(TrainingOutput slot);

// Where one slot sits in the step: `count` consecutive positions from
// `first` (the model's inputs; one seed per Dropout, none without one; no
// overflow output without the diagnostics; one for the rest).
struct SlotRange {
  size_t first = 0;
  size_t count = 0;
};

// The name of the step's UpdateGuard node (its outputs: hyper', stats).
inline constexpr const char* kUpdateGuardNode = "update_guard";

struct TrainingGraph {
  // Inputs, in order: the model's inputs, labels, hyper, loss_scale, the
  // dropout seeds (TrainingInput), then the state inputs. Outputs: loss,
  // the prediction, guard, with diagnose_overflow the overflow stats
  // (TrainingOutput), then the state outputs. Every update reads the hyper
  // that UpdateGuard wrote. Read the positions through input() and
  // output(), never as numbers.
  Graph step;
  std::vector<StateEntry> state;
  size_t data_inputs = 0;                  // inputs before the state
  std::vector<std::string> dropout_nodes;  // one seed input each, in input order
  int trainable = 0;                       // weights trained
  int64_t parameters = 0;                  // their elements
  // diagnose_overflow: the probed tensors, activations in forward order
  // then gradients in backward order (the order the step computes them):
  // the rows of output(TrainingOutput::kOverflow).
  std::vector<OverflowProbe> probes;
  // BatchStatistics::kSynchronized: one entry per BatchNorm, in forward
  // order. Empty for kLocal.
  std::vector<SynchronizedValue> synchronized;
  // Each slot's place, indexed by the enums (build_training_graph fills
  // them; input() and output() read them).
  std::array<SlotRange, kTrainingInputs> input_slots{};
  std::array<SlotRange, kTrainingOutputs> output_slots{};

  // The position in step.inputs() of `slot`'s k-th tensor. Throws
  // std::out_of_range naming the slot when it has no k-th.
  size_t input(TrainingInput slot, size_t k = 0) const;
  size_t input_count(TrainingInput slot) const;
  // The position in step.outputs() of `slot`. Throws std::out_of_range
  // naming the slot when the step has none (overflow without diagnostics).
  size_t output(TrainingOutput slot) const;
  bool has_output(TrainingOutput slot) const;
};

// The state an operand makes of its value: kRunningMean/kRunningVar for a
// BatchNorm's mean and variance, kWeight for a float constant that is a
// parameter of the node (below) and not frozen, nothing for the rest.
std::optional<StateRole> state_role_of_use(const Graph& g, const Node& n, size_t slot,
                                           const TrainingGraphOptions& options);

// Builds the step for `forward` (weights as constants; its first output is
// the prediction). The trainable weights are its float constants that are a
// parameter of a node (a Conv2d/Gemm/MatMul/norm/PRelu operand, or any
// operand with more than one element) and not frozen; a BatchNorm's mean
// and variance become running statistics. Throws GraphError naming the
// node when a trainable weight's path to the loss has no gradient rule,
// and std::invalid_argument for bad options, a model with nothing to train,
// or a running statistic read by another operand too (the Trainer unties
// such values first: train/shared_state.hpp). A weight read by several
// operands is one tied weight here, its gradients summed.
TrainingGraph build_training_graph(const Graph& forward, const TrainingGraphOptions& options);

// The hyper input of one step (t counts from 1): SGD lr, grad_scale, apply;
// Adam lr, grad_scale, apply, 1 - beta1^t, 1 - beta2^t.
HostTensor hyper_tensor(const OptimizerOptions& options, int64_t t, double grad_scale = 1.0,
                        bool apply = true);
// The loss_scale input: f32 [] holding `scale`.
HostTensor loss_scale_tensor(double scale);

// `forward` with its constants replaced by the same-named values of
// `state` (weights and running statistics): the trained model.
Graph with_state(const Graph& forward, const std::vector<HostTensor>& state);

// `forward` rebuilt for a batch of `batch`: dimension 0 of every input
// replaced and every type inferred again. Throws GraphError naming the node
// when the graph fixes its batch size (a Reshape to a literal batch).
Graph with_batch_size(const Graph& forward, int64_t batch);

}  // namespace ampx::train
