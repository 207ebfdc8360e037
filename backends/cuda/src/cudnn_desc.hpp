// RAII for the cuDNN descriptors the convolution ops create: released
// through the dlopen()ed library's destroy function, also when a later step
// of a prepare throws. Shared by the forward (ops_conv.cpp) and the weight
// gradient (ops_conv_grad.cpp).
#pragma once

#include <cudnn.h>

#include "ampx/backend_api.h"
#include "cudnn_library.hpp"

namespace ampx::cuda {

template <class H>
class CudnnDesc {
 public:
  using Destroy = cudnnStatus_t (*)(H);
  CudnnDesc(const CudnnLibrary& lib, cudnnStatus_t (*create)(H*), Destroy destroy, const char* what)
      : destroy_(destroy) {
    lib.check(create(&h_), what);
  }
  ~CudnnDesc() {
    if (h_) (void)destroy_(h_);
  }
  CudnnDesc(const CudnnDesc&) = delete;
  CudnnDesc& operator=(const CudnnDesc&) = delete;
  H get() const noexcept { return h_; }

 private:
  H h_{};
  Destroy destroy_;
};

// The cuDNN data type of a float dtype (f32 for anything else).
inline cudnnDataType_t cudnn_type(ampx_dtype dt) {
  switch (dt) {
    case AMPX_DTYPE_F16:
      return CUDNN_DATA_HALF;
    case AMPX_DTYPE_BF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

}  // namespace ampx::cuda
