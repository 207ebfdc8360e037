// Det (docs/OPS.md), a port of cpu_ref's DetKernel
// (sdk/reference/src/ops_vision.cpp): Gaussian elimination with partial
// pivoting in double, whatever the storage, the sign flipped per row swap,
// an exactly zero pivot column giving 0. One thread per matrix, working on
// its own double copy in global scratch (matrices are small: M <= kDetMaxM,
// answered unsupported above). The result is rounded to f32 first and then
// to the storage dtype, as the reference's widened 16-bit run does. This
// file is compiled with -fmad=false (CMakeLists.txt): the eliminations round
// as the reference's x86-64 build (no fused multiply-add).
#include "common.cuh"

namespace ampx::cuda::kern {
namespace {

__device__ double determinant(double* a, int64_t m) {
  double det = 1;
  for (int64_t k = 0; k < m; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < m; ++i)
      if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
    const double pivot = a[p * m + k];
    if (pivot == 0) return 0;
    if (p != k) {
      for (int64_t j = k; j < m; ++j) {
        const double t = a[p * m + j];
        a[p * m + j] = a[k * m + j];
        a[k * m + j] = t;
      }
      det = -det;
    }
    det *= pivot;
    for (int64_t i = k + 1; i < m; ++i) {
      const double f = a[i * m + k] / pivot;
      if (f == 0) continue;
      for (int64_t j = k + 1; j < m; ++j) a[i * m + j] -= f * a[k * m + j];
    }
  }
  return det;
}

template <class T>
__global__ void det_kernel(int64_t batch, int64_t m, const T* x, T* y, double* scratch) {
  const int64_t mm = m * m;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < batch;
       b += stride) {
    double* a = scratch + b * mm;
    for (int64_t i = 0; i < mm; ++i) a[i] = static_cast<double>(to_f32(x[b * mm + i]));
    y[b] = from_f32<T>(static_cast<float>(determinant(a, m)));
  }
}

}  // namespace

cudaError_t det(ampx_dtype dt, int64_t batch, int64_t m, const void* x, void* y, double* scratch,
                cudaStream_t stream) {
  if (batch == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    // One thread per matrix: small blocks spread few matrices over the SMs.
    constexpr int kBlock = 64;
    det_kernel<T><<<grid_for(batch, kBlock), kBlock, 0, stream>>>(
        batch, m, static_cast<const T*>(x), static_cast<T*>(y), scratch);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
