// BatchNorm, LayerNorm, Softmax; MaxPool, AveragePool, GlobalAveragePool;
// ReduceMean, ReduceSum.
#include <algorithm>
#include <functional>
#include <numeric>

#include "fn_op.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

using In = std::span<const void* const>;
using Out = std::span<void* const>;

}  // namespace

std::unique_ptr<CudaOp> make_batchnorm(OpContext& c) {
  const auto& x = c.in[0].dims;
  kern::BatchNormParams p;
  p.n = c.in[0].numel;
  p.channels = x[1];
  p.inner = product(x, 2, x.size());
  p.eps = static_cast<float>(c.v.get_float("epsilon", 1e-5));
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("batchnorm", [=](In in, Out out) {
    return kern::batchnorm(dt, p, in[0], in[1], in[2], in[3], in[4], out[0], s);
  });
}

std::unique_ptr<CudaOp> make_layernorm(OpContext& c) {
  const auto& x = c.in[0].dims;
  const size_t axis = x.empty() ? 0 : norm_axis(c.v.get_int("axis", -1), x.size());
  kern::LayerNormParams p;
  p.rows = product(x, 0, axis);
  p.cols = product(x, axis, x.size());
  p.eps = static_cast<float>(c.v.get_float("epsilon", 1e-5));
  const bool bias = c.in.size() == 3;
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("layernorm", [=](In in, Out out) {
    return kern::layernorm(dt, p, in[0], in[1], bias ? in[2] : nullptr, out[0], s);
  });
}

std::unique_ptr<CudaOp> make_softmax(OpContext& c) {
  const kern::SoftmaxParams p = softmax_params(c);
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("softmax", [=](In in, Out out) { return kern::softmax(dt, p, in[0], out[0], s); });
}

std::unique_ptr<CudaOp> make_pool(OpContext& c) {
  const kern::PoolParams p =
      pool_params(c, c.in[0].dims, c.out[0].dims, c.v.op_type() == "MaxPool");
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("pool2d", [=](In in, Out out) { return kern::pool2d(dt, p, in[0], out[0], s); });
}

namespace {

// Reduces `x` over the axes flagged in `reduced`.
std::unique_ptr<CudaOp> reduce_op(OpContext& c, const std::vector<bool>& reduced, bool mean) {
  const auto& x = c.in[0].dims;
  const std::vector<int64_t> strides = dense_strides(x);
  kern::ReduceParams p;
  p.outputs = c.out[0].numel;
  p.red_count = 1;
  for (size_t d = 0; d < x.size(); ++d) {
    if (reduced[d]) {
      p.red_dims[p.red_rank] = x[d];
      p.red_strides[p.red_rank++] = strides[d];
      p.red_count *= x[d];
    } else {
      p.out_dims[p.out_rank] = x[d];
      p.out_strides[p.out_rank++] = strides[d];
    }
  }
  p.mean = mean;
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("reduce", [=](In in, Out out) { return kern::reduce(dt, p, in[0], out[0], s); });
}

}  // namespace

std::unique_ptr<CudaOp> make_global_avgpool(OpContext& c) {
  return reduce_op(c, {false, false, true, true}, true);
}

std::unique_ptr<CudaOp> make_reduce(OpContext& c) {
  const size_t r = c.in[0].dims.size();
  const auto axes = c.v.get_ints("axes");
  std::vector<bool> reduced(r, axes.empty());
  for (int64_t a : axes) reduced[norm_axis(a, r)] = true;
  return reduce_op(c, reduced, c.v.op_type() == "ReduceMean");
}

}  // namespace ampx::cuda
