// RMSNormalization (opset 23) as the op set's fused RMSNorm, and
// LayerNormalization's optional Mean and InvStdDev outputs, and
// BatchNormalization in training mode (docs/ONNX.md).
//
// LayerNorm's Y stays the fused op; the statistics, when a graph reads
// them, are the few op-set ops that compute them in the stash type
// (ReduceMean of X, ReduceMean of the centred squares, then 1/sqrt(v + eps)),
// the formula of ONNX's reference. Every backend runs them, and the fused
// LayerNorm, which LayerNormGrad pairs with in training, is unchanged.
#include <fmt/format.h>
#include <ampx/half.hpp>

#include <cstring>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

// A [1] constant of `value` in the float dtype `dt`.
ValueId scalar(Importer& im, DType dt, double value) {
  std::vector<std::byte> bytes(dtype_size(dt));
  if (dt == DType::kF64) {
    std::memcpy(bytes.data(), &value, 8);
  } else if (dt == DType::kF32) {
    const auto f = static_cast<float>(value);
    std::memcpy(bytes.data(), &f, 4);
  } else {
    const auto f = static_cast<float>(value);
    const uint16_t h = dt == DType::kF16 ? float_to_f16_bits(f) : float_to_bf16_bits(f);
    std::memcpy(bytes.data(), &h, 2);
  }
  return im.constant(TensorType{dt, {1}}, std::move(bytes));
}

// The normalisation's first axis, in [0, rank).
int64_t norm_axis(Importer& im, const onnx::NodeProto& n, int64_t rank) {
  const int64_t axis = im.attr_int_or(n, "axis", -1);
  if (axis < -rank || axis >= rank)
    im.fail(fmt::format("axis {} is outside [{}, {}) for X of rank {}", axis, -rank, rank, rank));
  return axis < 0 ? axis + rank : axis;
}

// The stash type (the statistics' dtype): float (1, the default) or double
// (11), as ONNX's LayerNormalization defines; ampx computes in no other.
DType stash_dtype(Importer& im, const onnx::NodeProto& n) {
  const int64_t stash = im.attr_int_or(n, "stash_type", 1);
  if (stash != onnx::TensorProto::FLOAT && stash != onnx::TensorProto::DOUBLE)
    im.fail(fmt::format("stash_type {} is not supported; 1 (float) or 11 (double)", stash));
  return stash == onnx::TensorProto::DOUBLE ? DType::kF64 : DType::kF32;
}

}  // namespace

void layer_norm_statistics(Importer& im, const onnx::NodeProto& n) {
  ValueId x = im.input(n, 0);
  const Shape xs = im.type(x).shape;
  const auto rank = static_cast<int64_t>(xs.size());
  if (rank == 0) im.fail("X is a scalar; LayerNormalization needs rank >= 1");
  const int64_t axis = norm_axis(im, n, rank);
  const DType stash = stash_dtype(im, n);
  if (im.type(x).dtype != stash) x = im.emit1("Cast", {x}, {{"to", int64_t(to_c(stash))}});
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < rank; ++a) axes.push_back(a);
  const AttrMap reduce{{"axes", axes}, {"keepdims", int64_t{1}}};
  const ValueId mean = im.emit1("ReduceMean", {x}, reduce);
  if (im.output_used(n, 1)) im.bind(n, 1, mean);
  if (!im.output_used(n, 2)) return;
  const ValueId centred = im.emit1("Sub", {x, mean});
  const ValueId var = im.emit1("ReduceMean", {im.emit1("Mul", {centred, centred})}, reduce);
  const double eps = im.attr_float_or(n, "epsilon", 1e-5f);
  const ValueId std_dev = im.emit1("Sqrt", {im.emit1("Add", {var, scalar(im, stash, eps)})});
  im.bind(n, 2, im.emit1("Reciprocal", {std_dev}));
}

