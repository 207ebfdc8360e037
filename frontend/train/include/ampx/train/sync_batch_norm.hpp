// Synchronized batch statistics (PyTorch's SyncBatchNorm) for data-parallel
// training, as ordinary ops of the IR (docs/TRAINING.md, "Synchronized
// BatchNorm"). A BatchNorm in training mode normalises over the batch it
// sees; with N ranks at b rows each that is b rows, not the N·b of one
// rank, so N ranks would train another model. Here each rank's per-channel
// sums travel as ONE f32 value
//   S = Concat(Σx [C], Σx² [C], count [1])
// (count: the rank's elements per channel, a constant of the step), and
// everything after S reads only S:
//   mean = S[0:C] / S[2C], var = S[C:2C] / S[2C] − mean²,
//   y = (x − mean) · scale / √(var + ε) + bias,
//   running′ = momentum · running + (1 − momentum) · batch (BatchNormTraining's
//   update: population variance).
// When the data-parallel executor sums S over the ranks before its first
// reader, the statistics are the global batch's; on one process (no sum)
// the composition is BatchNormTraining.
#pragma once

#include <ampx/ir/graph.hpp>

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::train {

// Node::origin of every node of the composition: the planner's default
// black list counts it as BatchNorm (amp/policy.hpp, black_listed_origin),
// so it stays f32 at O2 and auto as BatchNormTraining does.
inline constexpr std::string_view kSyncBatchNormOrigin = "SyncBatchNorm";
// BatchNormTraining's default momentum, which the local form's node takes
// (docs/OPS.md): both forms update the running statistics alike.
inline constexpr double kBatchNormMomentum = 0.9;

// What a node of the composition computes. The statistics (the sums, S, the
// mean, variance and inverse deviation, the running statistics) are
// Node::keep_f32: f32 at every level, O3 included, since Σx² over a batch
// passes f16's 65504 and S must be f32 for the all-reduce. The
// normalisation (x − mean, the scaling, the bias) follows the level as a
// BatchNorm does.
enum class SyncBatchNormPart { kStatistics, kNormalization };

// Where the composition's nodes go: a training step's graph
// (append_sync_batch_norm), or a test's GraphBuilder.
class SyncBatchNormSink {
 public:
  virtual ~SyncBatchNormSink() = default;
  virtual TensorType type(ValueId v) const = 0;
  // A node, its outputs typed by shape inference.
  virtual std::vector<ValueId> add(OpType op, const std::string& name, std::vector<ValueId> inputs,
                                   AttrMap attrs, SyncBatchNormPart part) = 0;
  // A constant [1] of a float dtype.
  virtual ValueId constant(const std::string& name, DType dtype, double value) = 0;
};

// A BatchNorm's operands (docs/OPS.md): X [N, C, ...], then [C] each.
struct SyncBatchNormOperands {
  ValueId x = kNone, scale = kNone, bias = kNone, running_mean = kNone, running_var = kNone;
  double epsilon = 1e-5;
};

struct SyncBatchNormValues {
  ValueId y = kNone;  // a node named as the BatchNorm, so its layer keeps its name
  ValueId running_mean = kNone, running_var = kNone;  // the new running statistics
  ValueId stats = kNone;  // S, "<name>/sync/stats", [2C + 1] in X's dtype
};

// The composition for the BatchNorm called `name`; its nodes are named
// "<name>/sync/<what>", but for Y's producer, named `name`. Throws
// GraphError naming the node when X has rank < 2 or is not f32 or f64.
SyncBatchNormValues compose_sync_batch_norm(SyncBatchNormSink& sink, const std::string& name,
                                            const SyncBatchNormOperands& in);

// The composition in a graph, and what the overflow diagnostics need to
// see it as one layer: its nodes other than Y's producer (whose outputs are
// not activations of a layer), and the nodes that read X, scale and bias,
// each as its input 0 (the gradients they give are the layer's dX, dScale
// and dBias, BatchNormGrad's outputs).
struct GraphSyncBatchNorm {
  SyncBatchNormValues values;
  std::vector<NodeId> inner_nodes;
  std::array<NodeId, 3> operand_readers{kNone, kNone, kNone};
};
GraphSyncBatchNorm append_sync_batch_norm(Graph& g, const std::string& name,
                                          const SyncBatchNormOperands& in);

// After autodiff: the total gradient of S (the value S's producer's gradient
// rule read, every contribution summed), kNone when no gradient flows
// through S (X depends on no trained weight).
ValueId sync_stats_gradient(const Graph& g, ValueId stats);

}  // namespace ampx::train
