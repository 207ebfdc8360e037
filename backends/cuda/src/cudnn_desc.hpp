// RAII for the cuDNN descriptors the convolution ops create: released
// through the dlopen()ed library's destroy function, also when a later step
// of a prepare throws. Shared by the forward (ops_conv.cpp) and the weight
// gradient (ops_conv_grad.cpp).
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <vector>

#include "ampx/backend_api.h"
#include "cudnn_library.hpp"
#include "kernels.hpp"

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

struct OpContext;

// A 2-D convolution's parameters from its node's attributes and the dims of
// X [N,C,H,W], W [M,C/group,kH,kW] and Y [N,M,OH,OW] (the forward op's
// inputs and output; the weight gradient's X, dW and dY).
kern::ConvParams conv_params(const OpContext& c, const std::vector<int64_t>& x,
                             const std::vector<int64_t>& w, const std::vector<int64_t>& y);

// The descriptors of that convolution: X, Y, the filter W and the
// convolution itself (f32 compute for every dtype; FMA math for f32, the
// tensor cores for 16-bit). The forward op and the weight gradient describe
// the same convolution. Sizes are range-checked by cudnn_conv_usable.
struct CudnnConvDescriptors {
  CudnnConvDescriptors(const CudnnLibrary& lib, ampx_dtype dt, const kern::ConvParams& p);
  CudnnDesc<cudnnTensorDescriptor_t> x, y;
  CudnnDesc<cudnnFilterDescriptor_t> w;
  CudnnDesc<cudnnConvolutionDescriptor_t> conv;
};

}  // namespace ampx::cuda
