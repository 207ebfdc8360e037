// RMSNorm (one block per row, as LayerNorm) and RotaryEmbedding (one thread
// per output element). f32 math for every dtype, one rounding on store.
#include "common.cuh"
#include "kernels_onnx.hpp"

namespace ampx::cuda::kern {
namespace {

// cpu_ref: mean of the squares in f32, inv = 1 / sqrt(mean + eps),
// y = x * inv * scale.
template <class T>
__global__ void __launch_bounds__(1024)
    rmsnorm_kernel(RmsNormParams p, const T* x, const T* scale, T* y) {
  __shared__ float scratch[32];
  const float inv_cols = 1.0f / static_cast<float>(p.cols);
  for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const T* xr = x + r * p.cols;
    T* yr = y + r * p.cols;
    float q = 0.0f;
    for (int64_t j = threadIdx.x; j < p.cols; j += blockDim.x) {
      const float v = to_f32(xr[j]);
      q += v * v;
    }
    const float mean_sq = block_reduce<false>(q, scratch) * inv_cols;
    const float inv = 1.0f / sqrtf(mean_sq + p.eps);
    for (int64_t j = threadIdx.x; j < p.cols; j += blockDim.x)
      yr[j] = from_f32<T>(to_f32(xr[j]) * inv * to_f32(scale[j]));
  }
}

// Threads per row-block: a warp multiple, no more than the row needs.
int row_threads(int64_t len) {
  int t = 32;
  while (t < 1024 && t < len) t *= 2;
  return t;
}

// Element i of Y: head feature d of token t of head h of batch b. Features
// below R rotate with their partner (f and f + R/2, or 2f and 2f + 1 when
// interleaved) by the cache's angle of row `row` (the position, or b*S + t);
// the rest are copied.
template <class T>
__global__ void rotary_kernel(RotaryParams p, const T* x, const T* cs, const T* sn, const void* pos,
                              T* y, int* bad) {
  const int64_t n = p.B * p.S * p.H * p.D;
  const int64_t half = p.R / 2;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t d = i % p.D;
    int64_t t, b;
    if (p.rank4) {  // [B, H, S, D]
      t = (i / p.D) % p.S;
      b = i / (p.D * p.S * p.H);
    } else {  // [B, S, H * D]
      t = (i / (p.D * p.H)) % p.S;
      b = i / (p.D * p.H * p.S);
    }
    if (d >= p.R) {
      y[i] = x[i];
      continue;
    }
    int64_t row = b * p.S + t;
    if (p.has_pos) {
      int64_t k =
          p.pos64 ? static_cast<const int64_t*>(pos)[row] : static_cast<const int32_t*>(pos)[row];
      if (k < -p.positions || k >= p.positions) {
        *bad = 1;
        y[i] = T{};
        continue;
      }
      row = k < 0 ? k + p.positions : k;
    }
    // This element's pair (i1, i2) in the head vector and its place in it.
    int64_t f, i1, i2;
    if (p.interleaved) {
      f = d / 2;
      i1 = 2 * f;
      i2 = 2 * f + 1;
    } else {
      f = d < half ? d : d - half;
      i1 = f;
      i2 = f + half;
    }
    const int64_t head = i - d;  // the head vector's first element
    const float c = to_f32(cs[row * half + f]), s = to_f32(sn[row * half + f]);
    const float x1 = to_f32(x[head + i1]), x2 = to_f32(x[head + i2]);
    y[i] = from_f32<T>(d == i1 ? c * x1 - s * x2 : s * x1 + c * x2);
  }
}

}  // namespace

cudaError_t rmsnorm(ampx_dtype dt, const RmsNormParams& p, const void* x, const void* scale,
                    void* y, cudaStream_t stream) {
  if (p.rows == 0 || p.cols == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    rmsnorm_kernel<T><<<grid_for(p.rows, 1), row_threads(p.cols), 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<T*>(y));
    return cudaGetLastError();
  });
}

cudaError_t rotary_embedding(ampx_dtype dt, const RotaryParams& p, const void* x,
                             const void* cos_cache, const void* sin_cache, const void* position_ids,
                             void* y, int* bad, cudaStream_t stream) {
  const int64_t n = p.B * p.S * p.H * p.D;
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    rotary_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<const T*>(cos_cache),
        static_cast<const T*>(sin_cache), position_ids, static_cast<T*>(y), bad);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
