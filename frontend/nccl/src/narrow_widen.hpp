// The module's two conversion kernels (narrow_widen.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ampx::nccl {

// `bf16` picks bf16 over f16 (an internal header: the public interface
// takes WireType).
cudaError_t launch_narrow(const float* src, void* dst, size_t n, bool bf16, cudaStream_t s);
cudaError_t launch_widen(const void* src, float* dst, size_t n, bool bf16, cudaStream_t s);

}  // namespace ampx::nccl
