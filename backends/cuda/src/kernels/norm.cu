// Normalisation kernels: BatchNorm (inference), LayerNorm, Softmax. f32
// statistics and accumulation for every dtype.
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

template <class T>
__global__ void batchnorm_kernel(BatchNormParams p, const T* x, const T* scale, const T* bias,
                                 const T* mean, const T* var, T* y) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n;
       i += stride) {
    const int64_t c = (i / p.inner) % p.channels;
    // Same formula as cpu_ref: scale / sqrt(var + eps) first.
    const float s = to_f32(scale[c]) / sqrtf(to_f32(var[c]) + p.eps);
    y[i] = from_f32<T>((to_f32(x[i]) - to_f32(mean[c])) * s + to_f32(bias[c]));
  }
}

// One block per row (grid-stride over rows), two passes over global memory:
// simple and exact enough (f32 sums of at most a few thousand terms).
template <class T>
__global__ void layernorm_kernel(LayerNormParams p, const T* x, const T* scale, const T* bias,
                                 T* y) {
  __shared__ float scratch[32];
  for (int64_t r = blockIdx.x; r < p.rows; r += gridDim.x) {
    const T* xr = x + r * p.cols;
    T* yr = y + r * p.cols;
    float mean, inv;
    row_mean_invstd(xr, p.cols, p.eps, scratch, mean, inv);
    for (int64_t j = threadIdx.x; j < p.cols; j += blockDim.x) {
      float v = (to_f32(xr[j]) - mean) * inv * to_f32(scale[j]);
      if (bias) v += to_f32(bias[j]);
      yr[j] = from_f32<T>(v);
    }
  }
}

// One block per (outer, inner) row of `axis` elements `inner` apart.
template <class T>
__global__ void softmax_kernel(SoftmaxParams p, const T* x, T* y) {
  __shared__ float scratch[32];
  const int64_t rows = p.outer * p.inner;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = (r / p.inner) * p.axis * p.inner + r % p.inner;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < p.axis; j += blockDim.x)
      m = fmaxf(m, to_f32(x[base + j * p.inner]));
    m = block_reduce<true>(m, scratch);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < p.axis; j += blockDim.x)
      s += expf(to_f32(x[base + j * p.inner]) - m);
    s = block_reduce<false>(s, scratch);
    for (int64_t j = threadIdx.x; j < p.axis; j += blockDim.x)
      y[base + j * p.inner] = from_f32<T>(expf(to_f32(x[base + j * p.inner]) - m) / s);
  }
}

// Threads per row-block: a warp multiple, no more than the row needs.
int row_threads(int64_t len) {
  int t = 32;
  while (t < 1024 && t < len) t *= 2;
  return t;
}

}  // namespace

cudaError_t batchnorm(ampx_dtype dt, const BatchNormParams& p, const void* x, const void* scale,
                      const void* bias, const void* mean, const void* var, void* y,
                      cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    batchnorm_kernel<T><<<grid_for(p.n), kThreads, 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
        static_cast<const T*>(mean), static_cast<const T*>(var), static_cast<T*>(y));
    return cudaGetLastError();
  });
}

cudaError_t layernorm(ampx_dtype dt, const LayerNormParams& p, const void* x, const void* scale,
                      const void* bias, void* y, cudaStream_t stream) {
  if (p.rows == 0 || p.cols == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    const int threads = row_threads(p.cols);
    layernorm_kernel<T><<<grid_for(p.rows, 1), threads, 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<const T*>(scale), static_cast<const T*>(bias),
        static_cast<T*>(y));
    return cudaGetLastError();
  });
}

cudaError_t softmax(ampx_dtype dt, const SoftmaxParams& p, const void* x, void* y,
                    cudaStream_t stream) {
  if (p.outer == 0 || p.inner == 0 || p.axis == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    softmax_kernel<T><<<grid_for(p.outer * p.inner, 1), row_threads(p.axis), 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
