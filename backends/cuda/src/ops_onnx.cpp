// The later ONNX ops of issue 40 on the own kernels (kernels_onnx.hpp):
// Sin ... Atanh and the importer's float-only unaries, the bit ops, CumProd, RMSNorm,
// RotaryEmbedding, Col2Im, MaxPoolIndices. BitCast is a byte copy (make_copy, ops_data.cpp).
#include <stdexcept>
#include <string>
#include <utility>

#include "allocator.hpp"
#include "cuda_error.hpp"
#include "fn_op.hpp"
#include "kernels_onnx.hpp"
#include "ops.hpp"

namespace ampx::cuda {
namespace {

using In = std::span<const void* const>;
using Out = std::span<void* const>;

kern::MathOp math_op(std::string_view op) {
  using M = kern::MathOp;
  static constexpr std::pair<std::string_view, M> kOps[] = {
      {"Sin", M::kSin},
      {"Cos", M::kCos},
      {"Tan", M::kTan},
      {"Asin", M::kAsin},
      {"Acos", M::kAcos},
      {"Atan", M::kAtan},
      {"Sinh", M::kSinh},
      {"Cosh", M::kCosh},
      {"Asinh", M::kAsinh},
      {"Acosh", M::kAcosh},
      {"Atanh", M::kAtanh},
      {"LeakyRelu", M::kLeakyRelu},
      {"HardSigmoid", M::kHardSigmoid},
      {"HardSwish", M::kHardSwish},
      {"Erf", M::kErf},
      {"Sqrt", M::kSqrt},
      {"Reciprocal", M::kReciprocal},
      {"Exp", M::kExp},
      {"Log", M::kLog},
      {"Floor", M::kFloor},
      {"Ceil", M::kCeil},
      {"Round", M::kRound},
      {"Softplus", M::kSoftplus},
      {"Mish", M::kMish},
  };
  for (const auto& [name, m] : kOps)
    if (name == op) return m;
  throw std::logic_error("no math unary " + std::string(op));  // the registry sends none
}

// RotaryEmbedding: a position outside the caches is a data error (cpu_ref
// reports it); the kernel flags it on the device and the launch reads the
// flag back (one 4-byte copy and a wait for the stream, as Gather's index
// check), failing with INVALID_ARGUMENT and the node.
class RotaryOp final : public CudaOp {
 public:
  RotaryOp(DeviceContext& dev, ampx_dtype dt, kern::RotaryParams p) : dev_(dev), dt_(dt), p_(p) {}
  void launch(In in, Out out) override {
    if (!p_.has_pos) {
      check_kernel(kern::rotary_embedding(dt_, p_, in[0], in[1], in[2], nullptr, out[0], nullptr,
                                          dev_.stream()),
                   "rotary_embedding");
      return;
    }
    DeviceMemory flag(dev_.allocator(), sizeof(int));
    check_cuda(cudaMemsetAsync(flag.get(), 0, sizeof(int), dev_.stream()), "cudaMemsetAsync");
    check_kernel(kern::rotary_embedding(dt_, p_, in[0], in[1], in[2], in[3], out[0],
                                        static_cast<int*>(flag.get()), dev_.stream()),
                 "rotary_embedding");
    int bad = 0;
    check_cuda(cudaMemcpyAsync(&bad, flag.get(), sizeof bad, cudaMemcpyDeviceToHost, dev_.stream()),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(dev_.stream()), "cudaStreamSynchronize");
    if (bad) {
      throw std::invalid_argument("position_ids: a position is out of range for the caches' " +
                                  std::to_string(p_.positions) + " rows");
    }
  }

