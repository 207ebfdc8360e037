// Conv2d: cuDNN (legacy API, tensor-op math in 16-bit, f32 accumulation)
// when the library is loaded and takes the node, else the own direct kernel.
// Bias: fused (cudnnConvolutionBiasActivationForward, identity activation)
// when cuDNN accepts it for the shape; otherwise Y is prefilled with the
// broadcast bias and the convolution adds onto it (beta = 1), which still
// rounds the output only once.
#include <climits>

#include "allocator.hpp"
#include "cuda_error.hpp"
#include "cudnn_desc.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

namespace ps = ampx::plugin_support;

int as_int(int64_t v) {
  return static_cast<int>(v);
}  // range checked by cudnn_conv_usable

class DirectConvOp final : public CudaOp {
 public:
  DirectConvOp(DeviceContext& dev, ampx_dtype dt, kern::ConvParams p, bool bias)
      : dev_(dev), dt_(dt), p_(p), bias_(bias) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    check_kernel(
        kern::conv2d_direct(dt_, p_, in[0], in[1], bias_ ? in[2] : nullptr, out[0], dev_.stream()),
        "conv2d_direct");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::ConvParams p_;
  bool bias_;
};

class CudnnConvOp final : public CudaOp {
 public:
  CudnnConvOp(DeviceContext& dev, ampx_dtype dt, const kern::ConvParams& p, bool bias)
      : dev_(dev),
        lib_(dev.cudnn_library()),
        handle_(dev.cudnn()),
        elem_(ps::dtype_size(dt)),
        p_(p),
        bias_(bias),
        d_(lib_, dt, p),
        b_(lib_, lib_.cudnnCreateTensorDescriptor, lib_.cudnnDestroyTensorDescriptor,
           "cudnnCreateTensorDescriptor"),
        act_(lib_, lib_.cudnnCreateActivationDescriptor, lib_.cudnnDestroyActivationDescriptor,
             "cudnnCreateActivationDescriptor") {
    lib_.check(lib_.cudnnSetTensor4dDescriptor(b_.get(), CUDNN_TENSOR_NCHW, cudnn_type(dt), 1,
                                               as_int(p.M), 1, 1),
               "cudnnSetTensor4dDescriptor(bias)");
    lib_.check(lib_.cudnnSetActivationDescriptor(act_.get(), CUDNN_ACTIVATION_IDENTITY,
                                                 CUDNN_NOT_PROPAGATE_NAN, 0.0),
               "cudnnSetActivationDescriptor");

    // The heuristic's best algorithm that fits the workspace limit.
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT] = {};
    int found = 0;
    lib_.check(lib_.cudnnGetConvolutionForwardAlgorithm_v7(
                   handle_, d_.x.get(), d_.w.get(), d_.conv.get(), d_.y.get(),
                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
               "cudnnGetConvolutionForwardAlgorithm_v7");
    constexpr size_t kMaxWorkspace = size_t{1} << 30;
    bool have = false;
    for (int i = 0; i < found && !have; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxWorkspace) {
        algo_ = perf[i].algo;
        have = true;
      }
    }
    if (!have) {
      throw ps::StatusError(AMPX_STATUS_UNSUPPORTED, "cuDNN has no forward algorithm for it");
    }
    size_t ws = 0;
    lib_.check(lib_.cudnnGetConvolutionForwardWorkspaceSize(handle_, d_.x.get(), d_.w.get(),
                                                            d_.conv.get(), d_.y.get(), algo_, &ws),
               "cudnnGetConvolutionForwardWorkspaceSize");
    // The fused bias path only exists for IMPLICIT_PRECOMP_GEMM.
    fused_ = bias_;
    size_t fused_ws = 0;
    if (fused_ &&
        lib_.cudnnGetConvolutionForwardWorkspaceSize(
            handle_, d_.x.get(), d_.w.get(), d_.conv.get(), d_.y.get(),
            CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &fused_ws) != CUDNN_STATUS_SUCCESS) {
      fused_ = false;
    }
    ws_bytes_ = std::max(ws, fused_ ? fused_ws : size_t{0});
    if (ws_bytes_) workspace_ = DeviceMemory(dev_.allocator(), ws_bytes_);
  }

  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    const float one = 1.0f, zero = 0.0f;
    void* y = out[0];
    if (fused_) {
      const cudnnStatus_t s = lib_.cudnnConvolutionBiasActivationForward(
          handle_, &one, d_.x.get(), in[0], d_.w.get(), in[1], d_.conv.get(),
          CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, workspace_.get(), ws_bytes_, &zero,
          d_.y.get(), y, b_.get(), in[2], act_.get(), d_.y.get(), y);
      if (s == CUDNN_STATUS_SUCCESS) return;
      if (static_cast<int>(s) / 1000 != 3) lib_.check(s, "cudnnConvolutionBiasActivationForward");
      fused_ = false;  // not supported here: prefill from now on
    }
    float beta = 0.0f;
    if (bias_) {  // Y = broadcast bias, then Y = conv + 1 * Y
      kern::StridedCopy p;
      p.rank = 3;
      p.dims[0] = p_.N;
      p.dims[1] = p_.M;
      p.dims[2] = p_.OH * p_.OW;
      p.src_strides[1] = 1;
      p.dst_strides[0] = p_.M * p_.OH * p_.OW;
      p.dst_strides[1] = p_.OH * p_.OW;
      p.dst_strides[2] = 1;
      check_kernel(
          kern::strided_copy(elem_, p, p_.N * p_.M * p_.OH * p_.OW, in[2], y, dev_.stream()),
          "strided_copy");
      beta = 1.0f;
    }
    lib_.check(lib_.cudnnConvolutionForward(handle_, &one, d_.x.get(), in[0], d_.w.get(), in[1],
                                            d_.conv.get(), algo_, workspace_.get(), ws_bytes_,
                                            &beta, d_.y.get(), y),
               "cudnnConvolutionForward");
  }

 private:
  DeviceContext& dev_;
  const CudnnLibrary& lib_;
  cudnnHandle_t handle_;
  size_t elem_;
  kern::ConvParams p_;
  bool bias_, fused_ = false;
  CudnnConvDescriptors d_;
  CudnnDesc<cudnnTensorDescriptor_t> b_;
  CudnnDesc<cudnnActivationDescriptor_t> act_;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t ws_bytes_ = 0;
  DeviceMemory workspace_;
};

}  // namespace

