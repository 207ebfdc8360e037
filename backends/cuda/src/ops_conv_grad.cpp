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

int as_int(int64_t v) {
  return static_cast<int>(v);
}  // range checked by cudnn_conv_usable

// dY [N,M,OH,OW] (input 0), X [N,C,H,W] (input 1), dW [M,C/group,kH,kW].
kern::ConvParams grad_weight_params(const OpContext& c) {
  const auto& dy = c.in[0].dims;
  const auto& x = c.in[1].dims;
  const auto& dw = c.out[0].dims;
  const auto st = c.v.get_ints("strides", {1, 1});
  const auto pads = c.v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = c.v.get_ints("dilations", {1, 1});
  kern::ConvParams p;
  p.N = x[0];
  p.C = x[1];
  p.H = x[2];
  p.W = x[3];
  p.M = dw[0];
  p.kH = dw[2];
  p.kW = dw[3];
  p.OH = dy[2];
  p.OW = dy[3];
  p.sh = st[0];
  p.sw = st[1];
  p.pt = pads[0];
  p.pl = pads[1];
  p.dh = dil[0];
  p.dw = dil[1];
  p.group = c.v.get_int("group", 1);
  return p;
}

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
      : lib_(dev.cudnn_library()),
        handle_(dev.cudnn()),
        x_(lib_, lib_.cudnnCreateTensorDescriptor, lib_.cudnnDestroyTensorDescriptor,
           "cudnnCreateTensorDescriptor"),
        dy_(lib_, lib_.cudnnCreateTensorDescriptor, lib_.cudnnDestroyTensorDescriptor,
            "cudnnCreateTensorDescriptor"),
        dw_(lib_, lib_.cudnnCreateFilterDescriptor, lib_.cudnnDestroyFilterDescriptor,
            "cudnnCreateFilterDescriptor"),
        conv_(lib_, lib_.cudnnCreateConvolutionDescriptor, lib_.cudnnDestroyConvolutionDescriptor,
              "cudnnCreateConvolutionDescriptor") {
    if (!handle_) throw ps::StatusError(AMPX_STATUS_UNSUPPORTED, "no cuDNN handle");
    const cudnnDataType_t t = cudnn_type(dt);
    lib_.check(lib_.cudnnSetTensor4dDescriptor(x_.get(), CUDNN_TENSOR_NCHW, t, as_int(p.N),
                                               as_int(p.C), as_int(p.H), as_int(p.W)),
               "cudnnSetTensor4dDescriptor(x)");
    lib_.check(lib_.cudnnSetTensor4dDescriptor(dy_.get(), CUDNN_TENSOR_NCHW, t, as_int(p.N),
                                               as_int(p.M), as_int(p.OH), as_int(p.OW)),
               "cudnnSetTensor4dDescriptor(dy)");
    lib_.check(lib_.cudnnSetFilter4dDescriptor(dw_.get(), t, CUDNN_TENSOR_NCHW, as_int(p.M),
                                               as_int(p.C / p.group), as_int(p.kH), as_int(p.kW)),
               "cudnnSetFilter4dDescriptor(dw)");
    // f32 compute for every dtype, as the forward convolution.
    lib_.check(lib_.cudnnSetConvolution2dDescriptor(
                   conv_.get(), as_int(p.pt), as_int(p.pl), as_int(p.sh), as_int(p.sw),
                   as_int(p.dh), as_int(p.dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               "cudnnSetConvolution2dDescriptor");
    lib_.check(lib_.cudnnSetConvolutionGroupCount(conv_.get(), as_int(p.group)),
               "cudnnSetConvolutionGroupCount");
    lib_.check(lib_.cudnnSetConvolutionMathType(
                   conv_.get(), dt == AMPX_DTYPE_F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
               "cudnnSetConvolutionMathType");

    // The heuristic's best deterministic algorithm that fits the workspace
    // limit; none: the caller falls back to the direct kernel.
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT] = {};
    int found = 0;
    lib_.check(lib_.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                   handle_, x_.get(), dy_.get(), conv_.get(), dw_.get(),
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
                   handle_, x_.get(), dy_.get(), conv_.get(), dw_.get(), algo_, &ws_bytes_),
               "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    if (ws_bytes_) workspace_ = DeviceMemory(dev.allocator(), ws_bytes_);
  }

  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    // beta = 0: dW is overwritten, never accumulated into.
    const float one = 1.0f, zero = 0.0f;
    lib_.check(lib_.cudnnConvolutionBackwardFilter(handle_, &one, x_.get(), in[1], dy_.get(), in[0],
                                                   conv_.get(), algo_, workspace_.get(), ws_bytes_,
                                                   &zero, dw_.get(), out[0]),
               "cudnnConvolutionBackwardFilter");
  }

 private:
  const CudnnLibrary& lib_;
  cudnnHandle_t handle_;
  CudnnDesc<cudnnTensorDescriptor_t> x_, dy_;
  CudnnDesc<cudnnFilterDescriptor_t> dw_;
  CudnnDesc<cudnnConvolutionDescriptor_t> conv_;
  cudnnConvolutionBwdFilterAlgo_t algo_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  size_t ws_bytes_ = 0;
  DeviceMemory workspace_;
};

}  // namespace

std::unique_ptr<CudaOp> make_conv2d_grad_weight(OpContext& c) {
  const kern::ConvParams p = grad_weight_params(c);
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
