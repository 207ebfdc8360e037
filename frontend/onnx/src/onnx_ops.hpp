// The ONNX op types ampx imports, and how each becomes IR (docs/ONNX.md).
#pragma once

#include "importer.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ampx::onnx_io {

struct OpConverter {
  // IR ops the conversion emits: the ONNX op is supported only when all of
  // them are in this build's op set.
  std::vector<std::string_view> ir_ops;
  void (*convert)(Importer&, const onnx::NodeProto&);
  // The default-domain opsets that define the op: [since, until). ONNX
  // Runtime refuses a node its model's opset does not define, so ampx does.
  int64_t since = 1;
  int64_t until = 0;  // 0: still defined
};

// The rank of a value, and an attribute's axis in [0, rank) (negative
// counts from the end; out of range is the importer's one-line error).
int64_t rank_of(Importer& im, ValueId v);
int64_t norm_axis(Importer& im, int64_t axis, int64_t rank);

// LSTM, GRU and RNN (onnx_recurrent.cpp).
void recurrent(Importer& im, const onnx::NodeProto& n);
// Ops imported as a few op-set ops (onnx_decomposed_ops.cpp).
void instance_norm(Importer& im, const onnx::NodeProto& n);
void group_norm(Importer& im, const onnx::NodeProto& n);
void depth_to_space(Importer& im, const onnx::NodeProto& n);
void space_to_depth(Importer& im, const onnx::NodeProto& n);
void tile(Importer& im, const onnx::NodeProto& n);
// Indexing, sorting and running sums (onnx_index_ops.cpp).
void mod(Importer& im, const onnx::NodeProto& n);
void cum_sum(Importer& im, const onnx::NodeProto& n);
void top_k(Importer& im, const onnx::NodeProto& n);
void gather_elements(Importer& im, const onnx::NodeProto& n);
void gather_nd(Importer& im, const onnx::NodeProto& n);
void scatter_nd(Importer& im, const onnx::NodeProto& n);
void non_zero(Importer& im, const onnx::NodeProto& n);
// Evaluated at import, as NonZero (onnx_non_max_suppression.cpp, onnx_unique.cpp).
void non_max_suppression(Importer& im, const onnx::NodeProto& n);
void unique(Importer& im, const onnx::NodeProto& n);
// ReverseSequence and TensorScatter as one Gather (onnx_gathered_ops.cpp).
void reverse_sequence(Importer& im, const onnx::NodeProto& n);
void tensor_scatter(Importer& im, const onnx::NodeProto& n);
// RMSNormalization, LayerNormalization's Mean and InvStdDev (onnx_norm.cpp).
void rms_norm(Importer& im, const onnx::NodeProto& n);
void layer_norm_statistics(Importer& im, const onnx::NodeProto& n);
void batch_norm_training(Importer& im, const onnx::NodeProto& n);
// BitShift, BitwiseAnd/Or/Xor/Not, BitCast (onnx_bitwise.cpp).
void bit_shift(Importer& im, const onnx::NodeProto& n);
void bitwise_binary(Importer& im, const onnx::NodeProto& n);
void bitwise_not(Importer& im, const onnx::NodeProto& n);
void bit_cast(Importer& im, const onnx::NodeProto& n);
// Einsum as Transpose/Reshape/MatMul/ReduceSum (onnx_einsum.cpp).
void einsum(Importer& im, const onnx::NodeProto& n);
// The two ONNX losses as LogSoftmax/GatherElements/... (onnx_losses.cpp).
void softmax_cross_entropy_loss(Importer& im, const onnx::NodeProto& n);
void negative_log_likelihood_loss(Importer& im, const onnx::NodeProto& n);
// Loop and Scan, unrolled at import (onnx_loops.cpp).
void loop_op(Importer& im, const onnx::NodeProto& n);
// Fails once the graph holds more nodes than unrolling may make
// (kMaxUnrolledNodes), naming the iteration: each unrolled iteration.
void check_nodes_so_far(Importer& im, int64_t iteration);
void scan_op(Importer& im, const onnx::NodeProto& n);
// Attention and RotaryEmbedding as the op set's fused ops (onnx_attention.cpp).
void attention(Importer& im, const onnx::NodeProto& n);
void rotary_embedding(Importer& im, const onnx::NodeProto& n);
// ai.onnx.preview's FlexAttention: Attention, or composed around its
// score_mod/prob_mod subgraphs (onnx_attention.cpp).
void flex_attention(Importer& im, const onnx::NodeProto& n);
void linear_attention(Importer& im, const onnx::NodeProto& n);
// If with a condition that folds (onnx_control_flow.cpp).
void if_op(Importer& im, const onnx::NodeProto& n);
// Ops imported exactly as compositions of op-set ops (onnx_composed_ops.cpp).
void trilu(Importer& im, const onnx::NodeProto& n);
void xor_op(Importer& im, const onnx::NodeProto& n);
void hardmax(Importer& im, const onnx::NodeProto& n);
void reduce_composed(Importer& im, const onnx::NodeProto& n);
void lp_normalization(Importer& im, const onnx::NodeProto& n);
void is_nan(Importer& im, const onnx::NodeProto& n);
void is_inf(Importer& im, const onnx::NodeProto& n);
void elu(Importer& im, const onnx::NodeProto& n);
void selu(Importer& im, const onnx::NodeProto& n);
void celu(Importer& im, const onnx::NodeProto& n);
void thresholded_relu(Importer& im, const onnx::NodeProto& n);
void softsign(Importer& im, const onnx::NodeProto& n);
void shrink(Importer& im, const onnx::NodeProto& n);
void sign(Importer& im, const onnx::NodeProto& n);
void swish(Importer& im, const onnx::NodeProto& n);
void mean_variance_normalization(Importer& im, const onnx::NodeProto& n);
void eye_like(Importer& im, const onnx::NodeProto& n);
void global_max_pool(Importer& im, const onnx::NodeProto& n);
void center_crop_pad(Importer& im, const onnx::NodeProto& n);
void max_unpool(Importer& im, const onnx::NodeProto& n);
void scatter_elements(Importer& im, const onnx::NodeProto& n);

