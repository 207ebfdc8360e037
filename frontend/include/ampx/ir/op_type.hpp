// The IR's op types: the op set of docs/OPS.md (whose arity, attributes
// and rules live in opset/catalogue.hpp) and each op's default class for
// MindSpore's `auto` amp level.
#pragma once

#include <ampx/ir/attribute.hpp>

#include <optional>
#include <span>
#include <string_view>

namespace ampx {

enum class OpType {
  kConv2d,
  kMatMul,
  kGemm,
  kBatchNorm,
  kLayerNorm,
  kSoftmax,
  kRelu,
  kClip,
  kGelu,
  kSigmoid,
  kTanh,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaxPool,
  kAveragePool,
  kGlobalAveragePool,
  kReduceMean,
  kReduceSum,
  kReshape,
  kFlatten,
  kTranspose,
  kConcat,
  kSlice,
  kGather,
  kCast,
  kDropout,
  // Added for the ONNX importer (opset 17 semantics, docs/OPS.md).
  kConvTranspose,
  kLeakyRelu,
  kPRelu,
  kHardSigmoid,
  kHardSwish,
  kErf,
  kPow,
  kSqrt,
  kReciprocal,
  kExp,
  kLog,
  kNeg,
  kLogSoftmax,
  kReduceMax,
  kArgMax,
  kSplit,
  kExpand,
  kPad,
  kResize,
  kWhere,
  kEqual,
  // More of what real ONNX models use (docs/OPS.md).
  kFloor,
  kCeil,
  kRound,
  kAbs,
  kSoftplus,
  kMish,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,
  kNot,
  kAnd,
  kOr,
  kMin,
  kMax,
  kSum,
  kMean,
  kReduceMin,
  kReduceProd,
  kReduceL2,
  kReduceSumSquare,
  kReduceLogSumExp,
  kArgMin,
  kMod,
  kCumSum,
  kTopK,
  kGatherElements,
  kGatherND,
  kScatterND,
  kLSTM,
  kGRU,
  kRNN,
  // Training ops (docs/OPS.md, "Training ops"): backward kernels, the loss,
  // the optimizer updates.
  kReluGrad,
  kSigmoidGrad,
  kTanhGrad,
  kGeluGrad,
  kClipGrad,
  kSoftmaxGrad,
  kLayerNormGrad,
  kBatchNormTraining,
  kBatchNormGrad,
  kConv2dGradWeight,
  kMaxPoolGrad,
  kAveragePoolGrad,
  kSliceGrad,
  kGatherGrad,
  kDropoutTraining,
  kSoftmaxCrossEntropy,
  kSoftmaxCrossEntropyGrad,
  kSgdUpdate,
  kAdamUpdate,
  kUpdateGuard,
  kTensorStats,
  // The fused optimizer pass (opset/multi_update.hpp): never in a graph the
  // planner sees, made from the per-tensor updates after planning
  // (train/fused_update.hpp).
  kMultiSgdUpdate,
  kMultiAdamUpdate,
};
inline constexpr int kOpTypeCount = static_cast<int>(OpType::kMultiAdamUpdate) + 1;

// How MindSpore 2.x's `auto` level treats an op (docs/PLANNER.md).
enum class AutoClass {
  kWhite,    // always 16-bit
  kBlack,    // always f32
  kPromote,  // widest float input dtype
  kFollow,   // dtype of its first float input
};

// The IR's side of an op. Its arity, attributes and rules live in the op
// set's catalogue (opset/catalogue.hpp), found by name.
struct OpSchema {
  OpType op;
  std::string_view name;  // as in docs/OPS.md and on the C ABI
  AutoClass auto_class;
};

const OpSchema& op_schema(OpType op);
std::string_view op_name(OpType op);
std::optional<OpType> parse_op(std::string_view name);
std::span<const OpSchema> all_op_schemas();
// opset::is_data_movement() of the op's name (the one definition),
// looked up in a table built once: the planner asks it for every node.
bool is_data_movement(OpType op);
// The optimizer updates: they read and write the f32 master weights and
// optimizer state, and run in f32 at every amp level.
inline bool is_optimizer_update(OpType op) {
  return op == OpType::kSgdUpdate || op == OpType::kAdamUpdate || op == OpType::kMultiSgdUpdate ||
         op == OpType::kMultiAdamUpdate;
}
// The ops that read the f32 gradients the updates read and decide the
// updates' hyper (UpdateGuard: finite check, clipping): f32 at every level
// like the updates, whose inputs they share.
inline bool is_master_weight_op(OpType op) {
  return is_optimizer_update(op) || op == OpType::kUpdateGuard;
}
// The input whose buffer an update's output may be written in (docs/OPS.md,
// "In place"): W -> W', M -> M', V -> V'. -1 for other ops and outputs.
// The fused updates' layout depends on their operand count and attributes.
int in_place_input(OpType op, size_t output, size_t num_inputs, const AttrMap& attrs);

}  // namespace ampx
