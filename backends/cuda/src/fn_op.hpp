// Small pieces the op files share: an op whose launch is one kernel call,
// the product of a dims range, a normalised axis, Softmax's rows, a pool
// window's geometry.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "kernels.hpp"
#include "ops.hpp"

namespace ampx::cuda {

inline int64_t product(const std::vector<int64_t>& d, size_t b, size_t e) {
  return std::accumulate(d.begin() + static_cast<ptrdiff_t>(b),
                         d.begin() + static_cast<ptrdiff_t>(e), int64_t{1},
                         std::multiplies<int64_t>());
}

inline size_t norm_axis(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// Softmax's (and its gradient's) rows: the node's axis of input 0.
inline kern::SoftmaxParams softmax_params(const OpContext& c) {
  const auto& x = c.in[0].dims;
  const size_t axis = x.empty() ? 0 : norm_axis(c.v.get_int("axis", -1), x.size());
  kern::SoftmaxParams p;
  p.outer = product(x, 0, axis);
  p.axis = x.empty() ? 1 : x[axis];
  p.inner = x.empty() ? 1 : product(x, axis + 1, x.size());
  return p;
}

// A pool window's geometry over X [N,C,H,W] and Y (or dY) [N,C,OH,OW]
// (OH, OW already validated against ceil_mode by opset::validate).
inline kern::PoolParams pool_params(const OpContext& c, const std::vector<int64_t>& x,
                                    const std::vector<int64_t>& dy, bool max) {
  const auto k = c.v.get_ints("kernel_shape");
  const auto st = c.v.get_ints("strides", {1, 1});
  const auto pads = c.v.get_ints("pads", {0, 0, 0, 0});
  kern::PoolParams p;
  p.planes = x[0] * x[1];
  p.H = x[2];
  p.W = x[3];
  p.OH = dy[2];
  p.OW = dy[3];
  p.kH = k[0];
  p.kW = k[1];
  p.sh = st[0];
  p.sw = st[1];
  p.pt = pads[0];
  p.pl = pads[1];
  p.pb = pads[2];
  p.pr = pads[3];
  p.max = max;
  p.include_pad = !max && c.v.get_int("count_include_pad", 0) == 1;
  return p;
}

// An op whose launch is one call of a kernel function with fixed arguments.
template <class Fn>
class FnOp final : public CudaOp {
 public:
  FnOp(const char* name, Fn fn) : name_(name), fn_(std::move(fn)) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    check_kernel(fn_(in, out), name_);
  }

 private:
  const char* name_;
  Fn fn_;
};

template <class Fn>
std::unique_ptr<CudaOp> fn_op(const char* name, Fn fn) {
  return std::make_unique<FnOp<Fn>>(name, std::move(fn));
}

}  // namespace ampx::cuda