kern::ConvParams conv_params(const OpContext& c, const std::vector<int64_t>& x,
                             const std::vector<int64_t>& w, const std::vector<int64_t>& y) {
  const auto st = c.v.get_ints("strides", {1, 1});
  const auto pads = c.v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = c.v.get_ints("dilations", {1, 1});
  kern::ConvParams p;
  p.N = x[0];
  p.C = x[1];
  p.H = x[2];
  p.W = x[3];
  p.M = w[0];
  p.kH = w[2];
  p.kW = w[3];
  p.OH = y[2];
  p.OW = y[3];
  p.sh = st[0];
  p.sw = st[1];
  p.pt = pads[0];
  p.pl = pads[1];
  p.dh = dil[0];
  p.dw = dil[1];
  p.group = c.v.get_int("group", 1);
  return p;
}

CudnnConvDescriptors::CudnnConvDescriptors(const CudnnLibrary& lib, ampx_dtype dt,
                                           const kern::ConvParams& p)
    : x(lib, lib.cudnnCreateTensorDescriptor, lib.cudnnDestroyTensorDescriptor,
        "cudnnCreateTensorDescriptor"),
      y(lib, lib.cudnnCreateTensorDescriptor, lib.cudnnDestroyTensorDescriptor,
        "cudnnCreateTensorDescriptor"),
      w(lib, lib.cudnnCreateFilterDescriptor, lib.cudnnDestroyFilterDescriptor,
        "cudnnCreateFilterDescriptor"),
      conv(lib, lib.cudnnCreateConvolutionDescriptor, lib.cudnnDestroyConvolutionDescriptor,
           "cudnnCreateConvolutionDescriptor") {
  const cudnnDataType_t t = cudnn_type(dt);
  lib.check(lib.cudnnSetTensor4dDescriptor(x.get(), CUDNN_TENSOR_NCHW, t, as_int(p.N), as_int(p.C),
                                           as_int(p.H), as_int(p.W)),
            "cudnnSetTensor4dDescriptor(x)");
  lib.check(lib.cudnnSetTensor4dDescriptor(y.get(), CUDNN_TENSOR_NCHW, t, as_int(p.N), as_int(p.M),
                                           as_int(p.OH), as_int(p.OW)),
            "cudnnSetTensor4dDescriptor(y)");
  lib.check(lib.cudnnSetFilter4dDescriptor(w.get(), t, CUDNN_TENSOR_NCHW, as_int(p.M),
                                           as_int(p.C / p.group), as_int(p.kH), as_int(p.kW)),
            "cudnnSetFilter4dDescriptor");
  // Compute in f32 for every dtype (f16 "pseudo half", bf16 needs it).
  lib.check(lib.cudnnSetConvolution2dDescriptor(
                conv.get(), as_int(p.pt), as_int(p.pl), as_int(p.sh), as_int(p.sw), as_int(p.dh),
                as_int(p.dw), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "cudnnSetConvolution2dDescriptor");
  lib.check(lib.cudnnSetConvolutionGroupCount(conv.get(), as_int(p.group)),
            "cudnnSetConvolutionGroupCount");
  // f32 stays f32 (FMA math: no TF32); 16-bit takes the tensor cores.
  lib.check(lib.cudnnSetConvolutionMathType(
                conv.get(), dt == AMPX_DTYPE_F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
            "cudnnSetConvolutionMathType");
}

bool cudnn_conv_usable(const ps::NodeView& v, const CudnnLibrary& cudnn, std::string* why) {
  auto no = [&](std::string r) {
    if (why) *why = std::move(r);
    return false;
  };
  if (!cudnn.loaded()) return no(cudnn.description());
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  if (pads.size() == 4 && (pads[0] != pads[2] || pads[1] != pads[3]))
    return no("asymmetric pads: cuDNN's legacy API pads symmetrically");
  for (size_t i = 0; i < v.num_inputs() + v.num_outputs(); ++i) {
    const ampx_tensor_desc& t = i < v.num_inputs() ? v.input(i) : v.output(i - v.num_inputs());
    for (int32_t d = 0; d < t.rank; ++d) {
      if (t.dims[d] > INT_MAX) return no("a dimension exceeds cuDNN's int range");
      if (t.dims[d] == 0) return no("an empty tensor");
    }
  }
  return true;
}

std::unique_ptr<CudaOp> make_conv2d(OpContext& c) {
  const kern::ConvParams p = conv_params(c, c.in[0].dims, c.in[1].dims, c.out[0].dims);
  const bool bias = c.in.size() == 3;
  const ampx_dtype dt = c.out[0].dtype;
  if (cudnn_conv_usable(c.v, c.dev.cudnn_library(), nullptr)) {
    try {
      return std::make_unique<CudnnConvOp>(c.dev, dt, p, bias);
    } catch (const ps::StatusError& e) {
      // cuDNN cannot set this node up (no algorithm, or cudnnCreate failed):
      // still run it. (The answer said native; see README "Not done".)
      if (e.code() == AMPX_STATUS_OUT_OF_MEMORY) throw;
    }
  }
  return std::make_unique<DirectConvOp>(c.dev, dt, p, bias);
}

}  // namespace ampx::cuda
