// Integer dtype dispatch for the kernels that run on every integer width
// (the bit ops, CumProd).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ampx/backend_api.h"

namespace ampx::cuda::kern {

// Calls fn(T{}) with T the C++ type of an integer dtype.
template <class Fn>
cudaError_t dispatch_int(ampx_dtype dt, Fn&& fn) {
  switch (dt) {
    case AMPX_DTYPE_I8:
      return fn(int8_t{});
    case AMPX_DTYPE_U8:
      return fn(uint8_t{});
    case AMPX_DTYPE_I16:
      return fn(int16_t{});
    case AMPX_DTYPE_U16:
      return fn(uint16_t{});
    case AMPX_DTYPE_I32:
      return fn(int32_t{});
    case AMPX_DTYPE_U32:
      return fn(uint32_t{});
    case AMPX_DTYPE_I64:
      return fn(int64_t{});
    case AMPX_DTYPE_U64:
      return fn(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ampx::cuda::kern
