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

// Each element converted once, rounded to nearest even where it narrows.
__device__ __half convert(float v, __half*) {
  return __float2half_rn(v);
}
__device__ __nv_bfloat16 convert(float v, __nv_bfloat16*) {
  return __float2bfloat16_rn(v);
}
__device__ float convert(__half v, float*) {
  return __half2float(v);
}
__device__ float convert(__nv_bfloat16 v, float*) {
  return __bfloat162float(v);
}

template <class From, class To>
__global__ void convert_all(const From* src, To* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x)
    dst[i] = convert(src[i], static_cast<To*>(nullptr));
}

unsigned blocks(size_t n) {
  const size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

}  // namespace

cudaError_t launch_narrow(const float* src, void* dst, size_t n, bool bf16, cudaStream_t s) {
  if (bf16)
    convert_all<<<blocks(n), kThreads, 0, s>>>(src, static_cast<__nv_bfloat16*>(dst), n);
  else
    convert_all<<<blocks(n), kThreads, 0, s>>>(src, static_cast<__half*>(dst), n);
  return cudaGetLastError();
}

cudaError_t launch_widen(const void* src, float* dst, size_t n, bool bf16, cudaStream_t s) {
  if (bf16)
    convert_all<<<blocks(n), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(src), dst, n);
  else
    convert_all<<<blocks(n), kThreads, 0, s>>>(static_cast<const __half*>(src), dst, n);
  return cudaGetLastError();
}

}  // namespace ampx::nccl
