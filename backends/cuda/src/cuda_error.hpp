// CUDA, cuBLASLt and cuDNN results turned into exceptions that guard() maps
// to statuses. Every runtime call and every kernel launch goes through one of
// these: a message names the call and carries the library's own error text,
// e.g. "cudaMalloc(1099511627776 bytes): out of memory (cudaErrorMemoryAllocation)".
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "ampx/backend_api.h"

namespace ampx::cuda {

// The status code for a CUDA error: OUT_OF_MEMORY, UNAVAILABLE (no driver or
// device, or an error that leaves the context unusable), INVALID_ARGUMENT
// (launch configuration, invalid value) or INTERNAL.
ampx_status_code status_code_of(cudaError_t e) noexcept;

// True for errors after which the CUDA context cannot be used again (an
// illegal address, a trap, ...): the device is then reported unusable.
bool is_sticky(cudaError_t e) noexcept;

// "<cudaGetErrorString> (<cudaGetErrorName>)".
std::string describe(cudaError_t e);

[[noreturn]] void throw_cuda(cudaError_t e, std::string_view what);
[[noreturn]] void throw_cublas(cublasStatus_t s, std::string_view what);

inline void check_cuda(cudaError_t e, std::string_view what) {
  if (e != cudaSuccess) throw_cuda(e, what);
}
inline void check_cublas(cublasStatus_t s, std::string_view what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw_cublas(s, what);
}

// After a kernel launch: cudaGetLastError() picks up a bad launch
// configuration (non-sticky: the device stays usable).
inline void check_launch(cudaError_t launch_result, std::string_view kernel) {
  check_cuda(launch_result, std::string("launch of ") + std::string(kernel));
}

}  // namespace ampx::cuda
