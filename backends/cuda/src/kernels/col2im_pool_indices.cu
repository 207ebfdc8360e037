// Col2Im and MaxPoolIndices: gather forms, one thread per output element,
// each a port of cpu_ref's loop (sdk/reference/src/ops_vision.cpp,
// ops_pool_indices.cpp).
#include "common.cuh"
#include "kernels_onnx.hpp"

namespace ampx::cuda::kern {
namespace {

// cpu_ref scatters column (kc, l) into the cell at l's block position *
// stride - pad + kc's offset * dilation, kc outer. Gathered here: for each
// kc (ascending, the same order of adds) at most one block position lands on
// this cell, pos = (cell + pad - off * dilation) / stride when that divides
// and lies inside the blocks.
template <class T>
__global__ void col2im_kernel(Col2ImParams p, const T* x, T* y) {
  const int64_t n = p.planes * p.image_cells;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t plane = i / p.image_cells;
    int64_t at[kMaxRank];  // the cell's coordinates, row-major over image
    int64_t rem = i % p.image_cells;
    for (int a = p.k - 1; a >= 0; --a) {
      at[a] = rem % p.image[a];
      rem /= p.image[a];
    }
    const T* col = x + plane * p.block_cells * p.positions;
    float acc = 0.0f;
    for (int64_t kc = 0; kc < p.block_cells; ++kc) {
      int64_t off[kMaxRank];  // kc's kernel offset, row-major over block
      int64_t r = kc;
      for (int a = p.k - 1; a >= 0; --a) {
        off[a] = r % p.block[a];
        r /= p.block[a];
      }
      int64_t l = 0;  // the block position, row-major over blocks
      bool inside = true;
      for (int a = 0; a < p.k && inside; ++a) {
        const int64_t t = at[a] + p.pads_begin[a] - off[a] * p.dilations[a];
        const int64_t pos = t / p.strides[a];
        inside = t >= 0 && t % p.strides[a] == 0 && pos < p.blocks[a];
        l = l * p.blocks[a] + pos;
      }
      if (inside) acc += to_f32(col[kc * p.positions + l]);
    }
    y[i] = from_f32<T>(acc);
  }
}

__device__ __forceinline__ int64_t ceil_div(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// cpu_ref's pool_taps: taps w0, w0 + d, ... (k of them) inside [0, hi): the
// first one and the end (first + count * d).
__device__ __forceinline__ void taps(int64_t w0, int64_t k, int64_t d, int64_t hi, int64_t& first,
                                     int64_t& end) {
  const int64_t skip = w0 >= 0 ? 0 : ceil_div(-w0, d);
  const int64_t before_hi = hi > w0 ? ceil_div(hi - w0, d) : 0;
  const int64_t last = k < before_hi ? k : before_hi;
  const int64_t count = last - skip > 0 ? last - skip : 0;
  first = w0 + skip * d;
  end = first + count * d;
}

// The window's first maximum in its row-major walk; the first NaN wins.
template <class T>
__global__ void maxpool_indices_kernel(PoolIndicesParams q, const T* x, int64_t* y) {
  const PoolParams& p = q.pool;
  const int64_t n = p.planes * p.OH * p.OW;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t ow = i % p.OW, oh = (i / p.OW) % p.OH, plane = i / (p.OW * p.OH);
    const T* xp = x + plane * p.H * p.W;
    int64_t hs, he, ws, we;
    taps(oh * p.sh - p.pt, p.kH, q.dh, p.H, hs, he);
    taps(ow * p.sw - p.pl, p.kW, q.dw, p.W, ws, we);
    if (hs >= he || ws >= we) {  // the taps step over X: -1, as cpu_ref
      y[i] = -1;
      continue;
    }
    int64_t bh = hs, bw = ws;
    float m = to_f32(xp[bh * p.W + bw]);
    for (int64_t h = hs; h < he && !isnan(m); h += q.dh) {
      for (int64_t w = ws; w < we; w += q.dw) {
        const float v = to_f32(xp[h * p.W + w]);
        if (v > m || isnan(v)) {
          m = v;
          bh = h;
          bw = w;
          if (isnan(v)) break;
        }
      }
    }
    const int64_t cell = q.column_major ? bw * p.H + bh : bh * p.W + bw;
    y[i] = plane * p.H * p.W + cell;
  }
}

}  // namespace

cudaError_t col2im(ampx_dtype dt, const Col2ImParams& p, const void* x, void* y,
                   cudaStream_t stream) {
  const int64_t n = p.planes * p.image_cells;
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    col2im_kernel<T>
        <<<grid_for(n), kThreads, 0, stream>>>(p, static_cast<const T*>(x), static_cast<T*>(y));
    return cudaGetLastError();
  });
}

cudaError_t maxpool_indices(ampx_dtype dt, const PoolIndicesParams& p, const void* x, int64_t* y,
                            cudaStream_t stream) {
  const int64_t n = p.pool.planes * p.pool.OH * p.pool.OW;
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    maxpool_indices_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(p, static_cast<const T*>(x), y);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
