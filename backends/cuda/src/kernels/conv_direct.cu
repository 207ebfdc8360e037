// The fallback convolution: direct NCHW, one thread per output element, f32
// accumulation in the same order as cpu_ref (channel, then kernel row, col).
// Correct for every stride, padding, dilation and group; not fast, which is
// why its 16-bit variants are answered `emulated`.
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

template <class T>
__global__ void conv2d_kernel(ConvParams p, const T* x, const T* w, const T* bias, T* y) {
  const int64_t n = p.N * p.M * p.OH * p.OW;
  const int64_t cg = p.C / p.group, mg = p.M / p.group;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t ow = i % p.OW, oh = (i / p.OW) % p.OH;
    const int64_t m = (i / (p.OW * p.OH)) % p.M, b = i / (p.OW * p.OH * p.M);
    const int64_t g = m / mg;
    float acc = bias ? to_f32(bias[m]) : 0.0f;
    for (int64_t c = 0; c < cg; ++c) {
      const T* xc = x + ((b * p.C) + g * cg + c) * p.H * p.W;
      const T* wc = w + (m * cg + c) * p.kH * p.kW;
      for (int64_t kh = 0; kh < p.kH; ++kh) {
        const int64_t h = oh * p.sh - p.pt + kh * p.dh;
        if (h < 0 || h >= p.H) continue;
        for (int64_t kw = 0; kw < p.kW; ++kw) {
          const int64_t ww = ow * p.sw - p.pl + kw * p.dw;
          if (ww < 0 || ww >= p.W) continue;
          acc += to_f32(xc[h * p.W + ww]) * to_f32(wc[kh * p.kW + kw]);
        }
      }
    }
    y[i] = from_f32<T>(acc);
  }
}

}  // namespace

cudaError_t conv2d_direct(ampx_dtype dt, const ConvParams& p, const void* x, const void* w,
                          const void* bias, void* y, cudaStream_t stream) {
  const int64_t n = p.N * p.M * p.OH * p.OW;
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    conv2d_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(
        p, static_cast<const T*>(x), static_cast<const T*>(w), static_cast<const T*>(bias),
        static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
