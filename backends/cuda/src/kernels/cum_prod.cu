// CumProd: one thread per (outer, inner) line walks its `len` elements in
// order, as cpu_ref's loop does (a product's rounding depends on its order).
// Floats multiply in double; integers wrap (unsigned arithmetic).
#include <type_traits>

#include "common.cuh"
#include "int_dispatch.cuh"
#include "kernels_onnx.hpp"

namespace ampx::cuda::kern {
namespace {

__device__ __forceinline__ double widen(float x) {
  return x;
}
__device__ __forceinline__ double widen(__half x) {
  return __half2float(x);
}
__device__ __forceinline__ double widen(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

// cpu_ref stores the double product as f32 (16-bit arrives there widened)
// and rounds that to 16 bits: the same two roundings here.
template <class T>
__global__ void cum_prod_float_kernel(CumParams p, const T* x, T* y) {
  const int64_t lines = p.outer * p.inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < lines;
       t += stride) {
    const int64_t base = (t / p.inner) * p.len * p.inner + t % p.inner;
    double acc = 1.0;
    for (int64_t s = 0; s < p.len; ++s) {
      const int64_t at = base + (p.reverse ? p.len - 1 - s : s) * p.inner;
      const double v = widen(x[at]);
      if (p.exclusive) y[at] = from_f32<T>(static_cast<float>(acc));
      acc *= v;
      if (!p.exclusive) y[at] = from_f32<T>(static_cast<float>(acc));
    }
  }
}

// Products modulo 2^64, truncated to T's width: the low bits of a product
// depend only on the low bits of its factors, so this is T's wrapping
// product (no promotion to a signed int that could overflow).
template <class T>
__global__ void cum_prod_int_kernel(CumParams p, const T* x, T* y) {
  using U = std::make_unsigned_t<T>;
  const int64_t lines = p.outer * p.inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < lines;
       t += stride) {
    const int64_t base = (t / p.inner) * p.len * p.inner + t % p.inner;
    uint64_t acc = 1;
    for (int64_t s = 0; s < p.len; ++s) {
      const int64_t at = base + (p.reverse ? p.len - 1 - s : s) * p.inner;
      const uint64_t v = static_cast<uint64_t>(static_cast<U>(x[at]));
      if (p.exclusive) y[at] = static_cast<T>(static_cast<U>(acc));
      acc *= v;
      if (!p.exclusive) y[at] = static_cast<T>(static_cast<U>(acc));
    }
  }
}

}  // namespace

cudaError_t cum_prod(ampx_dtype dt, const CumParams& p, const void* x, void* y,
                     cudaStream_t stream) {
  const int64_t lines = p.outer * p.inner;
  if (lines == 0 || p.len == 0) return cudaSuccess;
  auto floats = [&](auto tag) {
    using T = decltype(tag);
    cum_prod_float_kernel<T>
        <<<grid_for(lines), kThreads, 0, stream>>>(p, static_cast<const T*>(x), static_cast<T*>(y));
    return cudaGetLastError();
  };
  auto ints = [&](auto tag) {
    using T = decltype(tag);
    cum_prod_int_kernel<T>
        <<<grid_for(lines), kThreads, 0, stream>>>(p, static_cast<const T*>(x), static_cast<T*>(y));
    return cudaGetLastError();
  };
  if (dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_BF16)
    return dispatch_float(dt, floats);
  return dispatch_int(dt, ints);
}

}  // namespace ampx::cuda::kern
