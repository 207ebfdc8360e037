// Internal to the kernel library: the validated view of a node that every op
// factory works from, and the factory declarations.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ampx/plugin_support.hpp"
#include "ampx/reference/kernels.hpp"

namespace ampx::reference::detail {

using plugin_support::NodeView;

struct TensorInfo {
  ampx_dtype dtype = AMPX_DTYPE_INVALID;
  std::vector<int64_t> dims;
  int64_t numel = 0;
  int rank() const { return static_cast<int>(dims.size()); }
};

std::string dims_str(const std::vector<int64_t>& dims);  // "[2, 3, 4]"
int64_t product(const std::vector<int64_t>& dims, size_t begin = 0, size_t end = SIZE_MAX);
// Row-major strides (in elements) of dense `dims`.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims);

// What a factory sees. `dtype` is the element dtype the kernel works in:
// F32 or F64 for compute ops (16-bit variants arrive as F32 and are wrapped
// by the dispatcher; F64 for every compute op only in the float64 mode,
// KernelOptions::f64_compute); the common data dtype (any) for
// data-movement ops.
class Ctx {
 public:
  explicit Ctx(const NodeView& view);

  const NodeView& v;
  std::vector<TensorInfo> in, out;
  ampx_dtype dtype = AMPX_DTYPE_INVALID;

  [[noreturn]] void fail(const std::string& what) const { v.fail(what); }

