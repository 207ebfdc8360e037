#include "ampx/opset/catalogue.hpp"

#include <array>
#include <iterator>

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
// RMSNorm: LayerNorm's attributes; its statistics are always f32 or wider
// (ONNX's stash_type 1, the only one ampx imports).
constexpr AttrDef kRmsNormAttrs[] = {{"axis", AMPX_ATTR_INT, false},
                                     {"epsilon", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kAxisAttrs[] = {{"axis", AMPX_ATTR_INT, false}};
constexpr AttrDef kConcatAttrs[] = {{"axis", AMPX_ATTR_INT, true}};
constexpr AttrDef kClipAttrs[] = {{"min", AMPX_ATTR_FLOAT, false}, {"max", AMPX_ATTR_FLOAT, false}};
constexpr AttrDef kGeluAttrs[] = {{"approximate", AMPX_ATTR_STRING, false}};
constexpr AttrDef kMaxPoolAttrs[] = {{"kernel_shape", AMPX_ATTR_INTS, true},
                                     {"strides", AMPX_ATTR_INTS, false},
                                     {"pads", AMPX_ATTR_INTS, false},
                                     {"ceil_mode", AMPX_ATTR_INT, false},
                                     {"dilations", AMPX_ATTR_INTS, false}};
constexpr AttrDef kAvgPoolAttrs[] = {{"kernel_shape", AMPX_ATTR_INTS, true},
                                     {"strides", AMPX_ATTR_INTS, false},
                                     {"pads", AMPX_ATTR_INTS, false},
                                     {"ceil_mode", AMPX_ATTR_INT, false},
                                     {"count_include_pad", AMPX_ATTR_INT, false},
                                     {"dilations", AMPX_ATTR_INTS, false}};
// MaxPool's, and storage_order: 1 numbers X's cells column-major per plane.
constexpr AttrDef kMaxPoolIndicesAttrs[] = {
    {"kernel_shape", AMPX_ATTR_INTS, true}, {"strides", AMPX_ATTR_INTS, false},
    {"pads", AMPX_ATTR_INTS, false},        {"ceil_mode", AMPX_ATTR_INT, false},
    {"dilations", AMPX_ATTR_INTS, false},   {"storage_order", AMPX_ATTR_INT, false}};
// The gradients run undilated windows only (the training rules refuse a
// dilated forward pool).
constexpr AttrDef kMaxPoolGradAttrs[] = {{"kernel_shape", AMPX_ATTR_INTS, true},
                                         {"strides", AMPX_ATTR_INTS, false},
                                         {"pads", AMPX_ATTR_INTS, false},
                                         {"ceil_mode", AMPX_ATTR_INT, false}};
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
constexpr AttrDef kBitShiftAttrs[] = {{"direction", AMPX_ATTR_STRING, true}};
constexpr AttrDef kCumSumAttrs[] = {{"axis", AMPX_ATTR_INT, true},
                                    {"exclusive", AMPX_ATTR_INT, false},
                                    {"reverse", AMPX_ATTR_INT, false}};
constexpr AttrDef kTopKAttrs[] = {{"k", AMPX_ATTR_INT, true},
                                  {"axis", AMPX_ATTR_INT, false},
                                  {"largest", AMPX_ATTR_INT, false},
                                  {"sorted", AMPX_ATTR_INT, false}};
constexpr AttrDef kGatherNDAttrs[] = {{"batch_dims", AMPX_ATTR_INT, false}};
constexpr AttrDef kScatterNDAttrs[] = {{"reduction", AMPX_ATTR_STRING, false}};
constexpr AttrDef kGridSampleAttrs[] = {{"mode", AMPX_ATTR_STRING, false},
                                        {"padding_mode", AMPX_ATTR_STRING, false},
                                        {"align_corners", AMPX_ATTR_INT, false}};
constexpr AttrDef kCol2ImAttrs[] = {{"image_shape", AMPX_ATTR_INTS, true},
                                    {"block_shape", AMPX_ATTR_INTS, true},
                                    {"dilations", AMPX_ATTR_INTS, false},
                                    {"pads", AMPX_ATTR_INTS, false},
                                    {"strides", AMPX_ATTR_INTS, false}};
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
                                    {"nearest_mode", AMPX_ATTR_STRING, false},
                                    {"scales", AMPX_ATTR_FLOATS, false},
                                    {"roi", AMPX_ATTR_FLOATS, false},
                                    {"extrapolation_value", AMPX_ATTR_FLOAT, false},
                                    {"cubic_coeff_a", AMPX_ATTR_FLOAT, false},
                                    {"exclude_outside", AMPX_ATTR_INT, false},
                                    {"antialias", AMPX_ATTR_INT, false}};

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
// The fused updates (opset/multi_update.hpp): the per-tensor update's
// attributes, UpdateGuard's, and which weight each 16-bit copy belongs to.
constexpr AttrDef kMultiSgdAttrs[] = {
    {"momentum", AMPX_ATTR_FLOAT, false},     {"nesterov", AMPX_ATTR_INT, false},
    {"weight_decay", AMPX_ATTR_FLOAT, false}, {"clip_norm", AMPX_ATTR_FLOAT, false},
    {"skip_nonfinite", AMPX_ATTR_INT, false}, {"copies", AMPX_ATTR_INTS, false}};
constexpr AttrDef kMultiAdamAttrs[] = {
    {"beta1", AMPX_ATTR_FLOAT, false},        {"beta2", AMPX_ATTR_FLOAT, false},
    {"epsilon", AMPX_ATTR_FLOAT, false},      {"weight_decay", AMPX_ATTR_FLOAT, false},
    {"decoupled", AMPX_ATTR_INT, false},      {"clip_norm", AMPX_ATTR_FLOAT, false},
    {"skip_nonfinite", AMPX_ATTR_INT, false}, {"copies", AMPX_ATTR_INTS, false}};
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

// Attention (docs/OPS.md): `scale` (absent: 1/sqrt(head size)), `softcap`
// (0: none), `is_causal` and the sliding window (`left_window`,
// `right_window`, -1: unbounded) aligned at `past_length` (the KV cache's
// length: keys before the query block) or, with input 4, at
// nonpad_kv_seqlen - S per batch; `qk_output` -1 (none) or ONNX's
// qk_matmul_output_mode 0 to 3, which adds output 1; `softmax_f64` 1: the
// softmax in f64 (ONNX's softmax_precision double), else in f32.
constexpr AttrDef kAttentionAttrs[] = {
    {"scale", AMPX_ATTR_FLOAT, false},     {"softcap", AMPX_ATTR_FLOAT, false},
    {"is_causal", AMPX_ATTR_INT, false},   {"past_length", AMPX_ATTR_INT, false},
    {"left_window", AMPX_ATTR_INT, false}, {"right_window", AMPX_ATTR_INT, false},
    {"qk_output", AMPX_ATTR_INT, false},   {"softmax_f64", AMPX_ATTR_INT, false}};
// LinearAttention (ONNX's, opset 27): `update_rule` linear, gated, delta or
// gated_delta (default), `scale` (0: 1/sqrt(dk)), both head counts.
constexpr AttrDef kLinearAttentionAttrs[] = {{"update_rule", AMPX_ATTR_STRING, false},
                                             {"scale", AMPX_ATTR_FLOAT, false},
                                             {"q_num_heads", AMPX_ATTR_INT, true},
                                             {"kv_num_heads", AMPX_ATTR_INT, true}};
// RotaryEmbedding (ONNX's, opset 23): `num_heads` for a 3-D input.
constexpr AttrDef kRotaryEmbeddingAttrs[] = {{"interleaved", AMPX_ATTR_INT, false},
                                             {"rotary_embedding_dim", AMPX_ATTR_INT, false},
                                             {"num_heads", AMPX_ATTR_INT, false}};

constexpr std::span<const AttrDef> kNoAttrs{};

// The table, in the order of ops.inc (docs/OPS.md's).
constexpr OpDef kOps[] = {
#define AMPX_OP(name, id, min_inputs, max_inputs, attrs, dtype_rule, amp) \
  {OpId::k##name, #name, min_inputs, max_inputs, attrs, DtypeRule::dtype_rule, AmpCategory::amp},
#include "ampx/opset/ops.inc"
#undef AMPX_OP
};
static_assert(std::size(kOps) == kOpCount);

// The table by id. A constant expression: an id out of range or given
// twice fails the build.
constexpr std::array<const OpDef*, kOpCount> kById = [] {
  std::array<const OpDef*, kOpCount> t{};
  for (const OpDef& op : kOps) {
    if (t.at(static_cast<size_t>(op.id)) != nullptr) throw "two ops with one id";
    t.at(static_cast<size_t>(op.id)) = &op;
  }
  return t;
}();

}  // namespace

const OpDef* find_op(std::string_view name) noexcept {
  for (const OpDef& op : kOps)
    if (op.name == name) return &op;
  return nullptr;
}

const OpDef& op_def(OpId id) noexcept {
  return *kById[static_cast<size_t>(id)];
}

std::span<const OpDef> all_ops() noexcept {
  return kOps;
}

std::vector<std::string_view> ops_without_amp_category() {
  std::vector<std::string_view> names;
  for (const OpDef& op : kOps)
    if (op.amp == AmpCategory::kNone) names.push_back(op.name);
  return names;
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
