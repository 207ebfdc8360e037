// Data movement: strided copies (Transpose, Slice, Concat pieces, broadcast
// fills) and Gather. Elements are moved as raw 1/2/4/8-byte words, so every
// dtype is copied bit-exactly.
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

template <class W>
__global__ void strided_copy_kernel(StridedCopy p, int64_t n, const W* src, W* dst) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    int64_t rem = i, so = 0, d_o = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      const int64_t idx = rem % p.dims[d];
      rem /= p.dims[d];
      so += idx * p.src_strides[d];
      d_o += idx * p.dst_strides[d];
    }
    dst[d_o] = src[so];
  }
}

template <class W>
__global__ void gather_kernel(GatherParams p, const W* data, const void* indices, W* y, int* bad) {
  const int64_t n = p.outer * p.n_idx * p.inner;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const int64_t in = i % p.inner, j = (i / p.inner) % p.n_idx, o = i / (p.inner * p.n_idx);
    int64_t k =
        p.idx64 ? static_cast<const int64_t*>(indices)[j] : static_cast<const int32_t*>(indices)[j];
    if (k < -p.axis_len || k >= p.axis_len) {
      *bad = 1;
      y[i] = W{};
      continue;
    }
    if (k < 0) k += p.axis_len;
    y[i] = data[(o * p.axis_len + k) * p.inner + in];
  }
}

template <class Fn>
cudaError_t dispatch_word(size_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      return fn(uint8_t{});
    case 2:
      return fn(uint16_t{});
    case 4:
      return fn(uint32_t{});
    case 8:
      return fn(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t strided_copy(size_t elem_size, const StridedCopy& p, int64_t n, const void* src,
                         void* dst, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_word(elem_size, [&](auto tag) {
    using W = decltype(tag);
    strided_copy_kernel<W><<<grid_for(n), kThreads, 0, stream>>>(p, n, static_cast<const W*>(src),
                                                                 static_cast<W*>(dst));
    return cudaGetLastError();
  });
}

cudaError_t gather(size_t elem_size, const GatherParams& p, const void* data, const void* indices,
                   void* y, int* bad, cudaStream_t stream) {
  const int64_t n = p.outer * p.n_idx * p.inner;
  if (n == 0) return cudaSuccess;
  return dispatch_word(elem_size, [&](auto tag) {
    using W = decltype(tag);
    gather_kernel<W><<<grid_for(n), kThreads, 0, stream>>>(p, static_cast<const W*>(data), indices,
                                                           static_cast<W*>(y), bad);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
