// RAII owners for the CUDA, cuBLASLt and cuDNN handles: every handle the
// plugin creates is released by exactly one destructor, also when a later
// step of a prepare throws.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <memory>
#include <type_traits>

namespace ampx::cuda {

// unique_ptr over a C handle type H (a pointer to an opaque struct) released
// by Destroy. Destroy's result is ignored: a destructor cannot report it and
// the handle is gone either way.
template <class H, auto Destroy>
struct HandleDeleter {
  void operator()(H h) const noexcept { (void)Destroy(h); }
};
template <class H, auto Destroy>
using UniqueHandle = std::unique_ptr<std::remove_pointer_t<H>, HandleDeleter<H, Destroy>>;

using UniqueStream = UniqueHandle<cudaStream_t, &cudaStreamDestroy>;
using UniqueEvent = UniqueHandle<cudaEvent_t, &cudaEventDestroy>;
using UniqueLtHandle = UniqueHandle<cublasLtHandle_t, &cublasLtDestroy>;
using UniqueLtMatmulDesc = UniqueHandle<cublasLtMatmulDesc_t, &cublasLtMatmulDescDestroy>;
using UniqueLtLayout = UniqueHandle<cublasLtMatrixLayout_t, &cublasLtMatrixLayoutDestroy>;
using UniqueLtPreference =
    UniqueHandle<cublasLtMatmulPreference_t, &cublasLtMatmulPreferenceDestroy>;

}  // namespace ampx::cuda
