// Backward kernels of the activations (ReluGrad, SigmoidGrad, TanhGrad,
// GeluGrad, ClipGrad: one kernel, an op code) and of Softmax. The
// derivatives are written exactly as cpu_ref's (sdk/reference/src/ops_grad.cpp),
// in f32 for every dtype.
#include "common.cuh"
#include "kernels_grad.hpp"

namespace ampx::cuda::kern {
namespace {

// 1/sqrt(2), 1/sqrt(2*pi) and sqrt(2/pi), rounded to f32 as the reference's.
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
constexpr float kSqrt2OverPi = 0.79788456080286536f;

// d/dx of x * Phi(x): Phi(x) + x * phi(x).
__device__ __forceinline__ float gelu_erf_grad(float x) {
  return 0.5f * (1.0f + erff(x * kInvSqrt2)) + x * kInvSqrt2Pi * expf(-0.5f * x * x);
}

// d/dx of 0.5 x (1 + tanh(k (x + 0.044715 x^3))).
__device__ __forceinline__ float gelu_tanh_grad(float x) {
  const float t = tanhf(kSqrt2OverPi * (x + 0.044715f * x * x * x));
  return 0.5f * (1.0f + t) +
         0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * 0.044715f * x * x);
}

__device__ __forceinline__ float grad(const GradParams& p, float dy, float t) {
  switch (p.op) {
    case GradOp::kRelu:  // t = X; NaN compares false: gives 0, as docs/OPS.md says
      return t > 0.0f ? dy : 0.0f;
    case GradOp::kSigmoid:  // t = Y
      return dy * t * (1.0f - t);
    case GradOp::kTanh:  // t = Y
      return dy * (1.0f - t * t);
    case GradOp::kGeluErf:
      return dy * gelu_erf_grad(t);
    case GradOp::kGeluTanh:
      return dy * gelu_tanh_grad(t);
    case GradOp::kClip:  // the bounds pass (PyTorch's clamp backward)
      return t >= p.lo && t <= p.hi ? dy : 0.0f;
  }
  return dy;
}

template <class T>
__global__ void elementwise_grad_kernel(GradParams p, const T* dy, const T* t, T* dx, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = from_f32<T>(grad(p, to_f32(dy[i]), to_f32(t[i])));
}

// One block per (outer, inner) row of `axis` elements `inner` apart, as the
// forward softmax_kernel: the dot product sum(dY * Y) by a block tree.
template <class T>
__global__ void __launch_bounds__(1024)
    softmax_grad_kernel(SoftmaxParams p, const T* dy, const T* y, T* dx) {
  __shared__ float scratch[32];
  const int64_t rows = p.outer * p.inner;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t base = (r / p.inner) * p.axis * p.inner + r % p.inner;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < p.axis; j += blockDim.x) {
      const int64_t i = base + j * p.inner;
      s += to_f32(dy[i]) * to_f32(y[i]);
    }
    const float dot = block_reduce<false>(s, scratch);
    for (int64_t j = threadIdx.x; j < p.axis; j += blockDim.x) {
      const int64_t i = base + j * p.inner;
      dx[i] = from_f32<T>(to_f32(y[i]) * (to_f32(dy[i]) - dot));
    }
  }
}

int row_threads(int64_t len) {
  int t = 32;
  while (t < 1024 && t < len) t *= 2;
  return t;
}

}  // namespace

cudaError_t elementwise_grad(ampx_dtype dt, const GradParams& p, const void* dy, const void* t,
                             void* dx, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    elementwise_grad_kernel<T><<<grid_for(n), kThreads, 0, stream>>>(
        p, static_cast<const T*>(dy), static_cast<const T*>(t), static_cast<T*>(dx), n);
    return cudaGetLastError();
  });
}

cudaError_t softmax_grad(ampx_dtype dt, const SoftmaxParams& p, const void* dy, const void* y,
                         void* dx, cudaStream_t stream) {
  if (p.outer == 0 || p.inner == 0 || p.axis == 0) return cudaSuccess;
  return dispatch_float(dt, [&](auto tag) {
    using T = decltype(tag);
    softmax_grad_kernel<T><<<grid_for(p.outer * p.inner, 1), row_threads(p.axis), 0, stream>>>(
        p, static_cast<const T*>(dy), static_cast<const T*>(y), static_cast<T*>(dx));
    return cudaGetLastError();
  });
}

}  // namespace ampx::cuda::kern
