#include "ampx/opset/catalogue.hpp"

namespace ampx::opset {
namespace {

constexpr AttrDef kConvAttrs[] = {
    {"strides", AMPX_ATTR_INTS, false},         {"pads", AMPX_ATTR_INTS, false},
    {"dilations", AMPX_ATTR_INTS, false},       {"group", AMPX_ATTR_INT, false},
    {"activation", AMPX_ATTR_STRING, false},    {"activation_alpha", AMPX_ATTR_FLOAT, false},
    {"activation_beta", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kGemmAttrs[] = {
    {"alpha", AMPX_ATTR_FLOAT, false},          {"beta", AMPX_ATTR_FLOAT, false},
    {"transA", AMPX_ATTR_INT, false},           {"transB", AMPX_ATTR_INT, false},
    {"activation", AMPX_ATTR_STRING, false},    {"activation_alpha", AMPX_ATTR_FLOAT, false},
    {"activation_beta", AMPX_ATTR_FLOAT, false}};
// The fused epilogue of a contraction (docs/OPS.md, "Fused epilogues").
constexpr AttrDef kMatMulAttrs[] = {{"activation", AMPX_ATTR_STRING, false},
                                    {"activation_alpha", AMPX_ATTR_FLOAT, false},
                                    {"activation_beta", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kEpsAttrs[] = {{"epsilon", AMPX_ATTR_FLOAT, false}};
// BatchNorm's fused activation (docs/OPS.md, "Fused epilogues").
constexpr AttrDef kBatchNormAttrs[] = {{"epsilon", AMPX_ATTR_FLOAT, false},
                                       {"activation", AMPX_ATTR_STRING, false},
                                       {"activation_alpha", AMPX_ATTR_FLOAT, false},
                                       {"activation_beta", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kLayerNormAttrs[] = {{"axis", AMPX_ATTR_INT, false},
                                       {"epsilon", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kAxisAttrs[] = {{"axis", AMPX_ATTR_INT, false}};
constexpr AttrDef kConcatAttrs[] = {{"axis", AMPX_ATTR_INT, true}};
constexpr AttrDef kClipAttrs[] = {{"min", AMPX_ATTR_FLOAT, false}, {"max", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kGeluAttrs[] = {{"approximate", AMPX_ATTR_STRING, false}};
constexpr AttrDef kMaxPoolAttrs[] = {{"kernel_shape", AMPX_ATTR_INTS, true},
                                     {"strides", AMPX_ATTR_INTS, false},
                                     {"pads", AMPX_ATTR_INTS, false},
                                     {"ceil_mode", AMPX_ATTR_INT, false}};
constexpr AttrDef kAvgPoolAttrs[] = {{"kernel_shape", AMPX_ATTR_INTS, true},
                                     {"strides", AMPX_ATTR_INTS, false},
                                     {"pads", AMPX_ATTR_INTS, false},
                                     {"ceil_mode", AMPX_ATTR_INT, false},
                                     {"count_include_pad", AMPX_ATTR_INT, false}};
constexpr AttrDef kReduceAttrs[] = {{"axes", AMPX_ATTR_INTS, false},
                                    {"keepdims", AMPX_ATTR_INT, false}};
constexpr AttrDef kReshapeAttrs[] = {{"shape", AMPX_ATTR_INTS, true}};
constexpr AttrDef kTransposeAttrs[] = {{"perm", AMPX_ATTR_INTS, false}};
constexpr AttrDef kSliceAttrs[] = {{"starts", AMPX_ATTR_INTS, true},
                                   {"ends", AMPX_ATTR_INTS, true},
                                   {"axes", AMPX_ATTR_INTS, false},
                                   {"steps", AMPX_ATTR_INTS, false}};
constexpr AttrDef kCastAttrs[] = {{"to", AMPX_ATTR_INT, true}};
constexpr AttrDef kDropoutAttrs[] = {{"ratio", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kConvTransposeAttrs[] = {{"strides", AMPX_ATTR_INTS, false},
                                           {"pads", AMPX_ATTR_INTS, false},
                                           {"dilations", AMPX_ATTR_INTS, false},
                                           {"output_padding", AMPX_ATTR_INTS, false},
                                           {"group", AMPX_ATTR_INT, false}};
constexpr AttrDef kAlphaAttrs[] = {{"alpha", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kHardSigmoidAttrs[] = {{"alpha", AMPX_ATTR_FLOAT, false},
                                         {"beta", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kModAttrs[] = {{"fmod", AMPX_ATTR_INT, false}};
constexpr AttrDef kCumSumAttrs[] = {{"axis", AMPX_ATTR_INT, true},
                                    {"exclusive", AMPX_ATTR_INT, false},
                                    {"reverse", AMPX_ATTR_INT, false}};
constexpr AttrDef kTopKAttrs[] = {{"k", AMPX_ATTR_INT, true},
                                  {"axis", AMPX_ATTR_INT, false},
                                  {"largest", AMPX_ATTR_INT, false},
                                  {"sorted", AMPX_ATTR_INT, false}};
constexpr AttrDef kGatherNDAttrs[] = {{"batch_dims", AMPX_ATTR_INT, false}};
constexpr AttrDef kScatterNDAttrs[] = {{"reduction", AMPX_ATTR_STRING, false}};
constexpr AttrDef kArgMaxAttrs[] = {{"axis", AMPX_ATTR_INT, false},
                                    {"keepdims", AMPX_ATTR_INT, false},
                                    {"select_last_index", AMPX_ATTR_INT, false}};
constexpr AttrDef kSplitAttrs[] = {{"axis", AMPX_ATTR_INT, false}, {"split", AMPX_ATTR_INTS, true}};
constexpr AttrDef kExpandAttrs[] = {{"shape", AMPX_ATTR_INTS, true}};
constexpr AttrDef kPadAttrs[] = {{"pads", AMPX_ATTR_INTS, true},
                                 {"mode", AMPX_ATTR_STRING, false},
                                 {"value", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kResizeAttrs[] = {{"sizes", AMPX_ATTR_INTS, true},
                                    {"mode", AMPX_ATTR_STRING, false},
                                    {"coordinate_transformation_mode", AMPX_ATTR_STRING, false},
                                    {"nearest_mode", AMPX_ATTR_STRING, false}};

// Training ops (docs/OPS.md, "Training ops").
constexpr AttrDef kConvGradWeightAttrs[] = {
    {"kernel_shape", AMPX_ATTR_INTS, true}, {"strides", AMPX_ATTR_INTS, false},
    {"pads", AMPX_ATTR_INTS, false},        {"dilations", AMPX_ATTR_INTS, false},
    {"group", AMPX_ATTR_INT, false},        {"bias_gradient", AMPX_ATTR_INT, false}};
constexpr AttrDef kAvgPoolGradAttrs[] = {{"kernel_shape", AMPX_ATTR_INTS, true},
                                         {"strides", AMPX_ATTR_INTS, false},
                                         {"pads", AMPX_ATTR_INTS, false},
                                         {"ceil_mode", AMPX_ATTR_INT, false},
                                         {"count_include_pad", AMPX_ATTR_INT, false},
                                         {"input_shape", AMPX_ATTR_INTS, true}};
constexpr AttrDef kSliceGradAttrs[] = {{"starts", AMPX_ATTR_INTS, true},
                                       {"ends", AMPX_ATTR_INTS, true},
                                       {"axes", AMPX_ATTR_INTS, false},
                                       {"steps", AMPX_ATTR_INTS, false},
                                       {"input_shape", AMPX_ATTR_INTS, true}};
constexpr AttrDef kGatherGradAttrs[] = {{"axis", AMPX_ATTR_INT, false},
                                        {"data_shape", AMPX_ATTR_INTS, true}};
constexpr AttrDef kBatchNormTrainingAttrs[] = {{"epsilon", AMPX_ATTR_FLOAT, false},
                                               {"momentum", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kSgdAttrs[] = {{"momentum", AMPX_ATTR_FLOAT, false},
                                 {"nesterov", AMPX_ATTR_INT, false},
                                 {"weight_decay", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kUpdateGuardAttrs[] = {{"clip_norm", AMPX_ATTR_FLOAT, false},
                                         {"skip_nonfinite", AMPX_ATTR_INT, false}};
constexpr AttrDef kTensorStatsAttrs[] = {{"tiny", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kAdamAttrs[] = {{"beta1", AMPX_ATTR_FLOAT, false},
                                  {"beta2", AMPX_ATTR_FLOAT, false},
                                  {"epsilon", AMPX_ATTR_FLOAT, false},
                                  {"weight_decay", AMPX_ATTR_FLOAT, false},
                                  {"decoupled", AMPX_ATTR_INT, false}};

// The recurrent ops (ONNX's LSTM, GRU and RNN in layout 0): `activations`
// is ONNX's list joined by commas ("Sigmoid,Tanh,Tanh"), one entry per
// function and direction.
constexpr AttrDef kRecurrentAttrs[] = {
    {"hidden_size", AMPX_ATTR_INT, true},         {"direction", AMPX_ATTR_STRING, false},
    {"activations", AMPX_ATTR_STRING, false},     {"activation_alpha", AMPX_ATTR_FLOATS, false},
    {"activation_beta", AMPX_ATTR_FLOATS, false}, {"clip", AMPX_ATTR_FLOAT, false},
    {"input_forget", AMPX_ATTR_INT, false},       {"linear_before_reset", AMPX_ATTR_INT, false}};

using R = DtypeRule;
constexpr OpDef kOps[] = {
    {"Conv2d", 2, 4, kConvAttrs, R::kCompute},
    {"MatMul", 2, 3, kMatMulAttrs, R::kCompute},
    {"Gemm", 2, 3, kGemmAttrs, R::kCompute},
    {"BatchNorm", 5, 5, kBatchNormAttrs, R::kCompute},
    {"LayerNorm", 2, 3, kLayerNormAttrs, R::kCompute},
    {"Softmax", 1, 1, kAxisAttrs, R::kCompute},
    {"Relu", 1, 1, {}, R::kElementwise},
    {"Clip", 1, 1, kClipAttrs, R::kElementwise},
    {"Gelu", 1, 1, kGeluAttrs, R::kElementwise},
    {"Sigmoid", 1, 1, {}, R::kElementwise},
    {"Tanh", 1, 1, {}, R::kElementwise},
    {"Add", 2, 2, {}, R::kInteger},
    {"Sub", 2, 2, {}, R::kInteger},
    {"Mul", 2, 2, {}, R::kInteger},
    {"Div", 2, 2, {}, R::kInteger},
    {"MaxPool", 1, 1, kMaxPoolAttrs, R::kCompute},
    {"AveragePool", 1, 1, kAvgPoolAttrs, R::kCompute},
    {"GlobalAveragePool", 1, 1, {}, R::kCompute},
    {"ReduceMean", 1, 1, kReduceAttrs, R::kCompute},
    {"ReduceSum", 1, 1, kReduceAttrs, R::kCompute},
    {"Reshape", 1, 1, kReshapeAttrs, R::kData},
    {"Flatten", 1, 1, kAxisAttrs, R::kData},
    {"Transpose", 1, 1, kTransposeAttrs, R::kData},
    {"Concat", 1, -1, kConcatAttrs, R::kData},
    {"Slice", 1, 1, kSliceAttrs, R::kData},
    {"Gather", 2, 2, kAxisAttrs, R::kData},
    {"Cast", 1, 1, kCastAttrs, R::kCast},
    {"Dropout", 1, 1, kDropoutAttrs, R::kData},
    {"ConvTranspose", 2, 3, kConvTransposeAttrs, R::kCompute},
    {"LeakyRelu", 1, 1, kAlphaAttrs, R::kElementwise},
    {"PRelu", 2, 2, {}, R::kElementwise},
    {"HardSigmoid", 1, 1, kHardSigmoidAttrs, R::kElementwise},
    {"HardSwish", 1, 1, {}, R::kElementwise},
    {"Erf", 1, 1, {}, R::kElementwise},
    {"Pow", 2, 2, {}, R::kElementwise},
    {"Sqrt", 1, 1, {}, R::kElementwise},
    {"Reciprocal", 1, 1, {}, R::kElementwise},
    {"Exp", 1, 1, {}, R::kElementwise},
    {"Log", 1, 1, {}, R::kElementwise},
    {"Neg", 1, 1, {}, R::kInteger},
    {"LogSoftmax", 1, 1, kAxisAttrs, R::kCompute},
    {"ReduceMax", 1, 1, kReduceAttrs, R::kCompute},
    {"ArgMax", 1, 1, kArgMaxAttrs, R::kCompute},
    {"Split", 1, 1, kSplitAttrs, R::kData},
    {"Expand", 1, 1, kExpandAttrs, R::kData},
    {"Pad", 1, 1, kPadAttrs, R::kData},
    {"Resize", 1, 1, kResizeAttrs, R::kCompute},
    {"Where", 3, 3, {}, R::kInteger},
    {"Equal", 2, 2, {}, R::kInteger},
    // More of what real ONNX models use (docs/OPS.md): rounding, absolute
    // value, smooth activations, comparisons, logic, the variadic
    // elementwise ops, reductions, ArgMin, indexing and sorting, and the
    // recurrent ops. Floor to
    // RNN are the reference-only ops (is_reference_only): keep them
    // together.
    {"Floor", 1, 1, {}, R::kElementwise},
    {"Ceil", 1, 1, {}, R::kElementwise},
    {"Round", 1, 1, {}, R::kElementwise},
    {"Abs", 1, 1, {}, R::kInteger},
    {"Softplus", 1, 1, {}, R::kElementwise},
    {"Mish", 1, 1, {}, R::kElementwise},
    {"Less", 2, 2, {}, R::kInteger},
    {"Greater", 2, 2, {}, R::kInteger},
    {"LessOrEqual", 2, 2, {}, R::kInteger},
    {"GreaterOrEqual", 2, 2, {}, R::kInteger},
    {"Not", 1, 1, {}, R::kInteger},
    {"And", 2, 2, {}, R::kInteger},
    {"Or", 2, 2, {}, R::kInteger},
    {"Min", 1, -1, {}, R::kInteger},
    {"Max", 1, -1, {}, R::kInteger},
    {"Sum", 1, -1, {}, R::kElementwise},
    {"Mean", 1, -1, {}, R::kElementwise},
    {"ReduceMin", 1, 1, kReduceAttrs, R::kCompute},
    {"ReduceProd", 1, 1, kReduceAttrs, R::kCompute},
    {"ReduceL2", 1, 1, kReduceAttrs, R::kCompute},
    {"ReduceSumSquare", 1, 1, kReduceAttrs, R::kCompute},
    {"ReduceLogSumExp", 1, 1, kReduceAttrs, R::kCompute},
    {"ArgMin", 1, 1, kArgMaxAttrs, R::kCompute},
    // Indexing, sorting and running sums (infer_index.cpp). Input 1 of the
    // Gather*/ScatterND ops holds i64 or i32 indices; TopK's output 1 is i64.
    {"Mod", 2, 2, kModAttrs, R::kInteger},
    {"CumSum", 1, 1, kCumSumAttrs, R::kInteger},
    {"TopK", 1, 1, kTopKAttrs, R::kInteger},
    {"GatherElements", 2, 2, kAxisAttrs, R::kData},
    {"GatherND", 2, 2, kGatherNDAttrs, R::kData},
    {"ScatterND", 3, 3, kScatterNDAttrs, R::kData},
    // X, W, R, B, initial_h[, initial_c, P][, sequence_lens] (docs/OPS.md).
    {"LSTM", 7, 8, kRecurrentAttrs, R::kCompute},
    {"GRU", 5, 6, kRecurrentAttrs, R::kCompute},
    {"RNN", 5, 6, kRecurrentAttrs, R::kCompute},
    // Training ops: backward kernels, losses, optimizer updates.
    {"ReluGrad", 2, 2, {}, R::kCompute},
    {"SigmoidGrad", 2, 2, {}, R::kCompute},
    {"TanhGrad", 2, 2, {}, R::kCompute},
    {"GeluGrad", 2, 2, kGeluAttrs, R::kCompute},
    {"ClipGrad", 2, 2, kClipAttrs, R::kCompute},
    {"SoftmaxGrad", 2, 2, kAxisAttrs, R::kCompute},
    {"LayerNormGrad", 3, 3, kLayerNormAttrs, R::kCompute},
    {"BatchNormTraining", 5, 5, kBatchNormTrainingAttrs, R::kCompute},
    {"BatchNormGrad", 5, 5, {}, R::kCompute},
    {"Conv2dGradWeight", 2, 2, kConvGradWeightAttrs, R::kCompute},
    {"MaxPoolGrad", 2, 2, kMaxPoolAttrs, R::kCompute},
    {"AveragePoolGrad", 1, 1, kAvgPoolGradAttrs, R::kCompute},
    {"SliceGrad", 1, 1, kSliceGradAttrs, R::kCompute},
    {"GatherGrad", 2, 2, kGatherGradAttrs, R::kCompute},
    {"DropoutTraining", 2, 2, kDropoutAttrs, R::kCompute},
    {"SoftmaxCrossEntropy", 2, 2, {}, R::kCompute},
    {"SoftmaxCrossEntropyGrad", 3, 3, {}, R::kCompute},
    {"SgdUpdate", 3, 4, kSgdAttrs, R::kCompute},
    {"AdamUpdate", 5, 5, kAdamAttrs, R::kCompute},
    {"UpdateGuard", 2, -1, kUpdateGuardAttrs, R::kCompute},
    {"TensorStats", 1, -1, kTensorStatsAttrs, R::kCast},
};

}  // namespace

const OpDef* find_op(std::string_view name) noexcept {
  for (const OpDef& op : kOps)
    if (op.name == name) return &op;
  return nullptr;
}

std::span<const OpDef> all_ops() noexcept {
  return kOps;
}

bool is_reference_only(std::string_view op_type) noexcept {
  const OpDef* op = find_op(op_type);
  const OpDef* first = find_op("Floor");
  const OpDef* last = find_op("RNN");
  return op && first && last && op >= first && op <= last;
}

bool is_training_op(std::string_view op_type) noexcept {
  // The table lists the training ops last, from ReluGrad on.
  const OpDef* op = find_op(op_type);
  const OpDef* first = find_op("ReluGrad");
  return op && first && op >= first;
}

}  // namespace ampx::opset
