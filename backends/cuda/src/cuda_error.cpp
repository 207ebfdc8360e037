#include "cuda_error.hpp"

#include "ampx/plugin_support.hpp"

namespace ampx::cuda {

ampx_status_code status_code_of(cudaError_t e) noexcept {
  switch (e) {
    case cudaSuccess:
      return AMPX_STATUS_OK;
    case cudaErrorMemoryAllocation:
      return AMPX_STATUS_OUT_OF_MEMORY;
    case cudaErrorInvalidConfiguration:
    case cudaErrorInvalidValue:
    case cudaErrorInvalidPitchValue:
    case cudaErrorInvalidDevice:
      return AMPX_STATUS_INVALID_ARGUMENT;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorDevicesUnavailable:
      return AMPX_STATUS_UNAVAILABLE;
    default:
      return is_sticky(e) ? AMPX_STATUS_UNAVAILABLE : AMPX_STATUS_INTERNAL;
  }
}

bool is_sticky(cudaError_t e) noexcept {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

std::string describe(cudaError_t e) {
  return std::string(cudaGetErrorString(e)) + " (" + cudaGetErrorName(e) + ")";
}

void throw_cuda(cudaError_t e, std::string_view what) {
  // Clear the per-thread last error so the next call does not report it
  // again (sticky errors cannot be cleared: is_sticky()).
  (void)cudaGetLastError();
  throw plugin_support::StatusError(status_code_of(e), std::string(what) + ": " + describe(e));
}

void throw_cublas(cublasStatus_t s, std::string_view what) {
  const ampx_status_code code = s == CUBLAS_STATUS_ALLOC_FAILED    ? AMPX_STATUS_OUT_OF_MEMORY
                                : s == CUBLAS_STATUS_NOT_SUPPORTED ? AMPX_STATUS_UNSUPPORTED
                                : s == CUBLAS_STATUS_INVALID_VALUE ? AMPX_STATUS_INVALID_ARGUMENT
                                                                   : AMPX_STATUS_INTERNAL;
  throw plugin_support::StatusError(code, std::string(what) + ": " + cublasLtGetStatusString(s) +
                                              " (" + cublasLtGetStatusName(s) + ")");
}

}  // namespace ampx::cuda