// RMSNormalization 23: Y = X / sqrt(mean(X², axes axis..) + epsilon) · scale,
// scale broadcastable to the normalised dims (expanded to them here).
void rms_norm(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  ValueId scale = im.input(n, 1);
  const Shape xs = im.type(x).shape;
  const auto rank = static_cast<int64_t>(xs.size());
  if (rank == 0) im.fail("X is a scalar; RMSNormalization needs rank >= 1");
  const int64_t axis = norm_axis(im, n, rank);
  // ampx's statistics are f32 for f32 and 16-bit X (f64 for f64): the
  // default stash type, the only one ONNX's reference defines.
  if (im.attr_int_or(n, "stash_type", 1) != 1)
    im.fail(fmt::format("stash_type {} is not supported; only 1 (float)",
                        im.attr_int_or(n, "stash_type", 1)));
  if (im.type(scale).dtype != im.type(x).dtype)
    im.fail(fmt::format("scale is {} and X {}; ampx needs them of one type",
                        dtype_name(im.type(scale).dtype), dtype_name(im.type(x).dtype)));
  const std::vector<int64_t> norm(xs.begin() + axis, xs.end());
  const Shape ss = im.type(scale).shape;
  if (std::vector<int64_t>(ss.begin(), ss.end()) != norm) {
    bool broadcasts = ss.size() <= norm.size();
    for (size_t i = 0; broadcasts && i < ss.size(); ++i) {
      const int64_t want = norm[norm.size() - ss.size() + i];
      broadcasts = ss[i] == 1 || ss[i] == want;
    }
    if (!broadcasts)
      im.fail(fmt::format("scale of shape {} does not broadcast to the normalised dims {}",
                          shape_str(ss), shape_str(Shape(norm.begin(), norm.end()))));
    scale = im.emit1("Expand", {scale}, {{"shape", norm}});
  }
  im.bind(n, 0,
          im.emit1("RMSNorm", {x, scale},
                   {{"axis", axis}, {"epsilon", double(im.attr_float_or(n, "epsilon", 1e-5f))}}));
}

}  // namespace ampx::onnx_io

namespace ampx::onnx_io {

// BatchNormalization 14+ with training_mode=1, as ONNX's reference computes
// it: the batch's mean and (population) variance per channel, over every
// axis but 1; Y = (X - mean) / sqrt(var + epsilon) * scale + B with them;
// running_mean/var = input_mean/var * momentum + batch's * (1 - momentum).
void batch_norm_training(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const Shape xs = im.type(x).shape;
  const DType dt = im.type(x).dtype;
  if (!is_float(dt)) im.fail(fmt::format("X is {}, expected a float tensor", dtype_name(dt)));
  if (xs.size() < 2) im.fail("X must have rank >= 2 ([N, C, ...])");
  const int64_t c = xs[1];
  std::vector<int64_t> axes{0}, per_channel(xs.size(), 1);
  for (int64_t a = 2; a < static_cast<int64_t>(xs.size()); ++a) axes.push_back(a);
  per_channel[1] = c;
  // Inputs 1-4 as [C] in X's type, and as [1, C, 1, ...] to broadcast.
  const auto channel = [&](int i) {
    ValueId v = im.input(n, i);
    if (im.type(v).shape != Shape{c})
      im.fail(fmt::format("input {} must have shape [C] = [{}]", i, c));
    if (!is_float(im.type(v).dtype)) im.fail(fmt::format("input {} is not a float tensor", i));
    if (im.type(v).dtype != dt) v = im.emit1("Cast", {v}, {{"to", int64_t(to_c(dt))}});
    return v;
  };
  const auto wide = [&](ValueId v) { return im.emit1("Reshape", {v}, {{"shape", per_channel}}); };
  const AttrMap reduce{{"axes", axes}, {"keepdims", int64_t{0}}};
  const ValueId mean = im.emit1("ReduceMean", {x}, reduce);
  const ValueId centred = im.emit1("Sub", {x, wide(mean)});
  const ValueId var = im.emit1("ReduceMean", {im.emit1("Mul", {centred, centred})}, reduce);
  const double eps = im.attr_float_or(n, "epsilon", 1e-5f);
  const ValueId std_dev = im.emit1("Sqrt", {im.emit1("Add", {wide(var), scalar(im, dt, eps)})});
  const ValueId normed = im.emit1("Div", {centred, std_dev});
  im.bind(n, 0, im.emit1("Add", {im.emit1("Mul", {normed, wide(channel(1))}), wide(channel(2))}));
  const double momentum = im.attr_float_or(n, "momentum", 0.9f);
  for (int i : {1, 2}) {
    if (!im.output_used(n, i)) continue;
    const ValueId running = channel(i + 2);
    const DType ut = im.type(im.input(n, i + 2)).dtype;
    ValueId r =
        im.emit1("Add", {im.emit1("Mul", {running, scalar(im, dt, momentum)}),
                         im.emit1("Mul", {i == 1 ? mean : var, scalar(im, dt, 1.0 - momentum)})});
    if (ut != dt) r = im.emit1("Cast", {r}, {{"to", int64_t(to_c(ut))}});
    im.bind(n, i, r);
  }
}

}  // namespace ampx::onnx_io
