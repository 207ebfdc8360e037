#include <ampx/ir/op_type.hpp>
#include <ampx/plugin_support.hpp>

#include <array>

namespace ampx {
namespace {

using K = AttrKind;
constexpr AttrSpec kConvAttrs[] = {
    {"strides", K::kInts, false},         {"pads", K::kInts, false},
    {"dilations", K::kInts, false},       {"group", K::kInt, false},
    {"activation", K::kString, false},    {"activation_alpha", K::kFloat, false},
    {"activation_beta", K::kFloat, false}};
constexpr AttrSpec kGemmAttrs[] = {
    {"alpha", K::kFloat, false},          {"beta", K::kFloat, false},
    {"transA", K::kInt, false},           {"transB", K::kInt, false},
    {"activation", K::kString, false},    {"activation_alpha", K::kFloat, false},
    {"activation_beta", K::kFloat, false}};
// The fused epilogue of a contraction (docs/OPS.md, "Fused epilogues").
constexpr AttrSpec kMatMulAttrs[] = {{"activation", K::kString, false},
                                     {"activation_alpha", K::kFloat, false},
                                     {"activation_beta", K::kFloat, false}};
constexpr AttrSpec kEpsAttrs[] = {{"epsilon", K::kFloat, false}};
// BatchNorm's fused activation (docs/OPS.md, "Fused epilogues").
constexpr AttrSpec kBatchNormAttrs[] = {{"epsilon", K::kFloat, false},
                                        {"activation", K::kString, false},
                                        {"activation_alpha", K::kFloat, false},
                                        {"activation_beta", K::kFloat, false}};
constexpr AttrSpec kLayerNormAttrs[] = {{"axis", K::kInt, false}, {"epsilon", K::kFloat, false}};
constexpr AttrSpec kAxisAttrs[] = {{"axis", K::kInt, false}};
constexpr AttrSpec kConcatAttrs[] = {{"axis", K::kInt, true}};
constexpr AttrSpec kClipAttrs[] = {{"min", K::kFloat, false}, {"max", K::kFloat, false}};
constexpr AttrSpec kGeluAttrs[] = {{"approximate", K::kString, false}};
constexpr AttrSpec kMaxPoolAttrs[] = {{"kernel_shape", K::kInts, true},
                                      {"strides", K::kInts, false},
                                      {"pads", K::kInts, false},
                                      {"ceil_mode", K::kInt, false}};
constexpr AttrSpec kAvgPoolAttrs[] = {{"kernel_shape", K::kInts, true},
                                      {"strides", K::kInts, false},
                                      {"pads", K::kInts, false},
                                      {"ceil_mode", K::kInt, false},
                                      {"count_include_pad", K::kInt, false}};
constexpr AttrSpec kReduceAttrs[] = {{"axes", K::kInts, false}, {"keepdims", K::kInt, false}};
constexpr AttrSpec kReshapeAttrs[] = {{"shape", K::kInts, true}};
constexpr AttrSpec kTransposeAttrs[] = {{"perm", K::kInts, false}};
constexpr AttrSpec kSliceAttrs[] = {{"starts", K::kInts, true},
                                    {"ends", K::kInts, true},
                                    {"axes", K::kInts, false},
                                    {"steps", K::kInts, false}};
constexpr AttrSpec kCastAttrs[] = {{"to", K::kInt, true}};
constexpr AttrSpec kDropoutAttrs[] = {{"ratio", K::kFloat, false}};
constexpr AttrSpec kConvTransposeAttrs[] = {{"strides", K::kInts, false},
                                            {"pads", K::kInts, false},
                                            {"dilations", K::kInts, false},
                                            {"output_padding", K::kInts, false},
                                            {"group", K::kInt, false}};
constexpr AttrSpec kAlphaAttrs[] = {{"alpha", K::kFloat, false}};
constexpr AttrSpec kHardSigmoidAttrs[] = {{"alpha", K::kFloat, false}, {"beta", K::kFloat, false}};
constexpr AttrSpec kArgMaxAttrs[] = {
    {"axis", K::kInt, false}, {"keepdims", K::kInt, false}, {"select_last_index", K::kInt, false}};
constexpr AttrSpec kSplitAttrs[] = {{"axis", K::kInt, false}, {"split", K::kInts, true}};
constexpr AttrSpec kExpandAttrs[] = {{"shape", K::kInts, true}};
constexpr AttrSpec kPadAttrs[] = {
    {"pads", K::kInts, true}, {"mode", K::kString, false}, {"value", K::kFloat, false}};
constexpr AttrSpec kResizeAttrs[] = {{"sizes", K::kInts, true},
                                     {"mode", K::kString, false},
                                     {"coordinate_transformation_mode", K::kString, false},
                                     {"nearest_mode", K::kString, false}};

using A = AutoClass;
// Auto classes follow MindSpore 2.x (docs/PLANNER.md): Conv/MatMul/Dense are
// white; norms, Softmax and Sum are black (accumulate in f32); Concat and
// the bias-like Add promote; everything else follows its input.
constexpr std::array<OpSchema, kOpTypeCount> kSchemas{{
    {OpType::kConv2d, "Conv2d", 2, 4, kConvAttrs, A::kWhite},
    {OpType::kMatMul, "MatMul", 2, 3, kMatMulAttrs, A::kWhite},
    {OpType::kGemm, "Gemm", 2, 3, kGemmAttrs, A::kWhite},
    {OpType::kBatchNorm, "BatchNorm", 5, 5, kBatchNormAttrs, A::kBlack},
    {OpType::kLayerNorm, "LayerNorm", 2, 3, kLayerNormAttrs, A::kBlack},
    {OpType::kSoftmax, "Softmax", 1, 1, kAxisAttrs, A::kBlack},
    {OpType::kRelu, "Relu", 1, 1, {}, A::kFollow},
    {OpType::kClip, "Clip", 1, 1, kClipAttrs, A::kFollow},
    {OpType::kGelu, "Gelu", 1, 1, kGeluAttrs, A::kFollow},
    {OpType::kSigmoid, "Sigmoid", 1, 1, {}, A::kFollow},
    {OpType::kTanh, "Tanh", 1, 1, {}, A::kFollow},
    {OpType::kAdd, "Add", 2, 2, {}, A::kPromote},
    {OpType::kSub, "Sub", 2, 2, {}, A::kPromote},
    {OpType::kMul, "Mul", 2, 2, {}, A::kPromote},
    {OpType::kDiv, "Div", 2, 2, {}, A::kPromote},
    {OpType::kMaxPool, "MaxPool", 1, 1, kMaxPoolAttrs, A::kFollow},
    {OpType::kAveragePool, "AveragePool", 1, 1, kAvgPoolAttrs, A::kFollow},
    {OpType::kGlobalAveragePool, "GlobalAveragePool", 1, 1, {}, A::kFollow},
    {OpType::kReduceMean, "ReduceMean", 1, 1, kReduceAttrs, A::kFollow},
    {OpType::kReduceSum, "ReduceSum", 1, 1, kReduceAttrs, A::kBlack},
    {OpType::kReshape, "Reshape", 1, 1, kReshapeAttrs, A::kFollow},
    {OpType::kFlatten, "Flatten", 1, 1, kAxisAttrs, A::kFollow},
    {OpType::kTranspose, "Transpose", 1, 1, kTransposeAttrs, A::kFollow},
    {OpType::kConcat, "Concat", 1, -1, kConcatAttrs, A::kPromote},
    {OpType::kSlice, "Slice", 1, 1, kSliceAttrs, A::kFollow},
    {OpType::kGather, "Gather", 2, 2, kAxisAttrs, A::kFollow},
    {OpType::kCast, "Cast", 1, 1, kCastAttrs, A::kFollow},
    {OpType::kDropout, "Dropout", 1, 1, kDropoutAttrs, A::kFollow},
    // The importer's ops. White: ConvTranspose (MindSpore's white lists hold
    // Conv*(+Transpose)) and PRelu (in MindSpore's auto white list).
    {OpType::kConvTranspose, "ConvTranspose", 2, 3, kConvTransposeAttrs, A::kWhite},
    // Cheap piecewise-linear activations: on no list, follow the input.
    {OpType::kLeakyRelu, "LeakyRelu", 1, 1, kAlphaAttrs, A::kFollow},
    {OpType::kPRelu, "PRelu", 2, 2, {}, A::kWhite},
    {OpType::kHardSigmoid, "HardSigmoid", 1, 1, kHardSigmoidAttrs, A::kFollow},
    {OpType::kHardSwish, "HardSwish", 1, 1, {}, A::kFollow},
    // Black: erf is on TVM's NEVER list; Pow, Exp, Log and Reciprocal on
    // MindSpore's auto black list (and PyTorch autocast's fp32 list): their
    // results lose accuracy or overflow in 16-bit.
    {OpType::kErf, "Erf", 1, 1, {}, A::kBlack},
    {OpType::kPow, "Pow", 2, 2, {}, A::kBlack},
    // Sqrt is on no list (only Rsqrt is): it halves the exponent, follow.
    {OpType::kSqrt, "Sqrt", 1, 1, {}, A::kFollow},
    {OpType::kReciprocal, "Reciprocal", 1, 1, {}, A::kBlack},
    {OpType::kExp, "Exp", 1, 1, {}, A::kBlack},
    {OpType::kLog, "Log", 1, 1, {}, A::kBlack},
    {OpType::kNeg, "Neg", 1, 1, {}, A::kFollow},  // exact in any dtype
    // Kept in f32 like Softmax (MindSpore auto and PyTorch autocast).
    {OpType::kLogSoftmax, "LogSoftmax", 1, 1, kAxisAttrs, A::kBlack},
    // Max selects an element, it accumulates nothing: exact in any dtype and
    // on no list (unlike Sum/Prod), so it follows, as ReduceMean does here.
    {OpType::kReduceMax, "ReduceMax", 1, 1, kReduceAttrs, A::kFollow},
    // Index, comparison and data-movement ops: exact in any dtype, follow.
    {OpType::kArgMax, "ArgMax", 1, 1, kArgMaxAttrs, A::kFollow},
    {OpType::kSplit, "Split", 1, 1, kSplitAttrs, A::kFollow},
    {OpType::kExpand, "Expand", 1, 1, kExpandAttrs, A::kFollow},
    {OpType::kPad, "Pad", 1, 1, kPadAttrs, A::kFollow},
    // Interpolates with weights in [0, 1]: no growth, follows (TVM FOLLOW).
    {OpType::kResize, "Resize", 1, 1, kResizeAttrs, A::kFollow},
    {OpType::kWhere, "Where", 3, 3, {}, A::kFollow},
    {OpType::kEqual, "Equal", 2, 2, {}, A::kFollow},
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
    for (const auto& s : kSchemas)
      t[static_cast<size_t>(s.op)] = plugin_support::is_data_movement(s.name);
    return t;
  }();
  return table.at(static_cast<size_t>(op));
}

std::optional<OpType> parse_op(std::string_view name) {
  for (const auto& s : kSchemas)
    if (s.name == name) return s.op;
  return std::nullopt;
}

}  // namespace ampx
