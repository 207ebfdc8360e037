// Backward kernels over windows: MaxPoolGrad, AveragePoolGrad and the
// direct Conv2dGradWeight (the fallback when cuDNN cannot take the node).
// Scatters are turned into gathers (each output element sums what reaches
// it, in a fixed order) so that overlapping windows need no atomics and a
// run is reproducible bit for bit.
#include "common.cuh"
#include "kernels_grad.hpp"

namespace ampx::cuda::kern {
namespace {

struct Window {
  int64_t hs, he, ws, we;
};

// The window of output (oh, ow), clipped to the input: pool_kernel's and
// the reference's pool_window().
__device__ __forceinline__ Window window_of(const PoolParams& p, int64_t oh, int64_t ow) {
  const int64_t h0 = oh * p.sh - p.pt, w0 = ow * p.sw - p.pl;
  return {h0 > 0 ? h0 : 0, h0 + p.kH < p.H ? h0 + p.kH : p.H, w0 > 0 ? w0 : 0,
          w0 + p.kW < p.W ? w0 + p.kW : p.W};
}

// AveragePool's divisor for output (oh, ow): count_include_pad counts the
// padding cells but never the part of a ceil_mode window past the padding.
__device__ __forceinline__ int64_t window_count(const PoolParams& p, int64_t oh, int64_t ow,
                                                const Window& w) {
  if (!p.include_pad) return (w.he - w.hs) * (w.we - w.ws);
  const int64_t h0 = oh * p.sh - p.pt, w0 = ow * p.sw - p.pl;
  const int64_t hb = h0 + p.kH < p.H + p.pb ? h0 + p.kH : p.H + p.pb;
  const int64_t wb = w0 + p.kW < p.W + p.pr ? w0 + p.kW : p.W + p.pr;
  return (hb - h0) * (wb - w0);
}

// The cell (h * W + w) of the plane `xp` that receives the window's
// gradient: its first maximum in row-major order, or its first NaN (the
// forward propagates NaN); -1 for an empty window. The reference's scan.
template <class T>
__device__ int64_t window_argmax(const PoolParams& p, const T* xp, const Window& win) {
  int64_t best = -1;
  float m = -INFINITY;
  for (int64_t h = win.hs; h < win.he && !(best >= 0 && isnan(m)); ++h) {
    for (int64_t w = win.ws; w < win.we; ++w) {
      const float v = to_f32(xp[h * p.W + w]);
      if (best < 0 || v > m || (isnan(v) && !isnan(m))) {
        m = v;
        best = h * p.W + w;
        if (isnan(v)) break;
      }
    }
  }
  return best;
}

// First output index whose window [o*s - pad, o*s - pad + k) reaches input
// index i, and the last: o in [ceil((i + pad - k + 1) / s), floor((i + pad) / s)].
__device__ __forceinline__ int64_t first_window(int64_t i, int64_t pad, int64_t k, int64_t s) {
  const int64_t a = i + pad - k + 1;
  return a <= 0 ? 0 : (a + s - 1) / s;
}
__device__ __forceinline__ int64_t last_window(int64_t i, int64_t pad, int64_t s, int64_t out) {
  const int64_t b = (i + pad) / s;  // i + pad >= 0
  return b < out - 1 ? b : out - 1;
}

// One thread per input cell: the sum, in (oh, ow) order as the reference
// adds them, of the gradients of the windows that reach it.
template <class T>
__global__ void pool_grad_kernel(PoolParams p, const T* dy, const T* x, T* dx) {
  const int64_t n = p.planes * p.H * p.W;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t w = i % p.W, h = (i / p.W) % p.H, plane = i / (p.W * p.H);
    const T* dyp = dy + plane * p.OH * p.OW;
    const T* xp = p.max ? x + plane * p.H * p.W : nullptr;
    const int64_t oh0 = first_window(h, p.pt, p.kH, p.sh), oh1 = last_window(h, p.pt, p.sh, p.OH);
    const int64_t ow0 = first_window(w, p.pl, p.kW, p.sw), ow1 = last_window(w, p.pl, p.sw, p.OW);
    float acc = 0.0f;
    for (int64_t oh = oh0; oh <= oh1; ++oh) {
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const Window win = window_of(p, oh, ow);
        const float g = to_f32(dyp[oh * p.OW + ow]);
        if (p.max) {
          if (window_argmax(p, xp, win) == h * p.W + w) acc += g;
        } else {
          acc += g / static_cast<float>(window_count(p, oh, ow, win));
        }
      }
    }
    dx[i] = from_f32<T>(acc);
  }
}

// One block per weight element (m, c, kh, kw), grid-stride over them; the
// block's threads split the N * OH * OW terms, summed by a fixed block tree.
template <class T>
__global__ void conv_grad_weight_kernel(ConvParams p, const T* dy, const T* x, T* dw) {
  __shared__ float scratch[32];
  const int64_t Cg = p.C / p.group, Mg = p.M / p.group;
  const int64_t weights = p.M * Cg * p.kH * p.kW;
  const int64_t terms = p.N * p.OH * p.OW;
  for (int64_t e = blockIdx.x; e < weights; e += gridDim.x) {
    const int64_t kw = e % p.kW, kh = (e / p.kW) % p.kH, c = (e / (p.kW * p.kH)) % Cg;
    const int64_t m = e / (p.kW * p.kH * Cg);
    const int64_t ci = (m / Mg) * Cg + c;  // the input channel in m's group
    float s = 0.0f;
    for (int64_t t = threadIdx.x; t < terms; t += blockDim.x) {
      const int64_t ow = t % p.OW, oh = (t / p.OW) % p.OH, n = t / (p.OW * p.OH);
      const int64_t ih = oh * p.sh - p.pt + kh * p.dh, iw = ow * p.sw - p.pl + kw * p.dw;
      if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
      s += to_f32(dy[((n * p.M + m) * p.OH + oh) * p.OW + ow]) *
           to_f32(x[((n * p.C + ci) * p.H + ih) * p.W + iw]);
    }
    s = block_reduce<false>(s, scratch);
    if (threadIdx.x == 0) dw[e] = from_f32<T>(s);
  }
}

}  // namespace

cudaError_t pool2d_grad(ampx_dtype dt, const PoolParams& p, const void* dy, const void* x, void* dx,
                        cudaStream_t stream) {
  const int64_t n = p.planes * p.H * p.W;
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    pool_grad_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(
        p, static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<T*>(dx));
    return cudaGetLastError();
  });
}

cudaError_t conv2d_grad_weight_direct(ampx_dtype dt, const ConvParams& p, const void* dy,
                                      const void* x, void* dw, cudaStream_t stream) {
  const int64_t weights = p.M * (p.C / p.group) * p.kH * p.kW;
  if (weights == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    const int64_t terms = p.N * p.OH * p.OW;
    int threads = 32;
    while (threads < 256 && threads < terms) threads *= 2;
    conv_grad_weight_kernel<T><<<grid_for(weights, 1), threads, 0, stream>>>(
        p, static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<T*>(dw));
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