  // Input count in [min_in, max_in], output count == n_out.
  void arity(size_t min_in, size_t max_in, size_t n_out) const;
  // "<what> has 3 dims, expected 4"
  void rank(const TensorInfo& t, const std::string& what, int r) const;
  void min_rank(const TensorInfo& t, const std::string& what, int r) const;
  // "<what> has shape [a], expected [b]"
  void dims(const TensorInfo& t, const std::string& what, const std::vector<int64_t>& want) const;
  // Normalises a possibly negative axis attribute value into [0, rank).
  int64_t axis(int64_t a, int64_t rank, const std::string& attr) const;
  // An INTS attribute that must have exactly n entries (default if absent).
  std::vector<int64_t> ints_n(const char* name, size_t n, std::vector<int64_t> def) const;
};

// Factories: validate shapes/attributes (dtypes are already checked) and
// build a kernel. Compute factories only ever see dtype F32 or F64 (the
// elementwise ops always; the others in the float64 mode): their kernels
// are templates on the element type T (float or double), instantiated
// through typed() below, so the f64 kernel is the f32 one's code.
// The axes a Reduce* node reduces (attribute `axes`, empty: all) and whether
// it keeps them (`keepdims`), both checked.
struct ReducedAxes {
  std::vector<bool> reduced;  // per input axis
  bool keep;
};
ReducedAxes reduced_axes(Ctx& c);

using Factory = std::unique_ptr<CpuKernel> (*)(Ctx&);

std::unique_ptr<CpuKernel> make_conv2d(Ctx&);
// Wraps a Conv2d/MatMul/Gemm/BatchNorm kernel (of the Ctx's dtype, f32 or
// f64) with its `activation` epilogue.
std::unique_ptr<CpuKernel> with_activation(std::unique_ptr<CpuKernel> inner, const Ctx& c);
// Conv2d's fused residual (input 3, the output's shape): added in the
// kernel's dtype to the output, before the activation.
std::unique_ptr<CpuKernel> with_residual(std::unique_ptr<CpuKernel> inner, const Ctx& c);
std::unique_ptr<CpuKernel> make_matmul(Ctx&);
std::unique_ptr<CpuKernel> make_gemm(Ctx&);
std::unique_ptr<CpuKernel> make_maxpool(Ctx&);
std::unique_ptr<CpuKernel> make_avgpool(Ctx&);
// MaxPoolIndices (ops_pool_indices.cpp).
std::unique_ptr<CpuKernel> make_maxpool_indices(Ctx&);
std::unique_ptr<CpuKernel> make_global_avgpool(Ctx&);

std::unique_ptr<CpuKernel> make_batchnorm(Ctx&);
std::unique_ptr<CpuKernel> make_layernorm(Ctx&);
std::unique_ptr<CpuKernel> make_rmsnorm(Ctx&);
std::unique_ptr<CpuKernel> make_softmax(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_mean(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_sum(Ctx&);

std::unique_ptr<CpuKernel> make_relu(Ctx&);
std::unique_ptr<CpuKernel> make_sigmoid(Ctx&);
std::unique_ptr<CpuKernel> make_tanh(Ctx&);
std::unique_ptr<CpuKernel> make_gelu(Ctx&);
std::unique_ptr<CpuKernel> make_clip(Ctx&);
std::unique_ptr<CpuKernel> make_add(Ctx&);
std::unique_ptr<CpuKernel> make_sub(Ctx&);
std::unique_ptr<CpuKernel> make_mul(Ctx&);
std::unique_ptr<CpuKernel> make_div(Ctx&);

std::unique_ptr<CpuKernel> make_reshape(Ctx&);
std::unique_ptr<CpuKernel> make_flatten(Ctx&);
std::unique_ptr<CpuKernel> make_transpose(Ctx&);
std::unique_ptr<CpuKernel> make_concat(Ctx&);
std::unique_ptr<CpuKernel> make_slice(Ctx&);
std::unique_ptr<CpuKernel> make_gather(Ctx&);
std::unique_ptr<CpuKernel> make_dropout(Ctx&);
std::unique_ptr<CpuKernel> make_cast(Ctx&);

// The importer's ops (docs/OPS.md). Kind::Integer factories (Neg, Where,
// Equal, Add, Sub, Mul, Div) also see dtype I64 / I32.
std::unique_ptr<CpuKernel> make_conv_transpose(Ctx&);
std::unique_ptr<CpuKernel> make_leaky_relu(Ctx&);
std::unique_ptr<CpuKernel> make_prelu(Ctx&);
std::unique_ptr<CpuKernel> make_hard_sigmoid(Ctx&);
std::unique_ptr<CpuKernel> make_hard_swish(Ctx&);
std::unique_ptr<CpuKernel> make_erf(Ctx&);
std::unique_ptr<CpuKernel> make_pow(Ctx&);
std::unique_ptr<CpuKernel> make_sqrt(Ctx&);
std::unique_ptr<CpuKernel> make_reciprocal(Ctx&);
std::unique_ptr<CpuKernel> make_exp(Ctx&);
std::unique_ptr<CpuKernel> make_log(Ctx&);
std::unique_ptr<CpuKernel> make_neg(Ctx&);
std::unique_ptr<CpuKernel> make_where(Ctx&);
std::unique_ptr<CpuKernel> make_equal(Ctx&);
std::unique_ptr<CpuKernel> make_log_softmax(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_max(Ctx&);
std::unique_ptr<CpuKernel> make_argmax(Ctx&);
std::unique_ptr<CpuKernel> make_resize(Ctx&);
std::unique_ptr<CpuKernel> make_split(Ctx&);
std::unique_ptr<CpuKernel> make_expand(Ctx&);
std::unique_ptr<CpuKernel> make_pad(Ctx&);
// More ONNX ops (docs/OPS.md). Abs, the comparisons, Min and Max also see
// I64 / I32; Not, And and Or see bool (dtype INVALID: no float tensor).
std::unique_ptr<CpuKernel> make_floor(Ctx&);
std::unique_ptr<CpuKernel> make_ceil(Ctx&);
std::unique_ptr<CpuKernel> make_round(Ctx&);
std::unique_ptr<CpuKernel> make_abs(Ctx&);
std::unique_ptr<CpuKernel> make_softplus(Ctx&);
std::unique_ptr<CpuKernel> make_mish(Ctx&);
std::unique_ptr<CpuKernel> make_sin(Ctx&);
std::unique_ptr<CpuKernel> make_cos(Ctx&);
std::unique_ptr<CpuKernel> make_tan(Ctx&);
std::unique_ptr<CpuKernel> make_asin(Ctx&);
std::unique_ptr<CpuKernel> make_acos(Ctx&);
std::unique_ptr<CpuKernel> make_atan(Ctx&);
std::unique_ptr<CpuKernel> make_sinh(Ctx&);
std::unique_ptr<CpuKernel> make_cosh(Ctx&);
std::unique_ptr<CpuKernel> make_asinh(Ctx&);
std::unique_ptr<CpuKernel> make_acosh(Ctx&);
std::unique_ptr<CpuKernel> make_atanh(Ctx&);
std::unique_ptr<CpuKernel> make_less(Ctx&);
std::unique_ptr<CpuKernel> make_greater(Ctx&);
std::unique_ptr<CpuKernel> make_less_or_equal(Ctx&);
std::unique_ptr<CpuKernel> make_greater_or_equal(Ctx&);
std::unique_ptr<CpuKernel> make_not(Ctx&);
std::unique_ptr<CpuKernel> make_and(Ctx&);
std::unique_ptr<CpuKernel> make_or(Ctx&);
std::unique_ptr<CpuKernel> make_min(Ctx&);
std::unique_ptr<CpuKernel> make_max(Ctx&);
std::unique_ptr<CpuKernel> make_sum(Ctx&);
std::unique_ptr<CpuKernel> make_mean(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_min(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_prod(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_l2(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_sum_square(Ctx&);
std::unique_ptr<CpuKernel> make_reduce_log_sum_exp(Ctx&);
std::unique_ptr<CpuKernel> make_argmin(Ctx&);
// Mod (ops_elementwise.cpp); indexing, sorting, running sums (ops_index.cpp).
std::unique_ptr<CpuKernel> make_mod(Ctx&);
std::unique_ptr<CpuKernel> make_cum_sum(Ctx&);
std::unique_ptr<CpuKernel> make_top_k(Ctx&);
std::unique_ptr<CpuKernel> make_gather_elements(Ctx&);
std::unique_ptr<CpuKernel> make_gather_nd(Ctx&);
std::unique_ptr<CpuKernel> make_scatter_nd(Ctx&);
// Attention and RotaryEmbedding (ops_attention.cpp).
std::unique_ptr<CpuKernel> make_attention(Ctx&);
std::unique_ptr<CpuKernel> make_rotary_embedding(Ctx&);
// The bit ops (ops_elementwise.cpp; BitCast: ops_data.cpp).
std::unique_ptr<CpuKernel> make_bit_shift(Ctx&);
std::unique_ptr<CpuKernel> make_bitwise_and(Ctx&);
std::unique_ptr<CpuKernel> make_bitwise_or(Ctx&);
std::unique_ptr<CpuKernel> make_bitwise_xor(Ctx&);
std::unique_ptr<CpuKernel> make_bitwise_not(Ctx&);
std::unique_ptr<CpuKernel> make_bit_cast(Ctx&);
// GridSample (ops_grid_sample.cpp).
std::unique_ptr<CpuKernel> make_grid_sample(Ctx&);
// LinearAttention (ops_linear_attention.cpp).
std::unique_ptr<CpuKernel> make_linear_attention(Ctx&);
// Det and Col2Im (ops_vision.cpp).
std::unique_ptr<CpuKernel> make_det(Ctx&);
std::unique_ptr<CpuKernel> make_col2im(Ctx&);
// LSTM, GRU and RNN (ops_recurrent.cpp).
std::unique_ptr<CpuKernel> make_recurrent(Ctx&);

// Training ops (docs/OPS.md, "Training ops").
std::unique_ptr<CpuKernel> make_relu_grad(Ctx&);
std::unique_ptr<CpuKernel> make_sigmoid_grad(Ctx&);
std::unique_ptr<CpuKernel> make_tanh_grad(Ctx&);
std::unique_ptr<CpuKernel> make_gelu_grad(Ctx&);
std::unique_ptr<CpuKernel> make_clip_grad(Ctx&);
std::unique_ptr<CpuKernel> make_softmax_grad(Ctx&);
std::unique_ptr<CpuKernel> make_layernorm_grad(Ctx&);
std::unique_ptr<CpuKernel> make_batchnorm_training(Ctx&);
std::unique_ptr<CpuKernel> make_batchnorm_grad(Ctx&);
std::unique_ptr<CpuKernel> make_conv2d_grad_weight(Ctx&);
std::unique_ptr<CpuKernel> make_maxpool_grad(Ctx&);
std::unique_ptr<CpuKernel> make_avgpool_grad(Ctx&);
std::unique_ptr<CpuKernel> make_slice_grad(Ctx&);
std::unique_ptr<CpuKernel> make_gather_grad(Ctx&);
std::unique_ptr<CpuKernel> make_dropout_training(Ctx&);
std::unique_ptr<CpuKernel> make_softmax_cross_entropy(Ctx&);
std::unique_ptr<CpuKernel> make_softmax_cross_entropy_grad(Ctx&);
std::unique_ptr<CpuKernel> make_sgd_update(Ctx&);
std::unique_ptr<CpuKernel> make_adam_update(Ctx&);
std::unique_ptr<CpuKernel> make_update_guard(Ctx&);
std::unique_ptr<CpuKernel> make_multi_update(Ctx&);  // MultiSgdUpdate, MultiAdamUpdate
std::unique_ptr<CpuKernel> make_tensor_stats(Ctx&);
// Whether DropoutTraining keeps element `index` (docs/OPS.md: its mask is
// 1 / (1 - ratio), else 0).
bool dropout_keeps(uint64_t seed, uint64_t index, float ratio);

// Sum of n values with 8 independent partial sums: vectorises without
// -ffast-math and loses less accuracy than one running sum. Fixed order.
template <class T>
inline T sum_n(const T* x, int64_t n) {
  T p[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) p[l] += x[i + l];
  T s = ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]));
  for (; i < n; ++i) s += x[i];
  return s;
}
inline float sum_f32(const float* x, int64_t n) {
  return sum_n(x, n);
}

// Index j of an i64 (idx64) or i32 index tensor, in [0, len) (negative
// ones count from the end, as ONNX), or std::invalid_argument naming the
// node, the index and its position: Gather, GatherElements, GatherND and
// ScatterND check every index before they write anything.
inline int64_t checked_index(const std::string& where, const void* p, bool idx64, int64_t j,
                             int64_t len) {
  const int64_t k = idx64 ? static_cast<const int64_t*>(p)[j] : static_cast<const int32_t*>(p)[j];
  if (k < -len || k >= len)
    throw std::invalid_argument(where + ": index " + std::to_string(k) + " at position " +
                                std::to_string(j) + " is out of range for axis length " +
                                std::to_string(len));
  return k < 0 ? k + len : k;
}

// The kernel template K instantiated for the factory's element type:
// K<double> for F64, else K<float>.
template <template <class> class K, class... Args>
std::unique_ptr<CpuKernel> typed(const Ctx& c, Args&&... args) {
  if (c.dtype == AMPX_DTYPE_F64) return std::make_unique<K<double>>(std::forward<Args>(args)...);
  return std::make_unique<K<float>>(std::forward<Args>(args)...);
}

// Calls fn(T{}) with T the C type of the integer dtype `dt` (i8 to i64,
// u8 to u64) and returns true; false, calling nothing, for any other dtype.
// The factories of the integer ops (opset DtypeRule::kInteger) use it so
// that every integer dtype the op set lets through gets a kernel of its own
// type, never the float kernel.
template <class Fn>
bool visit_int(ampx_dtype dt, Fn&& fn) {
  switch (dt) {
    case AMPX_DTYPE_I64:
      fn(int64_t{});
      return true;
    case AMPX_DTYPE_I32:
      fn(int32_t{});
      return true;
    case AMPX_DTYPE_I16:
      fn(int16_t{});
      return true;
    case AMPX_DTYPE_I8:
      fn(int8_t{});
      return true;
    case AMPX_DTYPE_U64:
      fn(uint64_t{});
      return true;
    case AMPX_DTYPE_U32:
      fn(uint32_t{});
      return true;
    case AMPX_DTYPE_U16:
      fn(uint16_t{});
      return true;
    case AMPX_DTYPE_U8:
      fn(uint8_t{});
      return true;
    default:
      return false;
  }
}

// K<T> for the Ctx's dtype: f64, any integer type (visit_int), else f32.
template <template <class> class K, class... Args>
std::unique_ptr<CpuKernel> numeric(const Ctx& c, Args&&... args) {
  if (c.dtype == AMPX_DTYPE_F64) return std::make_unique<K<double>>(std::forward<Args>(args)...);
  std::unique_ptr<CpuKernel> k;
  if (visit_int(c.dtype,
                [&](auto t) { k = std::make_unique<K<decltype(t)>>(std::forward<Args>(args)...); }))
    return k;
  return std::make_unique<K<float>>(std::forward<Args>(args)...);
}

}  // namespace ampx::reference::detail