// OneHot and Compress as Equal/Where and Gather (onnx_index_ops.cpp).
void one_hot(Importer& im, const onnx::NodeProto& n);
// TfIdfVectorizer over integer n-grams as Slice/Equal/And counts (onnx_tfidf.cpp).
void tfidf_vectorizer(Importer& im, const onnx::NodeProto& n);
void compress(Importer& im, const onnx::NodeProto& n);

// ai.onnx.ml (onnx_ml_ops.cpp).
void binarizer(Importer& im, const onnx::NodeProto& n);
void array_feature_extractor(Importer& im, const onnx::NodeProto& n);
void label_encoder(Importer& im, const onnx::NodeProto& n);
// TreeEnsemble (ml 5) and TreeEnsembleRegressor (ml 1-4) as a level-by-level walk
// (onnx_tree_ensemble.cpp).
void tree_ensemble(Importer& im, const onnx::NodeProto& n);
void tree_ensemble_regressor(Importer& im, const onnx::NodeProto& n);
// ai.onnx.preview.training's optimizers, element-wise (onnx_training_ops.cpp).
void adagrad(Importer& im, const onnx::NodeProto& n);
void adam(Importer& im, const onnx::NodeProto& n);
void momentum(Importer& im, const onnx::NodeProto& n);

// Sequence and optional ops as list operations at import (onnx_sequences.cpp).
void sequence_op(Importer& im, const onnx::NodeProto& n);
// SwiGLU and CausalConvWithState as op-set ops (onnx_llm_ops.cpp).
void swiglu(Importer& im, const onnx::NodeProto& n);
void causal_conv_with_state(Importer& im, const onnx::NodeProto& n);

// CastLike as a Cast (onnx_node_forms.cpp).
void cast_like(Importer& im, const onnx::NodeProto& n);

// Conv's IR nodes (a 1-D one through a 2-D one) for `x` and `w` with node
// `n`'s attributes; `bias` may be kNone (onnx_ops.cpp).
ValueId conv_values(Importer& im, const onnx::NodeProto& n, ValueId x, ValueId w, ValueId bias);

// The quantization ops as f32 arithmetic on integer values, every IR node
// kept f32 by the planner (onnx_quantization.cpp).
void quantize_linear(Importer& im, const onnx::NodeProto& n);
void dequantize_linear(Importer& im, const onnx::NodeProto& n);
void dynamic_quantize_linear(Importer& im, const onnx::NodeProto& n);
void matmul_integer(Importer& im, const onnx::NodeProto& n);
void conv_integer(Importer& im, const onnx::NodeProto& n);
void qlinear_matmul(Importer& im, const onnx::NodeProto& n);
void qlinear_conv(Importer& im, const onnx::NodeProto& n);

// GridSample (onnx_spatial.cpp).
// GridSample, AffineGrid (onnx_spatial.cpp).
void grid_sample(Importer& im, const onnx::NodeProto& n);
void affine_grid(Importer& im, const onnx::NodeProto& n);
// DeformConv (2-D) as GridSample + MatMul (onnx_deform_conv.cpp).
void deform_conv(Importer& im, const onnx::NodeProto& n);
// Det and Col2Im (onnx_vision.cpp).
void det(Importer& im, const onnx::NodeProto& n);
void col2im(Importer& im, const onnx::NodeProto& n);
// LRN as Mul/AveragePool/Pow (onnx_lrn.cpp).
void lrn(Importer& im, const onnx::NodeProto& n);

// Windows, MelWeightMatrix, DFT and STFT (onnx_signal.cpp).
void hann_window(Importer& im, const onnx::NodeProto& n);
void hamming_window(Importer& im, const onnx::NodeProto& n);
void blackman_window(Importer& im, const onnx::NodeProto& n);
void mel_weight_matrix(Importer& im, const onnx::NodeProto& n);
void dft(Importer& im, const onnx::NodeProto& n);
void stft(Importer& im, const onnx::NodeProto& n);

// ONNX's default domain: "" or its alias "ai.onnx".
inline bool is_default_domain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}

// A rank-0 constant `value` in `dt`: an f64 constant cast to dt, folded at
// import by the reference Cast, so every dtype rounds as Cast does.
ValueId cast_scalar(Importer& im, DType dt, double value);

// nullptr for op types of the default domain ampx does not import.
const OpConverter* find_converter(std::string_view op_type);
// The converter of `op_type` in `domain` (the default one, ai.onnx.ml or
// ai.onnx.preview.training); nullptr for one ampx does not import.
const OpConverter* find_converter(std::string_view domain, std::string_view op_type);

// True when the converter exists, every IR op it needs is known and the
// op is defined at `opset` (of its domain).
bool is_supported(std::string_view domain, std::string_view op_type, int64_t opset);

// Where `op_type` is known but not defined at `opset`: the opsets that
// define it ("opset 20+", "opsets 7 to 9"); empty otherwise.
std::string defined_in(std::string_view domain, std::string_view op_type, int64_t opset);

// The table of the domains other than the default (onnx_domains.cpp):
// nullptr for an op type or domain it does not hold; and the newest
// version of a domain ampx knows (0: not a domain ampx imports).
const OpConverter* find_domain_converter(std::string_view domain, std::string_view op_type);
int64_t newest_domain_opset(std::string_view domain);

}  // namespace ampx::onnx_io
