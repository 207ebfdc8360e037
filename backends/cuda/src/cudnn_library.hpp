// cuDNN, opened at run time with dlopen(): the plugin loads and runs without
// it (convolution then uses the own direct kernel and the capability answers
// say so). Only the header is used at build time, for the types and the
// function signatures (decltype), so a mismatch is a compile error here
// rather than a crash there. The legacy convolution API is used: deprecated
// in cuDNN 9 but still shipped, and it covers NCHW f32/f16/bf16 convolution
// with tensor-op math, groups, dilation and fused bias.
#pragma once

#include <cudnn.h>

#include <string>

namespace ampx::cuda {

class CudnnLibrary {
 public:
  // Tries $AMPX_CUDNN_LIBRARY, then libcudnn.so.9, libcudnn.so (the loader's
  // search path, which includes this plugin's RUNPATH: the toolkit's lib dir).
  // `enabled` false (plugin option cudnn=off) skips loading altogether.
  explicit CudnnLibrary(bool enabled);
  ~CudnnLibrary();
  CudnnLibrary(const CudnnLibrary&) = delete;
  CudnnLibrary& operator=(const CudnnLibrary&) = delete;

  bool loaded() const noexcept { return handle_ != nullptr; }
  // "cuDNN 9.19.0" or why it is not there ("cuDNN not loaded: ...").
  const std::string& description() const noexcept { return description_; }
  // "9.19.0", or "none": part of device fingerprints.
  const std::string& version() const noexcept { return version_; }

  // Throws a StatusError with cudnnGetErrorString's text.
  void check(cudnnStatus_t s, const std::string& what) const;

#define AMPX_CUDNN_FN(name) decltype(&::name) name = nullptr
  AMPX_CUDNN_FN(cudnnGetVersion);
  AMPX_CUDNN_FN(cudnnGetErrorString);
  AMPX_CUDNN_FN(cudnnCreate);
  AMPX_CUDNN_FN(cudnnDestroy);
  AMPX_CUDNN_FN(cudnnSetStream);
  AMPX_CUDNN_FN(cudnnCreateTensorDescriptor);
  AMPX_CUDNN_FN(cudnnSetTensor4dDescriptor);
  AMPX_CUDNN_FN(cudnnDestroyTensorDescriptor);
  AMPX_CUDNN_FN(cudnnCreateFilterDescriptor);
  AMPX_CUDNN_FN(cudnnSetFilter4dDescriptor);
  AMPX_CUDNN_FN(cudnnDestroyFilterDescriptor);
  AMPX_CUDNN_FN(cudnnCreateConvolutionDescriptor);
  AMPX_CUDNN_FN(cudnnSetConvolution2dDescriptor);
  AMPX_CUDNN_FN(cudnnSetConvolutionGroupCount);
  AMPX_CUDNN_FN(cudnnSetConvolutionMathType);
  AMPX_CUDNN_FN(cudnnDestroyConvolutionDescriptor);
  AMPX_CUDNN_FN(cudnnCreateActivationDescriptor);
  AMPX_CUDNN_FN(cudnnSetActivationDescriptor);
  AMPX_CUDNN_FN(cudnnDestroyActivationDescriptor);
  AMPX_CUDNN_FN(cudnnGetConvolutionForwardAlgorithm_v7);
  AMPX_CUDNN_FN(cudnnGetConvolutionForwardWorkspaceSize);
  AMPX_CUDNN_FN(cudnnConvolutionForward);
  AMPX_CUDNN_FN(cudnnConvolutionBiasActivationForward);
  // The weight gradient (Conv2dGradWeight, ops_conv_grad.cpp).
  AMPX_CUDNN_FN(cudnnGetConvolutionBackwardFilterAlgorithm_v7);
  AMPX_CUDNN_FN(cudnnGetConvolutionBackwardFilterWorkspaceSize);
  AMPX_CUDNN_FN(cudnnConvolutionBackwardFilter);
#undef AMPX_CUDNN_FN

 private:
  void* handle_ = nullptr;
  std::string description_, version_ = "none";
};

}  // namespace ampx::cuda