 private:
  DeviceContext& dev_;
  ampx_dtype dt_;
  kern::RotaryParams p_;
};

}  // namespace

std::unique_ptr<CudaOp> make_math_unary(OpContext& c) {
  kern::MathParams p;
  p.op = math_op(c.v.op_type());
  // Attributes as f32, like cpu_ref's T(alpha) in the compute type.
  if (p.op == kern::MathOp::kLeakyRelu) p.alpha = static_cast<float>(c.v.get_float("alpha", 0.01));
  if (p.op == kern::MathOp::kHardSigmoid) {
    p.alpha = static_cast<float>(c.v.get_float("alpha", 0.2));
    p.beta = static_cast<float>(c.v.get_float("beta", 0.5));
  }
  const ampx_dtype dt = c.in[0].dtype;
  const int64_t n = c.out[0].numel;
  cudaStream_t s = c.dev.stream();
  return fn_op("math_unary",
               [=](In in, Out out) { return kern::math_unary(dt, p, in[0], out[0], n, s); });
}

std::unique_ptr<CudaOp> make_bitwise(OpContext& c) {
  const std::string_view name = c.v.op_type();
  kern::BitOp op = kern::BitOp::kXor;
  if (name == "BitwiseAnd") op = kern::BitOp::kAnd;
  if (name == "BitwiseOr") op = kern::BitOp::kOr;
  if (name == "BitShift")  // LEFT or RIGHT: the op set allows nothing else
    op = c.v.get_string("direction") == "LEFT" ? kern::BitOp::kShiftLeft : kern::BitOp::kShiftRight;
  std::optional<kern::Broadcast> bc;
  const auto& y = c.out[0].dims;
  if (c.in[0].dims != y || c.in[1].dims != y) bc = make_broadcast(c.in[0].dims, c.in[1].dims, y);
  const ampx_dtype dt = c.out[0].dtype;
  const int64_t n = c.out[0].numel;
  cudaStream_t s = c.dev.stream();
  return fn_op("bitwise", [=](In in, Out out) {
    return kern::bitwise(dt, op, in[0], in[1], out[0], n, bc ? &*bc : nullptr, s);
  });
}

std::unique_ptr<CudaOp> make_bitwise_not(OpContext& c) {
  const ampx_dtype dt = c.out[0].dtype;
  const int64_t n = c.out[0].numel;
  cudaStream_t s = c.dev.stream();
  return fn_op("bitwise_not",
               [=](In in, Out out) { return kern::bitwise_not(dt, in[0], out[0], n, s); });
}

std::unique_ptr<CudaOp> make_cum_prod(OpContext& c) {
  const auto& x = c.in[0].dims;  // rank >= 1 (validated)
  const size_t axis = norm_axis(c.v.get_int("axis", 0), x.size());
  kern::CumParams p;
  p.outer = product(x, 0, axis);
  p.len = x[axis];
  p.inner = product(x, axis + 1, x.size());
  p.exclusive = c.v.get_int("exclusive", 0) != 0;
  p.reverse = c.v.get_int("reverse", 0) != 0;
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("cum_prod", [=](In in, Out out) { return kern::cum_prod(dt, p, in[0], out[0], s); });
}

std::unique_ptr<CudaOp> make_rmsnorm(OpContext& c) {
  const auto& x = c.in[0].dims;  // rank >= 1 (validated)
  const size_t axis = norm_axis(c.v.get_int("axis", -1), x.size());
  kern::RmsNormParams p;
  p.rows = product(x, 0, axis);
  p.cols = product(x, axis, x.size());
  p.eps = static_cast<float>(c.v.get_float("epsilon", 1e-5));
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("rmsnorm",
               [=](In in, Out out) { return kern::rmsnorm(dt, p, in[0], in[1], out[0], s); });
}

std::unique_ptr<CudaOp> make_rotary_embedding(OpContext& c) {
  const auto& x = c.in[0].dims;
  kern::RotaryParams p;
  p.rank4 = x.size() == 4;
  p.B = x[0];
  if (p.rank4) {
    p.H = x[1];
    p.S = x[2];
    p.D = x[3];
  } else {
    p.H = c.v.get_int("num_heads", 1);
    p.S = x[1];
    p.D = x[2] / p.H;
  }
  const int64_t r = c.v.get_int("rotary_embedding_dim", 0);
  p.R = r == 0 ? p.D : r;
  p.interleaved = c.v.get_int("interleaved", 0) != 0;
  p.has_pos = c.in.size() > 3;
  if (p.has_pos) {
    p.pos64 = c.in[3].dtype == AMPX_DTYPE_I64;
    p.positions = c.in[1].dims[0];
  }
  return std::make_unique<RotaryOp>(c.dev, c.in[0].dtype, p);
}

std::unique_ptr<CudaOp> make_col2im(OpContext& c) {
  const auto image = c.v.get_ints("image_shape");
  const size_t k = image.size();  // 1 .. kMaxRank - 2: Y's rank was checked
  const auto block = c.v.get_ints("block_shape");
  const auto strides = c.v.get_ints("strides", std::vector<int64_t>(k, 1));
  const auto dilations = c.v.get_ints("dilations", std::vector<int64_t>(k, 1));
  const auto pads = c.v.get_ints("pads", std::vector<int64_t>(2 * k, 0));
  kern::Col2ImParams p;
  p.k = static_cast<int32_t>(k);
  p.planes = c.out[0].dims[0] * c.out[0].dims[1];
  p.image_cells = p.block_cells = p.positions = 1;
  for (size_t a = 0; a < k; ++a) {
    p.image[a] = image[a];
    p.block[a] = block[a];
    p.strides[a] = strides[a];
    p.dilations[a] = dilations[a];
    p.pads_begin[a] = pads[a];
    // The block positions along the axis, as opset's col2im() counts them.
    const int64_t reach = dilations[a] * (block[a] - 1) + 1;
    p.blocks[a] = (image[a] + pads[a] + pads[a + k] - reach) / strides[a] + 1;
    p.image_cells *= image[a];
    p.block_cells *= block[a];
    p.positions *= p.blocks[a];
  }
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("col2im", [=](In in, Out out) { return kern::col2im(dt, p, in[0], out[0], s); });
}

std::unique_ptr<CudaOp> make_maxpool_indices(OpContext& c) {
  kern::PoolIndicesParams p;
  p.pool = pool_params(c, c.in[0].dims, c.out[0].dims, true);
  const auto dil = c.v.get_ints("dilations", {1, 1});
  p.dh = dil[0];
  p.dw = dil[1];
  p.column_major = c.v.get_int("storage_order", 0) == 1;
  const ampx_dtype dt = c.in[0].dtype;
  cudaStream_t s = c.dev.stream();
  return fn_op("maxpool_indices", [=](In in, Out out) {
    return kern::maxpool_indices(dt, p, in[0], static_cast<int64_t*>(out[0]), s);
  });
}

}  // namespace ampx::cuda
