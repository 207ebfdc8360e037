// f32 <-> f16 / bf16 on the device, for buckets with 16 bits on the wire:
// each rank rounds its f32 gradients to nearest even (as the host path's
// float_to_f16_bits / float_to_bf16_bits), NCCL sums 16-bit values, and
// the sum is widened back (exactly) before the readers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "narrow_widen.hpp"

namespace ampx::nccl {
namespace {

constexpr int kThreads = 256;

__global__ void narrow_f16(const float* src, __half* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = __float2half_rn(src[i]);
}
__global__ void narrow_bf16(const float* src, __nv_bfloat16* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = __float2bfloat16_rn(src[i]);
}
__global__ void widen_f16(const __half* src, float* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = __half2float(src[i]);
}
__global__ void widen_bf16(const __nv_bfloat16* src, float* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = __bfloat162float(src[i]);
}

unsigned blocks(size_t n) {
  const size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

}  // namespace

cudaError_t launch_narrow(const float* src, void* dst, size_t n, bool bf16, cudaStream_t s) {
  if (bf16)
    narrow_bf16<<<blocks(n), kThreads, 0, s>>>(src, static_cast<__nv_bfloat16*>(dst), n);
  else
    narrow_f16<<<blocks(n), kThreads, 0, s>>>(src, static_cast<__half*>(dst), n);
  return cudaGetLastError();
}

cudaError_t launch_widen(const void* src, float* dst, size_t n, bool bf16, cudaStream_t s) {
  if (bf16)
    widen_bf16<<<blocks(n), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(src), dst, n);
  else
    widen_f16<<<blocks(n), kThreads, 0, s>>>(static_cast<const __half*>(src), dst, n);
  return cudaGetLastError();
}

}  // namespace ampx::nccl
