// Device-side helpers shared by the kernels: f32 widening/rounding for the
// three float types, dtype dispatch, launch geometry, block reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels.hpp"

namespace ampx::cuda::kern {

__device__ __forceinline__ float to_f32(float x) {
  return x;
}
__device__ __forceinline__ float to_f32(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

template <class T>
__device__ __forceinline__ T from_f32(float x);
template <>
__device__ __forceinline__ float from_f32<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_f32<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Calls fn(T{}) with T the C++ type of a float dtype.
template <class Fn>
cudaError_t dispatch_float(ampx_dtype dt, Fn&& fn) {
  switch (dt) {
    case AMPX_DTYPE_F32:
      return fn(float{});
    case AMPX_DTYPE_F16:
      return fn(__half{});
    case AMPX_DTYPE_BF16:
      return fn(__nv_bfloat16{});
    default:
      return cudaErrorInvalidValue;
  }
}

// 4 elements in one aligned load/store.
template <class T>
struct alignas(4 * sizeof(T)) Pack4 {
  T v[4];
};

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items: enough to fill any GPU, capped
// well below the grid limit so a launch is never illegal because of size.
inline unsigned grid_for(int64_t n, int threads = kThreads) {
  const int64_t want = (n + threads - 1) / threads;
  const int64_t cap = int64_t{1} << 16;
  return static_cast<unsigned>(want < 1 ? 1 : (want > cap ? cap : want));
}

// Sum / max over the block (blockDim.x a multiple of 32, at most 1024).
// `scratch`: 32 floats of shared memory. Every thread gets the result.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <bool kMax>
__device__ __forceinline__ float block_reduce(float v, float* scratch) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = kMax ? warp_max(v) : warp_sum(v);
  __syncthreads();  // scratch may still be read from a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    float w = lane < warps ? scratch[lane] : (kMax ? -INFINITY : 0.0f);
    w = kMax ? warp_max(w) : warp_sum(w);
    if (lane == 0) scratch[0] = w;
  }
  __syncthreads();
  return scratch[0];
}

// LayerNorm's statistics of one row of `cols` values, over the block (two
// passes, f32): the mean and 1 / sqrt(variance + eps). The forward and the
// gradient recompute them the same way.
template <class T>
__device__ __forceinline__ void row_mean_invstd(const T* xr, int64_t cols, float eps,
                                                float* scratch, float& mean, float& inv) {
  const float inv_cols = 1.0f / static_cast<float>(cols);
  float s = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += to_f32(xr[j]);
  mean = block_reduce<false>(s, scratch) * inv_cols;
  float q = 0.0f;
  for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = to_f32(xr[j]) - mean;
    q += d * d;
  }
  const float var = block_reduce<false>(q, scratch) * inv_cols;
  inv = 1.0f / sqrtf(var + eps);
}

// Output element i's offsets into a and b under NumPy broadcasting (the
// index unravelled over bc.dims, each dim through its stride; 0 where
// broadcast): the binary and bitwise kernels' broadcast form.
__device__ inline void broadcast_offsets(int64_t i, const Broadcast& bc, int64_t& ao, int64_t& bo) {
  int64_t rem = i;
  ao = 0, bo = 0;
  for (int d = bc.rank - 1; d >= 0; --d) {
    const int64_t idx = rem % bc.dims[d];
    rem /= bc.dims[d];
    ao += idx * bc.a_strides[d];
    bo += idx * bc.b_strides[d];
  }
}

}  // namespace ampx::cuda::kern
