// Sin ... Atanh and the importer's float-only unaries: elementwise, f32
// math (the accurate library functions, as cpu_ref calls std::sin(float)
// ...), one rounding on store.
#include "common.cuh"
#include "kernels_onnx.hpp"

namespace ampx::cuda::kern {
namespace {

// log(1 + e^x) without overflow: x + log1p(e^-x) for x > 0 (cpu_ref's).
__device__ __forceinline__ float softplus(float x) {
  return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
}

__device__ __forceinline__ float clamp01(float t) {  // NaN stays NaN
  return t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
}

// IEEE on the edges as the C library: NaN outside the domain (asinf(2),
// acoshf(0), sqrtf(-1)), atanhf(+-1) = +-inf, logf(0) = -inf.
__device__ __forceinline__ float apply(const MathParams& p, float x) {
  switch (p.op) {
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
    case MathOp::kLeakyRelu:
      return x < 0.0f ? p.alpha * x : x;
    case MathOp::kHardSigmoid:
      return clamp01(p.alpha * x + p.beta);
    case MathOp::kHardSwish:
      return x * clamp01(x / 6.0f + 0.5f);
    case MathOp::kErf:
      return erff(x);
    case MathOp::kSqrt:
      return sqrtf(x);  // correctly rounded (nvcc's default -prec-sqrt=true)
    case MathOp::kReciprocal:
      return 1.0f / x;  // IEEE division (-prec-div=true)
    case MathOp::kExp:
      return expf(x);
    case MathOp::kLog:
      return logf(x);
    case MathOp::kFloor:
      return floorf(x);
    case MathOp::kCeil:
      return ceilf(x);
    case MathOp::kRound:
      return rintf(x);  // the default rounding mode: halves to even, as nearbyint
    case MathOp::kSoftplus:
      return softplus(x);
    case MathOp::kMish:
      return x * tanhf(softplus(x));
  }
  return x;
}

template <class T>
__global__ void math_unary_kernel(MathParams p, const T* x, T* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = from_f32<T>(apply(p, to_f32(x[i])));
}

}  // namespace

cudaError_t math_unary(ampx_dtype dt, const MathParams& p, const void* x, void* y, int64_t n,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    math_unary_kernel<T>
        <<<grid_for(n), kThreads, 0, stream>>>(p, static_cast<const T*>(x), static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
