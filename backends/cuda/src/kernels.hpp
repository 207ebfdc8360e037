// The own CUDA kernels, as plain C++ launch functions: the host code (.cpp,
// compiled by the host compiler) never sees device code, and nvcc compiles
// only src/kernels/*.cu. Each function enqueues its work on `stream` and
// returns the launch result (cudaGetLastError() right after the launch:
// cudaErrorInvalidConfiguration and friends), which the caller checks.
//
// Numerics, the same contract as cpu_ref: f16/bf16 are loaded, widened to
// f32, computed and accumulated in f32 and rounded once (nearest even) on
// store. Shapes arrive already validated (opset::validate runs first).
// Every kernel uses grid-stride loops, so any size runs with a capped grid.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "ampx/backend_api.h"

namespace ampx::cuda::kern {

constexpr int kMaxRank = 8;

// ------------------------------------------------------------ elementwise

enum class UnaryOp : int32_t { kRelu, kSigmoid, kTanh, kGeluErf, kGeluTanh, kClip };
struct UnaryParams {
  UnaryOp op = UnaryOp::kRelu;
  float lo = 0, hi = 0;  // kClip
};
// y[i] = op(x[i]), dt in {f32, f16, bf16}. Vectorised (4 elements per load)
// when x and y are aligned to 4 elements.
cudaError_t unary(ampx_dtype dt, const UnaryParams& p, const void* x, void* y, int64_t n,
                  cudaStream_t stream);

enum class BinaryOp : int32_t { kAdd, kSub, kMul, kDiv };
// Output dims and the element strides of a and b over them (0 where a dim
// is broadcast).
struct Broadcast {
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t a_strides[kMaxRank] = {};
  int64_t b_strides[kMaxRank] = {};
};
// y = a op b over n output elements. `bc` NULL: a, b and y have the same
// shape (vectorised path); else NumPy broadcasting through the strides.
cudaError_t binary(ampx_dtype dt, BinaryOp op, const void* a, const void* b, void* y, int64_t n,
                   const Broadcast* bc, cudaStream_t stream);

// Cast between f32, f16, bf16, i32 and i64, except integer -> f16/bf16 (that
// needs a double rounding guard cpu_ref has and this kernel does not). Float
// -> integer truncates toward zero, saturates, NaN -> 0 (as cpu_ref).
bool cast_supported(ampx_dtype from, ampx_dtype to) noexcept;
cudaError_t cast(ampx_dtype from, ampx_dtype to, const void* x, void* y, int64_t n,
                 cudaStream_t stream);

// --------------------------------------------------------- normalisation

struct BatchNormParams {
  int64_t n = 0, channels = 0, inner = 0;  // x is [n / (channels*inner), channels, inner]
  float eps = 1e-5f;
};
cudaError_t batchnorm(ampx_dtype dt, const BatchNormParams& p, const void* x, const void* scale,
                      const void* bias, const void* mean, const void* var, void* y,
                      cudaStream_t stream);

struct LayerNormParams {
  int64_t rows = 0, cols = 0;
  float eps = 1e-5f;
};
// bias may be NULL. One block per row, two passes (mean, then variance).
cudaError_t layernorm(ampx_dtype dt, const LayerNormParams& p, const void* x, const void* scale,
                      const void* bias, void* y, cudaStream_t stream);

struct SoftmaxParams {
  int64_t outer = 0, axis = 0, inner = 0;  // x is [outer, axis, inner]
};
cudaError_t softmax(ampx_dtype dt, const SoftmaxParams& p, const void* x, void* y,
                    cudaStream_t stream);

// ------------------------------------------------------ pooling, reducing

struct PoolParams {
  int64_t planes = 0, H = 0, W = 0, OH = 0, OW = 0, kH = 0, kW = 0, sh = 1, sw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool max = true;
  bool include_pad = false;  // AveragePool count_include_pad
};
cudaError_t pool2d(ampx_dtype dt, const PoolParams& p, const void* x, void* y, cudaStream_t stream);

// Output element o (over out_dims, row-major) reduces the input elements at
// sum_k(idx_k * out_strides[k]) + sum_j(r_j * red_strides[j]) over red_dims.
struct ReduceParams {
  int64_t outputs = 0;
  int32_t out_rank = 0;
  int64_t out_dims[kMaxRank] = {};
  int64_t out_strides[kMaxRank] = {};
  int32_t red_rank = 0;
  int64_t red_dims[kMaxRank] = {};
  int64_t red_strides[kMaxRank] = {};
  int64_t red_count = 0;
  bool mean = false;  // divide by red_count
};
cudaError_t reduce(ampx_dtype dt, const ReduceParams& p, const void* x, void* y,
                   cudaStream_t stream);

// ---------------------------------------------------------- data movement

// dst[d-offset(idx)] = src[s-offset(idx)] for every idx over dims; strides in
// elements (0 broadcasts). Any dtype: elements are moved as 1/2/4/8 bytes.
struct StridedCopy {
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};
  int64_t dst_strides[kMaxRank] = {};
};
cudaError_t strided_copy(size_t elem_size, const StridedCopy& p, int64_t n, const void* src,
                         void* dst, cudaStream_t stream);

