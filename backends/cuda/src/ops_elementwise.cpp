// Relu, Sigmoid, Tanh, Gelu, Clip; Add, Sub, Mul, Div with NumPy broadcasting.
#include <limits>

#include "ops.hpp"

namespace ampx::cuda {
namespace {

class UnaryOp final : public CudaOp {
 public:
  UnaryOp(DeviceContext& dev, ampx_dtype dt, kern::UnaryParams p, int64_t n)
      : dev_(dev), dt_(dt), p_(p), n_(n) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    check_kernel(kern::unary(dt_, p_, in[0], out[0], n_, dev_.stream()), "unary");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::UnaryParams p_;
  int64_t n_;
};

class BinaryOp final : public CudaOp {
 public:
  BinaryOp(DeviceContext& dev, ampx_dtype dt, kern::BinaryOp op, int64_t n,
           std::optional<kern::Broadcast> bc)
      : dev_(dev), dt_(dt), op_(op), n_(n), bc_(bc) {}
  void launch(std::span<const void* const> in, std::span<void* const> out) override {
    check_kernel(
        kern::binary(dt_, op_, in[0], in[1], out[0], n_, bc_ ? &*bc_ : nullptr, dev_.stream()),
        "binary");
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::BinaryOp op_;
  int64_t n_;
  std::optional<kern::Broadcast> bc_;
};

// Strides of `dims` (right-aligned against `out`) over out's dims; 0 where
// the dim is broadcast.
void broadcast_strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out,
                       int64_t* strides) {
  const std::vector<int64_t> dense = dense_strides(dims);
  const size_t shift = out.size() - dims.size();
  for (size_t d = 0; d < out.size(); ++d) {
    if (d < shift || dims[d - shift] == 1) {
      strides[d] = 0;
    } else {
      strides[d] = dense[d - shift];
    }
  }
}

}  // namespace

kern::Broadcast make_broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                               const std::vector<int64_t>& y) {
  kern::Broadcast bc;
  bc.rank = static_cast<int32_t>(y.size());
  for (size_t d = 0; d < y.size(); ++d) bc.dims[d] = y[d];
  broadcast_strides(a, y, bc.a_strides);
  broadcast_strides(b, y, bc.b_strides);
  return bc;
}

std::unique_ptr<CudaOp> make_unary(OpContext& c) {
  kern::UnaryParams p;
  const std::string_view op = c.v.op_type();
  if (op == "Relu") {
    p.op = kern::UnaryOp::kRelu;
  } else if (op == "Sigmoid") {
    p.op = kern::UnaryOp::kSigmoid;
  } else if (op == "Tanh") {
    p.op = kern::UnaryOp::kTanh;
  } else if (op == "Gelu") {
    p.op = c.v.get_string("approximate", "none") == "tanh" ? kern::UnaryOp::kGeluTanh
                                                           : kern::UnaryOp::kGeluErf;
  } else {  // Clip: bounds as f32, like cpu_ref's T(lo), T(hi)
    p.op = kern::UnaryOp::kClip;
    constexpr double inf = std::numeric_limits<double>::infinity();
    p.lo = static_cast<float>(c.v.get_float("min", -inf));
    p.hi = static_cast<float>(c.v.get_float("max", inf));
  }
  return std::make_unique<UnaryOp>(c.dev, c.in[0].dtype, p, c.out[0].numel);
}

std::unique_ptr<CudaOp> make_binary(OpContext& c) {
  const std::string_view op = c.v.op_type();
  const kern::BinaryOp bop = op == "Add"   ? kern::BinaryOp::kAdd
                             : op == "Sub" ? kern::BinaryOp::kSub
                             : op == "Mul" ? kern::BinaryOp::kMul
                                           : kern::BinaryOp::kDiv;
  std::optional<kern::Broadcast> bc;
  const auto& y = c.out[0].dims;
  if (c.in[0].dims != y || c.in[1].dims != y) bc = make_broadcast(c.in[0].dims, c.in[1].dims, y);
  return std::make_unique<BinaryOp>(c.dev, c.out[0].dtype, bop, c.out[0].numel, bc);
}

}  // namespace ampx::cuda
