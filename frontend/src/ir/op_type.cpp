#include <ampx/ir/op_type.hpp>

#include <array>

namespace ampx {
namespace {

using K = AttrKind;
constexpr AttrSpec kConvAttrs[] = {{"strides", K::kInts, false},
                                   {"pads", K::kInts, false},
                                   {"dilations", K::kInts, false},
                                   {"group", K::kInt, false},
                                   {"activation", K::kString, false}};
constexpr AttrSpec kGemmAttrs[] = {{"alpha", K::kFloat, false},
                                   {"beta", K::kFloat, false},
                                   {"transA", K::kInt, false},
                                   {"transB", K::kInt, false},
                                   {"activation", K::kString, false}};
// The fused epilogue of a contraction (docs/OPS.md, "Fused epilogues").
constexpr AttrSpec kMatMulAttrs[] = {{"activation", K::kString, false}};
constexpr AttrSpec kEpsAttrs[] = {{"epsilon", K::kFloat, false}};
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

using A = AutoClass;
// Auto classes follow MindSpore 2.x (amp-semantics.md): Conv/MatMul/Dense are
// white; norms, Softmax and Sum are black (accumulate in f32); Concat and
// the bias-like Add promote; everything else follows its input.
constexpr std::array<OpSchema, kOpTypeCount> kSchemas{{
    {OpType::kConv2d, "Conv2d", 2, 3, kConvAttrs, A::kWhite},
    {OpType::kMatMul, "MatMul", 2, 3, kMatMulAttrs, A::kWhite},
    {OpType::kGemm, "Gemm", 2, 3, kGemmAttrs, A::kWhite},
    {OpType::kBatchNorm, "BatchNorm", 5, 5, kEpsAttrs, A::kBlack},
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

std::optional<OpType> parse_op(std::string_view name) {
  for (const auto& s : kSchemas)
    if (s.name == name) return s.op;
  return std::nullopt;
}

}  // namespace ampx