struct GatherParams {
  int64_t outer = 0, axis_len = 0, n_idx = 0, inner = 0;  // inner in elements
  bool idx64 = true;
};
// Out-of-range indices write zeros and set *bad (device int) to 1.
cudaError_t gather(size_t elem_size, const GatherParams& p, const void* data, const void* indices,
                   void* y, int* bad, cudaStream_t stream);

// ------------------------------------------------------------ convolution

// Direct NCHW convolution, one thread per output element, f32 accumulation:
// the fallback when cuDNN is not loaded or cannot take the node.
struct ConvParams {
  int64_t N = 0, C = 0, H = 0, W = 0, M = 0, OH = 0, OW = 0, kH = 0, kW = 0;
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, dh = 1, dw = 1, group = 1;
};
cudaError_t conv2d_direct(ampx_dtype dt, const ConvParams& p, const void* x, const void* w,
                          const void* bias, void* y, cudaStream_t stream);

// ------------------------------- importer ops: Attention, LinearAttention,
// GridSample, Det (kernels/attention.cu, linear_attention.cu, grid_sample.cu,
// det.cu). Semantics are cpu_ref's (sdk/reference/src/ops_attention.cpp,
// ops_linear_attention.cpp, ops_grid_sample.cpp, ops_vision.cpp).

// Attention over Q [B, Hq, S, E], K [B, Hkv, T, E], V [B, Hkv, T, Ev]; the
// mask broadcast into [B, Hq, S, Tm] through element strides (0 where
// broadcast). One block per query row; `scratch` holds `blocks` rows of T
// floats (the row's logits, then its probabilities).
struct AttentionParams {
  int64_t B = 0, Hq = 0, S = 0, E = 0, Hkv = 0, T = 0, Ev = 0;
  bool has_mask = false, mask_bool = false;
  int64_t mb = 0, mh = 0, mi = 0, Tm = 0;
  bool has_len = false, len64 = true;
  float scale = 1, softcap = 0;
  bool causal = false;
  int64_t past = 0, left = -1, right = -1;
  int32_t mode = -1;  // qk_output
  bool softmax_f64 = false;
  int64_t blocks = 1;  // rows in flight: the grid, and scratch's rows
};
// mask: bool (u8) or dt; lens: i64 or i32 [B]; qk NULL unless mode >= 0.
cudaError_t attention(ampx_dtype dt, const AttentionParams& p, const void* q, const void* k,
                      const void* v, const void* mask, const void* lens, void* y, void* qk,
                      float* scratch, cudaStream_t stream);

// LinearAttention in ONNX's packed layout (docs/OPS.md). One thread per
// (batch, KV head, value column), walking the tokens in order; `state` is
// f32 scratch [B, Hkv, dk, dv] (the state stays f32 until present_state is
// rounded once, as cpu_ref's widened 16-bit run).
struct LinearAttentionParams {
  int64_t B = 0, T = 0, Hq = 0, Hkv = 0, dk = 0, dv = 0;
  bool gated = false, delta = false;
  bool decay_per_key = false;  // decay [B, T, Hkv*dk], else [B, T, Hkv]
  bool beta_per_head = false;  // beta [B, T, Hkv], else [B, T, 1]
  float scale = 1;
};
cudaError_t linear_attention(ampx_dtype dt, const LinearAttentionParams& p, const void* q,
                             const void* k, const void* v, const void* past, const void* decay,
                             const void* beta, void* y, void* present, float* state,
                             cudaStream_t stream);

// GridSample: X [N, C, D1..Dk], grid [N, P points, k] -> Y [N, C, P].
constexpr int kGridMaxAxes = kMaxRank - 2;
struct GridSampleParams {
  int64_t N = 0, C = 0, points = 0;
  int32_t axes = 0;
  int64_t in[kGridMaxAxes] = {};  // D1..Dk
  int32_t mode = 1;               // 0 nearest, 1 linear, 2 cubic
  int32_t padding = 0;            // 0 zeros, 1 border, 2 reflection
  bool align_corners = false;
};
cudaError_t grid_sample(ampx_dtype dt, const GridSampleParams& p, const void* x, const void* grid,
                        void* y, cudaStream_t stream);

// Det of `batch` M x M matrices: one thread per matrix, LU with partial
// pivoting in double in `scratch` (batch * M * M doubles).
constexpr int64_t kDetMaxM = 64;
cudaError_t det(ampx_dtype dt, int64_t batch, int64_t m, const void* x, void* y, double* scratch,
                cudaStream_t stream);

// ------------------------------------------------------------------ probe

// cudaFuncGetAttributes on one own kernel for the current device:
// cudaErrorNoKernelImageForDevice when this build has no code for its
// architecture.
cudaError_t probe_kernel_image();

}  // namespace ampx::cuda::kern
