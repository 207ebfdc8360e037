// LRN (opsets 1, 13) composed at import: ONNX's formula
//   Y = X / (bias + alpha / size * square_sum)^beta,
//   square_sum[n, c, ...] = sum of X[n, i, ...]^2 over the channels i in
//   [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] inside [0, C),
// the window sum as an AveragePool over the channel axis of X² viewed as
// [N, 1, C, S] (S the spatial cells), padded with zeros that count
// (count_include_pad), times its kernel's cell count. The base and the Pow
// stay apart so that AMP keeps the Pow (black) in f32.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "onnx_ops.hpp"

namespace ampx::onnx_io {
namespace {

// A shape-[1] constant of dtype `dt` holding `value` (an f64 constant cast
// at import by the reference Cast, so every dtype rounds as Cast does).
ValueId constant_of(Importer& im, DType dt, double value) {
  std::vector<std::byte> bytes(sizeof value);
  std::memcpy(bytes.data(), &value, sizeof value);
  const ValueId c = im.constant({DType::kF64, {1}}, std::move(bytes));
  return dt == DType::kF64 ? c : im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
}

}  // namespace

void lrn(Importer& im, const onnx::NodeProto& n) {
  const ValueId x = im.input(n, 0);
  const TensorType t = im.type(x);  // a copy: emit() grows the graph
  if (!is_float(t.dtype)) im.fail("input X must be floating point");
  if (t.shape.size() < 3)
    im.fail(fmt::format("input X must be [N, C, D1, ...] (rank >= 3), got {}", shape_str(t.shape)));
  const auto size = im.attr_int(n, "size");
  if (!size) im.fail("attribute 'size' is required");
  if (*size < 1) im.fail(fmt::format("attribute 'size' must be >= 1, got {}", *size));
  const double alpha = im.attr_float_or(n, "alpha", 1e-4f);
  const double beta = im.attr_float_or(n, "beta", 0.75f);
  const double bias = im.attr_float_or(n, "bias", 1.0f);
  const int64_t c = t.shape[1];
  __int128 cells = 1;
  for (size_t i = 2; i < t.shape.size(); ++i) cells *= t.shape[i];
  const int64_t s = im.to_i64(cells, "the spatial cell count");
  // The window's reach below and above c, clamped to the channels there
  // are: a window wider than the channels sums the same squares, and the
  // kernel (and so the pool's work) stays bounded by 2C - 1 whatever the
  // attribute says.
  const int64_t reach = std::max<int64_t>(c - 1, 0);
  const int64_t lo = std::min((*size - 1) / 2, reach);
  const int64_t hi = std::min(*size / 2, reach);  // ceil((size - 1) / 2)
  const int64_t kernel = lo + hi + 1;
  const std::vector<int64_t> view{t.shape[0], 1, c, s};
  const ValueId sq = im.emit1("Mul", {x, x});
  const ValueId avg = im.emit1("AveragePool", {im.emit1("Reshape", {sq}, {{"shape", view}})},
                               {{"kernel_shape", std::vector<int64_t>{kernel, 1}},
                                {"strides", std::vector<int64_t>{1, 1}},
                                {"pads", std::vector<int64_t>{lo, 0, hi, 0}},
                                {"ceil_mode", int64_t{0}},
                                {"count_include_pad", int64_t{1}}});
  const std::vector<int64_t> shape(t.shape.begin(), t.shape.end());
  const ValueId mean = im.emit1("Reshape", {avg}, {{"shape", shape}});
  // alpha / size * (kernel * mean): one constant factor.
  const double factor = alpha / static_cast<double>(*size) * static_cast<double>(kernel);
  const ValueId base = im.emit1("Add", {im.emit1("Mul", {mean, constant_of(im, t.dtype, factor)}),
                                        constant_of(im, t.dtype, bias)});
  im.bind(n, 0, im.emit1("Div", {x, im.emit1("Pow", {base, constant_of(im, t.dtype, beta)})}));
}

}  // namespace ampx::onnx_io
