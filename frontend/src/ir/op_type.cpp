#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/op_type.hpp>
#include <ampx/opset/catalogue.hpp>
#include <ampx/opset/multi_update.hpp>

#include <array>

namespace ampx {
namespace {

using A = AutoClass;
// Auto classes follow MindSpore 2.x (docs/PLANNER.md): Conv/MatMul/Dense are
// white; norms, Softmax and Sum are black (accumulate in f32); Concat and
// the bias-like Add promote; everything else follows its input.
constexpr std::array<OpSchema, kOpTypeCount> kSchemas{{
    {OpType::kConv2d, "Conv2d", A::kWhite},
    {OpType::kMatMul, "MatMul", A::kWhite},
    {OpType::kGemm, "Gemm", A::kWhite},
    {OpType::kBatchNorm, "BatchNorm", A::kBlack},
    {OpType::kLayerNorm, "LayerNorm", A::kBlack},
    {OpType::kSoftmax, "Softmax", A::kBlack},
    {OpType::kRelu, "Relu", A::kFollow},
    {OpType::kClip, "Clip", A::kFollow},
    {OpType::kGelu, "Gelu", A::kFollow},
    {OpType::kSigmoid, "Sigmoid", A::kFollow},
    {OpType::kTanh, "Tanh", A::kFollow},
    {OpType::kAdd, "Add", A::kPromote},
    {OpType::kSub, "Sub", A::kPromote},
    {OpType::kMul, "Mul", A::kPromote},
    {OpType::kDiv, "Div", A::kPromote},
    {OpType::kMaxPool, "MaxPool", A::kFollow},
    {OpType::kAveragePool, "AveragePool", A::kFollow},
    {OpType::kGlobalAveragePool, "GlobalAveragePool", A::kFollow},
    {OpType::kReduceMean, "ReduceMean", A::kFollow},
    {OpType::kReduceSum, "ReduceSum", A::kBlack},
    {OpType::kReshape, "Reshape", A::kFollow},
    {OpType::kFlatten, "Flatten", A::kFollow},
    {OpType::kTranspose, "Transpose", A::kFollow},
    {OpType::kConcat, "Concat", A::kPromote},
    {OpType::kSlice, "Slice", A::kFollow},
    {OpType::kGather, "Gather", A::kFollow},
    {OpType::kCast, "Cast", A::kFollow},
    {OpType::kDropout, "Dropout", A::kFollow},
    // The importer's ops. White: ConvTranspose (MindSpore's white lists hold
    // Conv*(+Transpose)) and PRelu (in MindSpore's auto white list).
    {OpType::kConvTranspose, "ConvTranspose", A::kWhite},
    // Cheap piecewise-linear activations: on no list, follow the input.
    {OpType::kLeakyRelu, "LeakyRelu", A::kFollow},
    {OpType::kPRelu, "PRelu", A::kWhite},
    {OpType::kHardSigmoid, "HardSigmoid", A::kFollow},
    {OpType::kHardSwish, "HardSwish", A::kFollow},
    // Black: erf is on TVM's NEVER list; Pow, Exp, Log and Reciprocal on
    // MindSpore's auto black list (and PyTorch autocast's fp32 list): their
    // results lose accuracy or overflow in 16-bit.
    {OpType::kErf, "Erf", A::kBlack},
    {OpType::kPow, "Pow", A::kBlack},
    // Sqrt is on no list (only Rsqrt is): it halves the exponent, follow.
    {OpType::kSqrt, "Sqrt", A::kFollow},
    {OpType::kReciprocal, "Reciprocal", A::kBlack},
    {OpType::kExp, "Exp", A::kBlack},
    {OpType::kLog, "Log", A::kBlack},
    {OpType::kNeg, "Neg", A::kFollow},  // exact in any dtype
    // Kept in f32 like Softmax (MindSpore auto and PyTorch autocast).
    {OpType::kLogSoftmax, "LogSoftmax", A::kBlack},
    // Max selects an element, it accumulates nothing: exact in any dtype and
    // on no list (unlike Sum/Prod), so it follows, as ReduceMean does here.
    {OpType::kReduceMax, "ReduceMax", A::kFollow},
    // Index, comparison and data-movement ops: exact in any dtype, follow.
    {OpType::kArgMax, "ArgMax", A::kFollow},
    {OpType::kSplit, "Split", A::kFollow},
    {OpType::kExpand, "Expand", A::kFollow},
    {OpType::kPad, "Pad", A::kFollow},
    // Interpolates with weights in [0, 1]: no growth, follows (TVM FOLLOW).
    {OpType::kResize, "Resize", A::kFollow},
    {OpType::kWhere, "Where", A::kFollow},
    {OpType::kEqual, "Equal", A::kFollow},
    // Rounding, |x|, comparisons and logic are exact in any dtype: follow.
    {OpType::kFloor, "Floor", A::kFollow},
    {OpType::kCeil, "Ceil", A::kFollow},
    {OpType::kRound, "Round", A::kFollow},
    {OpType::kAbs, "Abs", A::kFollow},
    // Softplus is on PyTorch autocast's fp32 list (its exp overflows in
    // 16-bit); Mish is bounded by |x| (on no list): follow.
    {OpType::kSoftplus, "Softplus", A::kBlack},
    {OpType::kMish, "Mish", A::kFollow},
    {OpType::kLess, "Less", A::kFollow},
    {OpType::kGreater, "Greater", A::kFollow},
    {OpType::kLessOrEqual, "LessOrEqual", A::kFollow},
    {OpType::kGreaterOrEqual, "GreaterOrEqual", A::kFollow},
    {OpType::kNot, "Not", A::kFollow},
    {OpType::kAnd, "And", A::kFollow},
    {OpType::kOr, "Or", A::kFollow},
    // The variadic ops combine several float inputs, as Add does: promote.
    {OpType::kMin, "Min", A::kPromote},
    {OpType::kMax, "Max", A::kPromote},
    {OpType::kSum, "Sum", A::kPromote},
    {OpType::kMean, "Mean", A::kPromote},
    // ReduceMin selects, as ReduceMax: follow. Products, squares, norms and
    // log-sum-exp accumulate or overflow (PyTorch autocast's fp32 list:
    // prod, norm, logsumexp, sum): black.
    {OpType::kReduceMin, "ReduceMin", A::kFollow},
    {OpType::kReduceProd, "ReduceProd", A::kBlack},
    {OpType::kReduceL2, "ReduceL2", A::kBlack},
    {OpType::kReduceSumSquare, "ReduceSumSquare", A::kBlack},
    {OpType::kReduceLogSumExp, "ReduceLogSumExp", A::kBlack},
    {OpType::kArgMin, "ArgMin", A::kFollow},
    // The remainder is exact in any float format; the index ops select or
    // move values: follow. A running sum accumulates (PyTorch autocast's
    // fp32 list has cumsum): black.
    {OpType::kMod, "Mod", A::kFollow},
    {OpType::kCumSum, "CumSum", A::kBlack},
    {OpType::kTopK, "TopK", A::kFollow},
    {OpType::kGatherElements, "GatherElements", A::kFollow},
    {OpType::kGatherND, "GatherND", A::kFollow},
    {OpType::kScatterND, "ScatterND", A::kFollow},
    // The recurrent ops are GEMMs at heart: PyTorch autocast's lower-
    // precision list has lstm/gru/rnn cells; white.
    {OpType::kLSTM, "LSTM", A::kWhite},
    {OpType::kGRU, "GRU", A::kWhite},
    {OpType::kRNN, "RNN", A::kWhite},
    // Training ops. A backward node's intent follows its forward node
    // (docs/PLANNER.md, "Training"); these classes apply when one is
    // planned on its own. Norms, Softmax and the loss stay black as their
    // forward ops; the weight gradient of a convolution is white as the
    // convolution; the optimizer updates are black (and f32 at every level).
    {OpType::kReluGrad, "ReluGrad", A::kFollow},
    {OpType::kSigmoidGrad, "SigmoidGrad", A::kFollow},
    {OpType::kTanhGrad, "TanhGrad", A::kFollow},
    {OpType::kGeluGrad, "GeluGrad", A::kFollow},
    {OpType::kClipGrad, "ClipGrad", A::kFollow},
    {OpType::kSoftmaxGrad, "SoftmaxGrad", A::kBlack},
    {OpType::kLayerNormGrad, "LayerNormGrad", A::kBlack},
    {OpType::kBatchNormTraining, "BatchNormTraining", A::kBlack},
    {OpType::kBatchNormGrad, "BatchNormGrad", A::kBlack},
    {OpType::kConv2dGradWeight, "Conv2dGradWeight", A::kWhite},
    {OpType::kMaxPoolGrad, "MaxPoolGrad", A::kFollow},
    {OpType::kAveragePoolGrad, "AveragePoolGrad", A::kFollow},
    {OpType::kSliceGrad, "SliceGrad", A::kFollow},
    {OpType::kGatherGrad, "GatherGrad", A::kFollow},
    {OpType::kDropoutTraining, "DropoutTraining", A::kFollow},
    {OpType::kSoftmaxCrossEntropy, "SoftmaxCrossEntropy", A::kBlack},
    {OpType::kSoftmaxCrossEntropyGrad, "SoftmaxCrossEntropyGrad", A::kBlack},
    {OpType::kSgdUpdate, "SgdUpdate", A::kBlack},
    {OpType::kAdamUpdate, "AdamUpdate", A::kBlack},
    {OpType::kUpdateGuard, "UpdateGuard", A::kBlack},
    {OpType::kTensorStats, "TensorStats", A::kBlack},
    {OpType::kMultiSgdUpdate, "MultiSgdUpdate", A::kBlack},
    {OpType::kMultiAdamUpdate, "MultiAdamUpdate", A::kBlack},
}};

constexpr bool schemas_in_enum_order() {
  for (int i = 0; i < kOpTypeCount; ++i)
    if (static_cast<int>(kSchemas[static_cast<size_t>(i)].op) != i) return false;
  return true;
}
static_assert(schemas_in_enum_order(), "kSchemas must be indexed by OpType");

}  // namespace

const OpSchema& op_schema(OpType op) {
  return kSchemas.at(static_cast<size_t>(op));
}
std::string_view op_name(OpType op) {
  return op_schema(op).name;
}
std::span<const OpSchema> all_op_schemas() {
  return kSchemas;
}
bool is_data_movement(OpType op) {
  static const auto table = [] {
    std::array<bool, kOpTypeCount> t{};
    for (const auto& s : kSchemas) t[static_cast<size_t>(s.op)] = opset::is_data_movement(s.name);
    return t;
  }();
  return table.at(static_cast<size_t>(op));
}

std::optional<OpType> parse_op(std::string_view name) {
  for (const auto& s : kSchemas)
    if (s.name == name) return s.op;
  return std::nullopt;
}

int in_place_input(OpType op, size_t output, size_t num_inputs, const AttrMap& attrs) {
  if (op == OpType::kSgdUpdate) return output == 0 ? 0 : output == 1 ? 3 : -1;
  if (op == OpType::kAdamUpdate)
    return output == 0 ? 0 : output <= 2 ? static_cast<int>(output) + 1 : -1;
  if (op == OpType::kMultiSgdUpdate || op == OpType::kMultiAdamUpdate) {
    const auto l = opset::multi_update_layout(op_name(op), num_inputs,
                                              attr_float(attrs, "momentum", 0.0) > 0.0,
                                              attr_ints(attrs, "copies", {}).size());
    return l ? l->in_place_input(output) : -1;
  }
  return -1;
}

}  // namespace ampx
