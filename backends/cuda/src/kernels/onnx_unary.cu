// Sin ... Atanh: elementwise, f32 math (the accurate library functions, as
// cpu_ref calls std::sin(float) ...), one rounding on store.
#include "common.cuh"
#include "kernels_onnx.hpp"

namespace ampx::cuda::kern {
namespace {

// IEEE on the edges as the C library: NaN outside the domain (asinf(2),
// acoshf(0)), atanhf(+-1) = +-inf.
__device__ __forceinline__ float apply(MathOp op, float x) {
  switch (op) {
    case MathOp::kSin:
      return sinf(x);
    case MathOp::kCos:
      return cosf(x);
    case MathOp::kTan:
      return tanf(x);
    case MathOp::kAsin:
      return asinf(x);
    case MathOp::kAcos:
      return acosf(x);
    case MathOp::kAtan:
      return atanf(x);
    case MathOp::kSinh:
      return sinhf(x);
    case MathOp::kCosh:
      return coshf(x);
    case MathOp::kAsinh:
      return asinhf(x);
    case MathOp::kAcosh:
      return acoshf(x);
    case MathOp::kAtanh:
      return atanhf(x);
  }
  return x;
}

template <class T>
__global__ void math_unary_kernel(MathOp op, const T* x, T* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = from_f32<T>(apply(op, to_f32(x[i])));
}

}  // namespace

cudaError_t math_unary(ampx_dtype dt, MathOp op, const void* x, void* y, int64_t n,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    math_unary_kernel<T>
        <<<grid_for(n), kThreads, 0, stream>>>(op, static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
