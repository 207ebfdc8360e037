// Conv2dGradWeight: dW = the convolution's weight gradient from dY and X.
// cuDNN's cudnnConvolutionBackwardFilter (legacy API, as the forward: f32
// compute for every dtype, FMA math in f32, tensor-op math in 16-bit) when
// cuDNN is loaded and takes the node (cudnn_conv_usable: symmetric pads,
// dims within int); otherwise the own direct kernel. Only deterministic
// algorithms are taken: docs/OPS.md wants dW reproducible bit for bit, and
// cuDNN's BWD_FILTER_ALGO_0 and _3 add with atomics.
#include <climits>

#include "allocator.hpp"
#include "cuda_error.hpp"
#include "cudnn_desc.hpp"
#include "kernels_grad.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

namespace ps = ampx::plugin_support;

class DirectGradWeightOp final : public CudaOp {
 public:
  DirectGradWeightOp(DeviceContext& dev, ampx_dtype dt, kern::ConvParams p)
      : dev_(dev), dt_(dt), p_(p) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    check_kernel(kern::conv2d_grad_weight_direct(dt_, p_, in[0], in[1], out[0], dev_.stream()),
                 "conv2d_grad_weight_direct");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::ConvParams p_;
};

class CudnnGradWeightOp final : public CudaOp {
 public:
  CudnnGradWeightOp(DeviceContext& dev, ampx_dtype dt, const kern::ConvParams& p)
      : lib_(dev.cudnn_library()), handle_(dev.cudnn()), d_(lib_, dt, p) {
    if (!handle_) throw ps::StatusError(AMPX_STATUS_UNSUPPORTED, "no cuDNN handle");
    // The heuristic's best deterministic algorithm that fits the workspace
    // limit; none: the caller falls back to the direct kernel.
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT] = {};
    int found = 0;
    lib_.check(lib_.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                   handle_, d_.x.get(), d_.y.get(), d_.conv.get(), d_.w.get(),
                   CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf),
               "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    constexpr size_t kMaxWorkspace = size_t{1} << 30;
    bool have = false;
    for (int i = 0; i < found && !have; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace &&
          perf[i].determinism == CUDNN_DETERMINISTIC) {
        algo_ = perf[i].algo;
        have = true;
      }
    }
    if (!have) {
      throw ps::StatusError(AMPX_STATUS_UNSUPPORTED,
                            "cuDNN has no deterministic weight-gradient algorithm for it");
    }
    lib_.check(lib_.cudnnGetConvolutionBackwardFilterWorkspaceSize(
                   handle_, d_.x.get(), d_.y.get(), d_.conv.get(), d_.w.get(), algo_, &ws_bytes_),
               "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    if (ws_bytes_) workspace_ = DeviceMemory(dev.allocator(), ws_bytes_);
  }

  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    // beta = 0: dW is overwritten, never accumulated into.
    const float one = 1.0f, zero = 0.0f;
    lib_.check(lib_.cudnnConvolutionBackwardFilter(handle_, &one, d_.x.get(), in[1], d_.y.get(),
                                                   in[0], d_.conv.get(), algo_, workspace_.get(),
                                                   ws_bytes_, &zero, d_.w.get(), out[0]),
               "cudnnConvolutionBackwardFilter");
  }

 private:
  const CudnnLibrary& lib_;
  cudnnHandle_t handle_;
  CudnnConvDescriptors d_;  // y is dY, w is dW
  cudnnConvolutionBwdFilterAlgo_t algo_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  size_t ws_bytes_ = 0;
  DeviceMemory workspace_;
};

}  // namespace

std::unique_ptr<CudaOp> make_conv2d_grad_weight(OpContext& c) {
  // dY [N,M,OH,OW] (input 0), X [N,C,H,W] (input 1), dW [M,C/group,kH,kW].
  const kern::ConvParams p = conv_params(c, c.in[1].dims, c.out[0].dims, c.in[0].dims);
  const ampx_dtype dt = c.out[0].dtype;
  if (cudnn_conv_usable(c.v, c.dev.cudnn_library(), nullptr)) {
    try {
      return std::make_unique<CudnnGradWeightOp>(c.dev, dt, p);
    } catch (const ps::StatusError& e) {
      // No deterministic algorithm, or cuDNN cannot set the node up: the
      // direct kernel still runs it (answered native; see README "Not done").
      if (e.code() == AMPX_STATUS_OUT_OF_MEMORY) throw;
    }
  }
  return std::make_unique<DirectGradWeightOp>(c.dev, dt, p);
}

}  // namespace ampx::cuda
