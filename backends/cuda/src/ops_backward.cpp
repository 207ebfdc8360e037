// The backward ops of the forward families (docs/OPS.md, "Training ops"):
// ReluGrad, SigmoidGrad, TanhGrad, GeluGrad, ClipGrad; SoftmaxGrad;
// LayerNormGrad, BatchNormTraining, BatchNormGrad; MaxPoolGrad,
// AveragePoolGrad. Own kernels (kernels_grad.hpp); Conv2dGradWeight is in
// ops_conv_grad.cpp, the loss and the updates in ops_train.cpp.
#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

#include "allocator.hpp"
#include "fn_op.hpp"
#include "kernels_grad.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

using In = std::span<const void* const>;
using Out = std::span<void* const>;

// LayerNormGrad needs 2 floats per row between its two passes: scratch from
// the caching allocator, returned right after enqueueing (one stream orders
// its reuse).
class LayerNormGradOp final : public CudaOp {
 public:
  LayerNormGradOp(DeviceContext& dev, ampx_dtype dt, kern::LayerNormParams p)
      : dev_(dev), dt_(dt), p_(p) {}
  void launch(In in, Out out) override {
    DeviceMemory stats(dev_.allocator(), static_cast<uint64_t>(p_.rows) * 2 * sizeof(float));
    check_kernel(kern::layernorm_grad(dt_, p_, in[0], in[1], in[2], out[0], out[1], out[2],
                                      static_cast<float*>(stats.get()), dev_.stream()),
                 "layernorm_grad");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::LayerNormParams p_;
};

kern::BatchNormTrainParams batchnorm_params(const OpContext& c, const std::vector<int64_t>& x) {
  kern::BatchNormTrainParams p;
  p.batch = x[0];
  p.channels = x[1];
  p.inner = product(x, 2, x.size());
  p.eps = static_cast<float>(c.v.get_float("epsilon", 1e-5));
  p.momentum = static_cast<float>(c.v.get_float("momentum", 0.9));
  return p;
}

}  // namespace

std::unique_ptr<CudaOp> make_elementwise_grad(OpContext& c) {
  kern::GradParams p;
  const std::string_view op = c.v.op_type();
  if (op == "ReluGrad") {
    p.op = kern::GradOp::kRelu;
  } else if (op == "SigmoidGrad") {
    p.op = kern::GradOp::kSigmoid;
  } else if (op == "TanhGrad") {
    p.op = kern::GradOp::kTanh;
  } else if (op == "GeluGrad") {
    p.op = c.v.get_string("approximate", "none") == "tanh" ? kern::GradOp::kGeluTanh
                                                           : kern::GradOp::kGeluErf;
  } else {  // ClipGrad: bounds as f32, as the forward Clip and cpu_ref
    p.op = kern::GradOp::kClip;
    constexpr double inf = std::numeric_limits<double>::infinity();
    p.lo = static_cast<float>(c.v.get_float("min", -inf));
    p.hi = static_cast<float>(c.v.get_float("max", inf));
  }
  const ampx_dtype dt = c.out[0].dtype;
  const int64_t n = c.out[0].numel;
  cudaStream_t s = c.dev.stream();
  return fn_op("elementwise_grad", [=](In in, Out out) {
    return kern::elementwise_grad(dt, p, in[0], in[1], out[0], n, s);
  });
}

std::unique_ptr<CudaOp> make_softmax_grad(OpContext& c) {
  const kern::SoftmaxParams p = softmax_params(c);
  const ampx_dtype dt = c.out[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("softmax_grad",
               [=](In in, Out out) { return kern::softmax_grad(dt, p, in[0], in[1], out[0], s); });
}

std::unique_ptr<CudaOp> make_layernorm_grad(OpContext& c) {
  const auto& x = c.in[1].dims;
  const size_t axis = x.empty() ? 0 : norm_axis(c.v.get_int("axis", -1), x.size());
  kern::LayerNormParams p;
  p.rows = product(x, 0, axis);
  p.cols = product(x, axis, x.size());
  p.eps = static_cast<float>(c.v.get_float("epsilon", 1e-5));
  return std::make_unique<LayerNormGradOp>(c.dev, c.out[0].dtype, p);
}

std::unique_ptr<CudaOp> make_batchnorm_training(OpContext& c) {
  const kern::BatchNormTrainParams p = batchnorm_params(c, c.in[0].dims);
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("batchnorm_training", [=](In in, Out out) {
    return kern::batchnorm_training(dt, p, in[0], in[1], in[2], in[3], in[4], out[0], out[1],
                                    out[2], out[3], out[4], s);
  });
}

std::unique_ptr<CudaOp> make_batchnorm_grad(OpContext& c) {
  const kern::BatchNormTrainParams p = batchnorm_params(c, c.in[1].dims);
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("batchnorm_grad", [=](In in, Out out) {
    return kern::batchnorm_grad(dt, p, in[0], in[1], in[2], in[3], in[4], out[0], out[1], out[2],
                                s);
  });
}

std::unique_ptr<CudaOp> make_pool_grad(OpContext& c) {
  const bool max = c.v.op_type() == "MaxPoolGrad";
  // dX has X's dims: MaxPoolGrad's input 1, AveragePoolGrad's input_shape.
  const kern::PoolParams p = pool_params(c, c.out[0].dims, c.in[0].dims, max);
  const ampx_dtype dt = c.out[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("pool2d_grad", [=](In in, Out out) {
    return kern::pool2d_grad(dt, p, in[0], max ? in[1] : nullptr, out[0], s);
  });
}

}  // namespace ampx::cuda
