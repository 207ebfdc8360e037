// Pooling (max, average) and reductions (sum, mean; GlobalAveragePool is a
// mean over H, W). f32 accumulation for every dtype.
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

// One thread per output element; the window logic is cpu_ref's.
template <class T>
__global__ void pool_kernel(PoolParams p, const T* x, T* y) {
  const int64_t n = p.planes * p.OH * p.OW;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t ow = i % p.OW, oh = (i / p.OW) % p.OH, plane = i / (p.OW * p.OH);
    const T* xp = x + plane * p.H * p.W;
    const int64_t h0 = oh * p.sh - p.pt, w0 = ow * p.sw - p.pl;
    const int64_t hs = h0 > 0 ? h0 : 0, ws = w0 > 0 ? w0 : 0;
    const int64_t he = h0 + p.kH < p.H ? h0 + p.kH : p.H;
    const int64_t we = w0 + p.kW < p.W ? w0 + p.kW : p.W;
    float r;
    if (p.max) {
      r = -INFINITY;  // padding never wins
      for (int64_t h = hs; h < he; ++h)
        for (int64_t w = ws; w < we; ++w) {
          const float v = to_f32(xp[h * p.W + w]);
          if (v > r || isnan(v)) r = v;  // NaN propagates
        }
    } else {
      float s = 0.0f;
      for (int64_t h = hs; h < he; ++h)
        for (int64_t w = ws; w < we; ++w) s += to_f32(xp[h * p.W + w]);
      // count_include_pad counts padding cells, but never the part of a
      // ceil_mode window that hangs past the bottom/right padding.
      int64_t count;
      if (p.include_pad) {
        const int64_t hb = h0 + p.kH < p.H + p.pb ? h0 + p.kH : p.H + p.pb;
        const int64_t wb = w0 + p.kW < p.W + p.pr ? w0 + p.kW : p.W + p.pr;
        count = (hb - h0) * (wb - w0);
      } else {
        count = (he - hs) * (we - ws);
      }
      r = s / static_cast<float>(count);
    }
    y[i] = from_f32<T>(r);
  }
}

// One block per output element (grid-stride over outputs), threads split
// the reduced elements; block sum in f32.
template <class T>
__global__ void reduce_kernel(ReduceParams p, const T* x, T* y) {
  __shared__ float scratch[32];
  for (int64_t o = blockIdx.x; o < p.outputs; o += gridDim.x) {
    int64_t rem = o, base = 0;
    for (int d = p.out_rank - 1; d >= 0; --d) {
      base += (rem % p.out_dims[d]) * p.out_strides[d];
      rem /= p.out_dims[d];
    }
    float s = 0.0f;
    for (int64_t r = threadIdx.x; r < p.red_count; r += blockDim.x) {
      int64_t rr = r, off = base;
      for (int d = p.red_rank - 1; d >= 0; --d) {
        off += (rr % p.red_dims[d]) * p.red_strides[d];
        rr /= p.red_dims[d];
      }
      s += to_f32(x[off]);
    }
    s = block_reduce<false>(s, scratch);
    if (threadIdx.x == 0) y[o] = from_f32<T>(p.mean ? s / static_cast<float>(p.red_count) : s);
  }
}

}  // namespace

cudaError_t pool2d(ampx_dtype dt, const PoolParams& p, const void* x, void* y,
                   cudaStream_t stream) {
  const int64_t n = p.planes * p.OH * p.OW;
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    pool_kernel<T>
        <<<grid_for(n), kThreads, 0, stream>>>(p, static_cast<const T*>(x), static_cast<T*>(y));
    return cudaGetLastError();
  });
}

cudaError_t reduce(ampx_dtype dt, const ReduceParams& p, const void* x, void* y,
                   cudaStream_t stream) {
  if (p.outputs == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    int threads = 32;
    while (threads < 256 && threads < p.red_count) threads *= 2;
    reduce_kernel<T><<<grid_for(p.outputs, 1), threads, 0, stream>>>(p, static_cast<const T*>(x),
                                                                     static_cast<T*>(y));
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
