// UpdateGuard (docs/OPS.md, "Training ops"), f32 only: the finite flag and
// the global L2 norm of every gradient, clipping folded into grad_scale and
// apply cleared on overflow. Deterministic without atomics: the gradients
// are cut into cpu_ref's fixed 65,536-element blocks, one CUDA block each,
// summing squares in f64 (as cpu_ref) with a fixed-order tree; one thread
// then adds the blocks' sums in block order (sdk/reference/src/ops_guard.cpp).
#include <cmath>

#include "common.cuh"
#include "kernels_grad.hpp"

namespace ampx::cuda::kern {
namespace {

constexpr int kGuardThreads = 256;

__device__ __forceinline__ bool non_finite(float v) {
  // From the exponent bits: no isfinite a fast-math build could drop.
  return (__float_as_uint(v) & 0x7f800000u) == 0x7f800000u;
}

__global__ void __launch_bounds__(kGuardThreads)
    guard_blocks(const float* g, int64_t n, double* block_sq, int* block_bad) {
  __shared__ double sq[kGuardThreads];
  __shared__ int bad[kGuardThreads];
  const int64_t start = static_cast<int64_t>(blockIdx.x) * kGuardBlock;
  const int64_t end = start + kGuardBlock < n ? start + kGuardBlock : n;
  double s = 0.0;
  int b = 0;
  for (int64_t i = start + threadIdx.x; i < end; i += kGuardThreads) {
    const float v = g[i];
    b |= non_finite(v) ? 1 : 0;
    const double d = v;
    s += d * d;
  }
  sq[threadIdx.x] = s;
  bad[threadIdx.x] = b;
  __syncthreads();
  for (int w = kGuardThreads / 2; w > 0; w >>= 1) {
    if (static_cast<int>(threadIdx.x) < w) {
      sq[threadIdx.x] += sq[threadIdx.x + w];
      bad[threadIdx.x] |= bad[threadIdx.x + w];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    block_sq[blockIdx.x] = sq[0];
    block_bad[blockIdx.x] = bad[0];
  }
}

__global__ void guard_finish(UpdateGuardParams p, const double* block_sq, const int* block_bad,
                             const float* hyper, float* hyper_out, float* stats) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  double squares = 0.0;
  bool finite = true;
  for (int64_t b = 0; b < p.blocks; ++b) {
    squares += block_sq[b];
    finite = finite && block_bad[b] == 0;
  }
  float h[5];
  for (int k = 0; k < p.hyper; ++k) h[k] = hyper[k];
  const float grad_scale = h[1];
  const double norm = finite ? sqrt(squares) * static_cast<double>(grad_scale) : INFINITY;
  if (p.clip_norm > 0.0f && finite) {
    // PyTorch's clip_grad_norm_: scale by clip / (norm + 1e-6) below 1.
    const double coef = static_cast<double>(p.clip_norm) / (norm + 1e-6);
    if (coef < 1.0) h[1] = static_cast<float>(static_cast<double>(grad_scale) * coef);
  }
  if (p.skip_nonfinite && !finite) h[2] = 0.0f;
  for (int k = 0; k < p.hyper; ++k) hyper_out[k] = h[k];
  stats[0] = finite ? 1.0f : 0.0f;
  stats[1] = static_cast<float>(norm);
}

}  // namespace

cudaError_t update_guard_blocks(const float* g, int64_t n, double* block_sq, int* block_bad,
                                cudaStream_t stream) {
  const int64_t blocks = (n + kGuardBlock - 1) / kGuardBlock;
  if (blocks == 0) return cudaSuccess;
  guard_blocks<<<static_cast<unsigned>(blocks), kGuardThreads, 0, stream>>>(g, n, block_sq,
                                                                            block_bad);
  return cudaGetLastError();
}

cudaError_t update_guard_finish(const UpdateGuardParams& p, const double* block_sq,
                                const int* block_bad, const float* hyper, float* hyper_out,
                                float* stats, cudaStream_t stream) {
  guard_finish<<<1, 32, 0, stream>>>(p, block_sq, block_bad, hyper, hyper_out, stats);
  return cudaGetLastError();
}

}  // namespace ampx::cuda::kern
