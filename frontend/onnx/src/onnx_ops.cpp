#include "onnx_ops.hpp"

#include <ampx/ir/shape_inference.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "tensor_proto.hpp"
#include "tensor_size.hpp"

namespace ampx::onnx_io {

int64_t rank_of(Importer& im, ValueId v) {
  return static_cast<int64_t>(im.type(v).shape.size());
}

int64_t norm_axis(Importer& im, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) im.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  return a;
}

namespace {

using N = onnx::NodeProto;
using I = Importer;

// norm_axis() of each of `axes`, refusing an axis listed twice (ONNX
// requires them distinct; a repeat would silently lose one of its values).
std::vector<int64_t> distinct_axes(I& im, std::span<const int64_t> axes, int64_t rank,
                                   std::string_view what) {
  std::vector<int64_t> out;
  for (int64_t v : axes) {
    const int64_t a = norm_axis(im, v, rank);
    if (std::find(out.begin(), out.end(), a) != out.end())
      im.fail(fmt::format("{} lists axis {} twice", what, a));
    out.push_back(a);
  }
  return out;
}

// Every value of an INTS attribute (or kernel dims) at least `lo`.
void require_at_least(I& im, const char* name, std::span<const int64_t> values, int64_t lo) {
  for (int64_t v : values)
    if (v < lo) im.fail(fmt::format("{} has value {}, it must be >= {}", name, v, lo));
}

// --- one-to-one ops: same name, attributes copied as they are -------------

void same_unary(I& im, const N& n) {
  im.bind(n, 0, im.emit1(n.op_type(), {im.input(n, 0)}));
}

void same_binary(I& im, const N& n) {
  im.bind(n, 0, im.emit1(n.op_type(), {im.input(n, 0), im.input(n, 1)}));
}

// Opsets 1 to 6 broadcast Add, Mul, ... only with `broadcast=1`, aligning B
// at `axis`; opset 7 replaced that by numpy broadcasting and dropped both
// attributes. A node that still carries them means the old rule, which
// ampx does not implement.
void refuse_legacy_broadcast(I& im, const N& n) {
  for (const char* a : {"broadcast", "axis"})
    if (im.attr_int(n, a))
      im.fail(
          fmt::format("attribute '{}' is opset 1-6 broadcasting (opset 7 replaced it by numpy "
                      "broadcasting); it is not supported",
                      a));
}

// Add, Sub, Mul, Div, Equal: numpy broadcasting from opset 7 on.
void broadcasting_binary(I& im, const N& n) {
  refuse_legacy_broadcast(im, n);
  same_binary(im, n);
}

void leaky_relu(I& im, const N& n) {
  im.bind(n, 0,
          im.emit1("LeakyRelu", {im.input(n, 0)},
                   {{"alpha", double(im.attr_float_or(n, "alpha", 0.01f))}}));
}

void hard_sigmoid(I& im, const N& n) {
  im.bind(n, 0,
          im.emit1("HardSigmoid", {im.input(n, 0)},
                   {{"alpha", double(im.attr_float_or(n, "alpha", 0.2f))},
                    {"beta", double(im.attr_float_or(n, "beta", 0.5f))}}));
}

void gelu(I& im, const N& n) {
  const std::string approx = im.attr_string_or(n, "approximate", "none");
  im.bind(n, 0, im.emit1("Gelu", {im.input(n, 0)}, {{"approximate", approx}}));
}

// A constant of `type` holding `value` everywhere: an f64 constant Cast to
// the type (folded; Cast saturates an infinity to an integer's bound).
ValueId filled(I& im, const TensorType& type, double value) {
  const TensorType wide{DType::kF64, type.shape};
  im.check_size(wide, "its output");
  std::vector<double> v(static_cast<size_t>(element_count(type.shape)), value);
  std::vector<std::byte> bytes(v.size() * sizeof(double));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  const ValueId c = im.constant(wide, std::move(bytes));
  return type.dtype == DType::kF64 ? c : im.emit1("Cast", {c}, {{"to", int64_t(to_c(type.dtype))}});
}

// An i32/i64 base to an i32/i64 exponent known at import and >= 0:
// exponentiation by squaring in X's type (Mul wraps, as numpy's power and
// so ONNX's reference do), exact at any size. A bit of the exponents is a
// bool constant selecting, per element, whether this square multiplies in.
std::optional<ValueId> exact_integer_pow(I& im, const N& n, ValueId x, ValueId y) {
  const DType xt = im.type(x).dtype, yt = im.type(y).dtype;
  const bool ints =
      (xt == DType::kI32 || xt == DType::kI64) && (yt == DType::kI32 || yt == DType::kI64);
  if (!ints || !im.known_value(y)) return std::nullopt;
  const auto e = im.const_ints(n, 1, "the exponent");
  int64_t top = 0;
  for (int64_t v : e) {
    if (v < 0) return std::nullopt;  // ONNX Runtime's double pow, truncated
    top = std::max(top, v);
  }
  const auto out_shape = broadcast_shapes(im.type(x).shape, im.type(y).shape);
  if (!out_shape) im.fail("X and Y do not broadcast");
  ValueId r = filled(im, {xt, *out_shape}, 1.0);
  ValueId b = x;
  for (int bit = 0; bit < 63 && (top >> bit) != 0; ++bit) {
    if (bit > 0) b = im.emit1("Mul", {b, b});
    const TensorType mt{DType::kBool, im.type(y).shape};
    std::vector<std::byte> mask(e.size());
    for (size_t i = 0; i < e.size(); ++i) mask[i] = std::byte((e[i] >> bit) & 1);
    r = im.emit1("Where", {im.constant(mt, std::move(mask)), im.emit1("Mul", {r, b}), r});
  }
  return r;
}

// Pow's exponent may be any numeric type in ONNX; the IR wants X's dtype.
void pow_op(I& im, const N& n) {
  refuse_legacy_broadcast(im, n);
  const ValueId x = im.input(n, 0);
  ValueId y = im.input(n, 1);
  const DType xt = im.type(x).dtype;
  if (is_integer(xt)) {
    if (im.opset() < 12) im.fail("Pow of integers is defined from opset 12");
    if (const auto r = exact_integer_pow(im, n, x, y)) return im.bind(n, 0, *r);
    // Otherwise (a float exponent, a negative or run-time one): ONNX
    // Runtime's std::pow in double, the result converted to X's type; here
    // Cast to int saturates (NaN is 0) where C++'s conversion is undefined.
    // The planner runs the f64 Pow in f32 (docs/OPS.md, "f64"), so this is
    // exact while |X^Y| < 2^24.
    const auto to = [&](ValueId v, DType dt) {
      return im.emit1("Cast", {v}, {{"to", int64_t(to_c(dt))}});
    };
    const ValueId p = im.emit1("Pow", {to(x, DType::kF64), to(y, DType::kF64)});
    return im.bind(n, 0, to(p, xt));
  }
  if (im.type(y).dtype != im.type(x).dtype)
    y = im.emit1("Cast", {y}, {{"to", int64_t(to_c(im.type(x).dtype))}});
  im.bind(n, 0, im.emit1("Pow", {x, y}));
}

// numpy's matmul: a 1-D A is a row [1, K] and a 1-D B a column [K, 1],
// the dimension added dropped from the result (MatMul 1, 9 and 13 say so).
void matmul(I& im, const N& n) {
  ValueId a = im.input(n, 0), b = im.input(n, 1);
  const Shape as = im.type(a).shape, bs = im.type(b).shape;
  if (as.empty() || bs.empty()) im.fail("MatMul inputs must not be scalars");
  if (as.size() >= 2 && bs.size() >= 2) return im.bind(n, 0, im.emit1("MatMul", {a, b}));
  const auto reshape = [&](ValueId v, Shape s) {
    return im.emit1("Reshape", {v}, {{"shape", std::vector<int64_t>(s.begin(), s.end())}});
  };
  if (as.size() == 1) a = reshape(a, {1, as[0]});
  if (bs.size() == 1) b = reshape(b, {bs[0], 1});
  const ValueId y = im.emit1("MatMul", {a, b});
  Shape ys = im.type(y).shape;  // [..., M, N]: drop the row's M, then the column's N
  if (as.size() == 1) ys.erase(ys.end() - 2);
  if (bs.size() == 1) ys.erase(ys.end() - 1);
  im.bind(n, 0, reshape(y, ys));
}

void clip(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  if (is_integer(im.type(x).dtype)) {
    // Integer Clip (opset 12+): Max with min, then Min with max, on the
    // inputs themselves (exact at any width; min > max gives max, as ONNX).
    if (im.opset() < 12) im.fail("Clip of integers is defined from opset 12");
    ValueId y = x;
    for (int i : {1, 2}) {
      if (!im.has_input(n, i)) continue;
      const ValueId bound = im.input(n, i);
      if (element_count(im.type(bound).shape) != 1)
        im.fail(fmt::format("{} must be a scalar", i == 1 ? "min" : "max"));
      y = im.emit1(i == 1 ? "Max" : "Min", {y, bound});
    }
    return im.bind(n, 0, y);
  }
  AttrMap attrs;
  if (im.opset() < 11) {
    if (auto v = im.attr_float(n, "min")) attrs["min"] = double(*v);
    if (auto v = im.attr_float(n, "max")) attrs["max"] = double(*v);
  } else {
    if (im.has_input(n, 1)) attrs["min"] = im.const_scalar(n, 1, "min");
    if (im.has_input(n, 2)) attrs["max"] = im.const_scalar(n, 2, "max");
  }
  // min > max: ONNX (and numpy's clip) give max everywhere (NaN stays
  // NaN), which is Clip with min = max.
  if (attrs.contains("min") && attrs.contains("max") &&
      std::get<double>(attrs["min"]) > std::get<double>(attrs["max"]))
    attrs["min"] = attrs["max"];
  im.bind(n, 0, im.emit1("Clip", {im.input(n, 0)}, std::move(attrs)));
}

// Min, Max, Sum, Mean: any number of inputs, numpy broadcasting from opset
// 8 on (opsets 6-7 want equal shapes, which broadcasting accepts too).
void variadic(I& im, const N& n) {
  std::vector<ValueId> ins;
  for (int i = 0; i < n.input_size(); ++i)
    if (im.has_input(n, i)) ins.push_back(im.input(n, i));
  if (ins.empty()) im.fail("needs at least one input");
  im.bind(n, 0, im.emit1(n.op_type(), std::move(ins)));
}

void where(I& im, const N& n) {
  im.bind(n, 0, im.emit1("Where", {im.input(n, 0), im.input(n, 1), im.input(n, 2)}));
}

// --- convolution and pooling ----------------------------------------------

// Explicit pads for auto_pad SAME_UPPER/SAME_LOWER/VALID (ONNX's formula).
std::vector<int64_t> resolve_pads(I& im, const N& n, const Shape& x, std::span<const int64_t> k,
                                  std::span<const int64_t> strides,
                                  std::span<const int64_t> dilations) {
  const std::string auto_pad = im.attr_string_or(n, "auto_pad", "NOTSET");
  const size_t s = k.size();
  if (auto_pad == "NOTSET") {
    auto pads = im.attr_ints(n, "pads").value_or(std::vector<int64_t>(2 * s, 0));
    if (pads.size() != 2 * s)
      im.fail(fmt::format("pads has {} values, expected {}", pads.size(), 2 * s));
    return pads;
  }
  std::vector<int64_t> pads(2 * s, 0);
  if (auto_pad == "VALID") return pads;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    im.fail("auto_pad '" + auto_pad + "' is not valid");
  for (size_t i = 0; i < s; ++i) {  // strides and dilations are >= 1 (window_attrs)
    const __int128 in = x[2 + i], stride = strides[i];
    const __int128 out = (in + stride - 1) / stride;
    const __int128 total = (out - 1) * stride + (__int128{k[i]} - 1) * dilations[i] + 1 - in;
    const int64_t all = im.to_i64(std::max<__int128>(0, total), "the SAME padding");
    const int64_t small = all / 2, big = all - small;
    pads[i] = auto_pad == "SAME_UPPER" ? small : big;
    pads[i + s] = auto_pad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

// Conv, ConvTranspose and pooling: `s` (the spatial rank) strides and
// dilations, each >= 1.
struct Window {
  std::vector<int64_t> strides, dilations;
};

Window window_attrs(I& im, const N& n, size_t s = 2) {
  Window w{im.attr_ints(n, "strides").value_or(std::vector<int64_t>(s, 1)),
           im.attr_ints(n, "dilations").value_or(std::vector<int64_t>(s, 1))};
  if (w.strides.size() != s || w.dilations.size() != s)
    im.fail(fmt::format("strides/dilations must have {} value{}", s, s == 1 ? "" : "s"));
  require_at_least(im, "attribute 'strides'", w.strides, 1);
  require_at_least(im, "attribute 'dilations'", w.dilations, 1);
  return w;
}

int64_t group_attr(I& im, const N& n) {
  const int64_t group = im.attr_int_or(n, "group", 1);
  if (group < 1) im.fail(fmt::format("attribute 'group' is {}, it must be >= 1", group));
  return group;
}

// The weight's kernel dims [kH, kW], each >= 1.
std::vector<int64_t> weight_kernel(I& im, ValueId w) {
  const Shape& ws = im.type(w).shape;
  if (ws.size() != 4) im.fail("weight must be 4-D");
  std::vector<int64_t> k{ws[2], ws[3]};
  require_at_least(im, "the weight's kernel dimension", k, 1);
  return k;
}

void require_2d(I& im, ValueId x, const char* what) {
  if (rank_of(im, x) != 4)
    im.fail(fmt::format("only 2-D {} (a 4-D NCHW input) is supported, got rank {}", what,
                        rank_of(im, x)));
}

// A 1-D convolution (X [N, C, L], W [O, C/group, K]) as a 2-D one over
// [N, C, 1, L]: audio front ends (Silero VAD's STFT) are Conv1d.
ValueId conv1d(I& im, const N& n, ValueId x, ValueId w, ValueId bias) {
  const Shape xs = im.type(x).shape, ws = im.type(w).shape;
  if (ws.size() != 3)
    im.fail(fmt::format("a 1-D convolution's weight must be 3-D, got rank {}", ws.size()));
  const std::vector<int64_t> k{ws[2]};
  require_at_least(im, "the weight's kernel dimension", k, 1);
  const auto strides = im.attr_ints(n, "strides").value_or(std::vector<int64_t>{1});
  const auto dilations = im.attr_ints(n, "dilations").value_or(std::vector<int64_t>{1});
  if (strides.size() != 1 || dilations.size() != 1)
    im.fail("strides/dilations of a 1-D convolution must have 1 value");
  require_at_least(im, "attribute 'strides'", strides, 1);
  require_at_least(im, "attribute 'dilations'", dilations, 1);
  const std::vector<int64_t> p = resolve_pads(im, n, xs, k, strides, dilations);
  AttrMap attrs{{"group", group_attr(im, n)},
                {"pads", std::vector<int64_t>{0, p[0], 0, p[1]}},
                {"strides", std::vector<int64_t>{1, strides[0]}},
                {"dilations", std::vector<int64_t>{1, dilations[0]}}};
  std::vector<ValueId> ins{
      im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>{xs[0], xs[1], 1, xs[2]}}}),
      im.emit1("Reshape", {w}, {{"shape", std::vector<int64_t>{ws[0], ws[1], 1, ws[2]}}})};
  if (bias != kNone) ins.push_back(bias);
  const ValueId y = im.emit1("Conv2d", std::move(ins), std::move(attrs));
  const Shape ys = im.type(y).shape;
  return im.emit1("Reshape", {y}, {{"shape", std::vector<int64_t>{ys[0], ys[1], ys[3]}}});
}

void conv(I& im, const N& n) {
  im.bind(n, 0,
          conv_values(im, n, im.input(n, 0), im.input(n, 1),
                      im.has_input(n, 2) ? im.input(n, 2) : kNone));
}

// ONNX: with output_shape (one value per spatial dimension) or SAME
// padding, total_padding = stride * (in - 1) + output_padding + eff_kernel - out.
// An output_shape past what the pads can reach (total_padding < 0) is the
// full output grown at the end: ONNX's reference pads it as output_padding
// does, so that part goes to `output_padding` (still below the stride).
std::vector<int64_t> conv_transpose_pads(I& im, const N& n, const Shape& xs,
                                         std::span<const int64_t> k, const Window& win,
                                         std::vector<int64_t>& output_padding) {
  const size_t s = k.size();
  std::vector<int64_t> pads = im.attr_ints(n, "pads").value_or(std::vector<int64_t>(2 * s, 0));
  if (pads.size() != 2 * s)
    im.fail(fmt::format("pads has {} values, expected {}", pads.size(), 2 * s));
  const std::string auto_pad = im.attr_string_or(n, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER")
    im.fail("auto_pad '" + auto_pad + "' is not valid");
  const auto output_shape = im.attr_ints(n, "output_shape");
  if (output_shape && output_shape->size() != s)
    im.fail(fmt::format("output_shape has {} values, expected {} (one per spatial dimension)",
                        output_shape->size(), s));
  if (output_shape) require_at_least(im, "attribute 'output_shape'", *output_shape, 1);
  if (!output_shape && (auto_pad == "NOTSET" || auto_pad == "VALID"))
    return auto_pad == "VALID" ? std::vector<int64_t>(2 * s, 0) : pads;
  pads.assign(2 * s, 0);
  for (size_t i = 0; i < s; ++i) {
    const __int128 in = xs[2 + i], stride = win.strides[i];
    const __int128 eff = (__int128{k[i]} - 1) * win.dilations[i] + 1;
    const __int128 out = output_shape ? __int128{(*output_shape)[i]} : in * stride;
    const __int128 total = stride * (in - 1) + output_padding[i] + eff - out;
    if (total < 0) {
      if (-total + output_padding[i] >= std::max<__int128>(stride, win.dilations[i]))
        im.fail("output_shape is larger than the input allows");
      output_padding[i] += static_cast<int64_t>(-total);
      continue;
    }
    const int64_t all = im.to_i64(total, "the padding");
    const bool upper = auto_pad == "SAME_UPPER";
    pads[i] = upper ? all / 2 : all - all / 2;
    pads[i + s] = upper ? all - all / 2 : all / 2;
  }
  return pads;
}

// The 2-D form of 1-D spatial attributes: a leading 1 (or, for pads, a 0
// before each half), as the op runs over [N, C, 1, L].
std::vector<int64_t> lift_1d(std::span<const int64_t> v, int64_t lead) {
  if (v.size() == 2) return {lead, v[0], lead, v[1]};
  return {lead, v[0]};
}

ValueId unsqueeze_h(I& im, ValueId x) {
  const Shape s = im.type(x).shape;
  return im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>{s[0], s[1], 1, s[2]}}});
}

ValueId squeeze_h(I& im, ValueId y) {
  const Shape s = im.type(y).shape;
  return im.emit1("Reshape", {y}, {{"shape", std::vector<int64_t>{s[0], s[1], s[3]}}});
}

// Spatial rank of X (rank - 2): 2, or 1, which the importer lifts to
// [N, C, 1, L].
size_t spatial_rank(I& im, ValueId x, const char* what) {
  const int64_t r = rank_of(im, x);
  if (r != 3 && r != 4)
    im.fail(fmt::format(
        "only 1-D and 2-D {} (a 3-D NCL or 4-D NCHW input) is supported, got rank {}", what, r));
  return static_cast<size_t>(r - 2);
}

// A 3-D transposed convolution (X [N, C, D, H, W], W [C, M/group, kD, kH,
// kW]) as kD 2-D ones over [N*D, C, H, W], one per depth tap kd (weights
// W[:, :, kd]): tap kd's result lands at depth id*sD + kd*dD of the
// uncropped output, so each is spread to stride sD (zeros between), shifted
// by kd*dD, and the taps are added; then the pads are cropped from the depth
// axis and the bias added. Every output is the sum over the same products
// as the 3-D one, ordered by depth tap first.
void conv_transpose_3d(I& im, const N& n, const Window& win, const std::vector<int64_t>& k,
                       const std::vector<int64_t>& pads, const std::vector<int64_t>& opad) {
  const ValueId x = im.input(n, 0), w = im.input(n, 1);
  const Shape xs = im.type(x).shape, ws = im.type(w).shape;
  const int64_t nd = im.to_i64(__int128{xs[0]} * xs[2], "the input's size");
  const auto reshape = [&](ValueId v, std::vector<int64_t> dims) {
    return im.emit1("Reshape", {v}, {{"shape", std::move(dims)}});
  };
  const ValueId x2 =
      reshape(im.emit1("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}}),
              {nd, xs[1], xs[3], xs[4]});
  const int64_t sd = win.strides[0], dd = win.dilations[0], depth = xs[2];
  // The uncropped depth: (D - 1) * sD + (kD - 1) * dD + 1 + output_padding.
  const int64_t full =
      im.to_i64((__int128{depth} - 1) * sd + (__int128{k[0]} - 1) * dd + 1 + opad[0], "the output");
  if (pads[0] < 0 || pads[3] < 0 || pads[0] + pads[3] >= full)
    im.fail("the depth pads must be >= 0 and leave an output depth");
  // Each tap's spread depth (below 2 * full) and the output's elements are
  // real tensors: bounded before anything is emitted.
  if (__int128{full} * 2 * xs[0] * ws[1] * group_attr(im, n) > kMaxTensorBytes)
    im.fail("the output is too large");
  AttrMap attrs{{"group", group_attr(im, n)},
                {"pads", std::vector<int64_t>{pads[1], pads[2], pads[4], pads[5]}},
                {"strides", std::vector<int64_t>{win.strides[1], win.strides[2]}},
                {"dilations", std::vector<int64_t>{win.dilations[1], win.dilations[2]}},
                {"output_padding", std::vector<int64_t>{opad[1], opad[2]}}};
  ValueId sum = kNone;
  int64_t m = 0, oh = 0, ow = 0;
  for (int64_t kd = 0; kd < k[0]; ++kd) {
    const ValueId wk = reshape(im.emit1("Slice", {w},
                                        {{"starts", std::vector<int64_t>{kd}},
                                         {"ends", std::vector<int64_t>{kd + 1}},
                                         {"axes", std::vector<int64_t>{2}}}),
                               {ws[0], ws[1], ws[3], ws[4]});
    const ValueId z = im.emit1("ConvTranspose", {x2, wk}, attrs);
    const Shape zs = im.type(z).shape;  // [N*D, M, OH, OW]
    m = zs[1], oh = zs[2], ow = zs[3];
    // [N, M, D, OH*OW], then D spread to stride sD: [N, M, D*sD, OH*OW].
    ValueId t = im.emit1("Transpose", {reshape(z, {xs[0], depth, m, oh * ow})},
                         {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    if (sd > 1 && depth > 1) {
      t = im.emit1("Pad", {reshape(t, {xs[0], m, depth, 1, oh * ow})},
                   {{"pads", std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0, sd - 1, 0}},
                    {"mode", std::string("constant")},
                    {"value", 0.0}});
      t = reshape(t, {xs[0], m, depth * sd, oh * ow});
    }
    // Shifted by kd*dD within `full` (the spread's trailing zeros past it cut).
    int64_t len = sd > 1 && depth > 1 ? depth * sd : depth;
    if (kd * dd + len > full) {
      len = full - kd * dd;
      t = im.emit1("Slice", {t},
                   {{"starts", std::vector<int64_t>{0}},
                    {"ends", std::vector<int64_t>{len}},
                    {"axes", std::vector<int64_t>{2}}});
    }
    if (kd * dd > 0 || kd * dd + len < full)
      t = im.emit1("Pad", {t},
                   {{"pads", std::vector<int64_t>{0, 0, kd * dd, 0, 0, 0, full - kd * dd - len, 0}},
                    {"mode", std::string("constant")},
                    {"value", 0.0}});
    sum = sum == kNone ? t : im.emit1("Add", {sum, t});
  }
  const int64_t od = full - pads[0] - pads[3];
  ValueId y = im.emit1("Slice", {sum},
                       {{"starts", std::vector<int64_t>{pads[0]}},
                        {"ends", std::vector<int64_t>{pads[0] + od}},
                        {"axes", std::vector<int64_t>{2}}});
  y = reshape(y, {xs[0], m, od, oh, ow});
  if (im.has_input(n, 2)) y = im.emit1("Add", {y, reshape(im.input(n, 2), {1, m, 1, 1, 1})});
  im.bind(n, 0, y);
}

void conv_transpose(I& im, const N& n) {
  const ValueId x = im.input(n, 0), w = im.input(n, 1);
  const int64_t rank = rank_of(im, x);
  const size_t s = rank == 5 ? 3 : spatial_rank(im, x, "transposed convolution");
  const Shape ws = im.type(w).shape;
  if (ws.size() != s + 2)
    im.fail(fmt::format("weight must be {}-D, got rank {}", s + 2, ws.size()));
  const std::vector<int64_t> k(ws.begin() + 2, ws.end());
  require_at_least(im, "the weight's kernel dimension", k, 1);
  const Window win = window_attrs(im, n, s);
  auto output_padding = im.attr_ints(n, "output_padding").value_or(std::vector<int64_t>(s, 0));
  if (output_padding.size() != s)
    im.fail(fmt::format("output_padding must have {} value{}", s, s == 1 ? "" : "s"));
  require_at_least(im, "attribute 'output_padding'", output_padding, 0);
  auto pads = conv_transpose_pads(im, n, im.type(x).shape, k, win, output_padding);
  if (s == 3) return conv_transpose_3d(im, n, win, k, pads, output_padding);
  const bool one_d = s == 1;
  AttrMap attrs{{"group", group_attr(im, n)},
                {"pads", one_d ? lift_1d(pads, 0) : pads},
                {"strides", one_d ? lift_1d(win.strides, 1) : win.strides},
                {"dilations", one_d ? lift_1d(win.dilations, 1) : win.dilations},
                {"output_padding", one_d ? lift_1d(output_padding, 0) : output_padding}};
  std::vector<ValueId> ins{one_d ? unsqueeze_h(im, x) : x, one_d ? unsqueeze_h(im, w) : w};
  if (im.has_input(n, 2)) ins.push_back(im.input(n, 2));
  const ValueId y = im.emit1("ConvTranspose", std::move(ins), std::move(attrs));
  im.bind(n, 0, one_d ? squeeze_h(im, y) : y);
}

// One IR pool (`op`, 2-D, over a 4-D NCHW `x`): per axis a kernel, stride
// and dilation, pads {top, left, bottom, right}.
struct Pool2d {
  std::vector<int64_t> k, strides, dilations, pads;
};

ValueId emit_pool2d(I& im, ValueId x, std::string_view op, const Pool2d& p, int64_t ceil_mode,
                    const AttrMap& extra) {
  AttrMap attrs{
      {"kernel_shape", p.k}, {"strides", p.strides}, {"pads", p.pads}, {"ceil_mode", ceil_mode}};
  if (std::any_of(p.dilations.begin(), p.dilations.end(), [](int64_t d) { return d != 1; }))
    attrs["dilations"] = p.dilations;
  for (const auto& [name, value] : extra) attrs[name] = value;
  return im.emit1(op, {x}, std::move(attrs));
}

// MaxPool, AveragePool and MaxPoolIndices (`op`) of X over 1, 2 or 3
// spatial axes (MaxPoolIndices 1 or 2).
// - 1-D runs as 2-D over [N, C, 1, L], which counts the same cells (the
//   added dimension has no padding).
// - 3-D runs as two 2-D pools, H and W over [N, C*D, H, W], then D over
//   [N, C, D, OH*OW]: a window is the product of its axes' windows (dilated
//   or not), so its max is the max over D of the maxima over H and W, and
//   its average the average over D of the averages over H and W, each
//   axis's divisor (count_include_pad, ceil_mode's overhang) its own.
// `extra`: the op's own attributes (AveragePool's count_include_pad,
// MaxPoolIndices' storage_order).
ValueId emit_pool(I& im, const N& n, ValueId x, std::string_view op, const AttrMap& extra) {
  const int64_t r = rank_of(im, x);
  if (r < 3 || r > 5)
    im.fail(fmt::format(
        "only 1-D, 2-D and 3-D pooling (a 3-D, 4-D or 5-D input) is supported, got rank {}", r));
  const size_t s = static_cast<size_t>(r - 2);
  const auto k = im.attr_ints(n, "kernel_shape");
  if (!k || k->size() != s)
    im.fail(fmt::format("kernel_shape must have {} value{}", s, s == 1 ? "" : "s"));
  require_at_least(im, "attribute 'kernel_shape'", *k, 1);
  const Window win = window_attrs(im, n, s);
  const Shape xs = im.type(x).shape;
  const auto pads = resolve_pads(im, n, xs, *k, win.strides, win.dilations);
  const int64_t ceil_mode = im.attr_int_or(n, "ceil_mode", 0);
  if (s == 2) {
    return emit_pool2d(im, x, op, {*k, win.strides, win.dilations, pads}, ceil_mode, extra);
  }
  if (s == 1) {
    const Pool2d p{lift_1d(*k, 1), lift_1d(win.strides, 1), lift_1d(win.dilations, 1),
                   lift_1d(pads, 0)};
    return squeeze_h(im, emit_pool2d(im, unsqueeze_h(im, x), op, p, ceil_mode, extra));
  }
  // A 3-D window's index is not the composition's.
  if (op == "MaxPoolIndices") im.fail("the Indices output of a 3-D MaxPool is not supported");
  const auto reshape = [&](ValueId v, std::vector<int64_t> dims) {
    return im.emit1("Reshape", {v}, {{"shape", std::move(dims)}});
  };
  const int64_t cd = im.to_i64(__int128{xs[1]} * xs[2], "the input's size");
  const Pool2d hw{{(*k)[1], (*k)[2]},
                  {win.strides[1], win.strides[2]},
                  {win.dilations[1], win.dilations[2]},
                  {pads[1], pads[2], pads[4], pads[5]}};
  const ValueId y_hw =
      emit_pool2d(im, reshape(x, {xs[0], cd, xs[3], xs[4]}), op, hw, ceil_mode, extra);
  const Shape hs = im.type(y_hw).shape;
  const Pool2d d{
      {(*k)[0], 1}, {win.strides[0], 1}, {win.dilations[0], 1}, {pads[0], 0, pads[3], 0}};
  const ValueId y =
      emit_pool2d(im, reshape(y_hw, {xs[0], xs[1], xs[2], hs[2] * hs[3]}), op, d, ceil_mode, extra);
  return reshape(y, {xs[0], xs[1], im.type(y).shape[2], hs[2], hs[3]});
}

// MaxPool's Indices (output 1) is the op MaxPoolIndices over the same
// window, beside the MaxPool of Y (output 0).
void pool(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  if (n.op_type() == "AveragePool") {
    im.bind(n, 0,
            emit_pool(im, n, x, "AveragePool",
                      {{"count_include_pad", im.attr_int_or(n, "count_include_pad", 0)}}));
    return;
  }
  const DType dt = im.type(x).dtype;
  // ONNX's integer MaxPool (int8/uint8) selects: exact in f32, where the
  // pool runs, every value of those types being one.
  const bool int8 = dt == DType::kI8 || dt == DType::kU8;
  const ValueId xf = int8 ? im.emit1("Cast", {x}, {{"to", int64_t(to_c(DType::kF32))}}) : x;
  if (im.output_used(n, 1)) {
    const int64_t order = im.attr_int_or(n, "storage_order", 0);
    if (order != 0 && order != 1)
      im.fail(fmt::format("attribute 'storage_order' is {}, it must be 0 or 1", order));
    im.bind(n, 1, emit_pool(im, n, xf, "MaxPoolIndices", {{"storage_order", order}}));
  }
  const ValueId y = emit_pool(im, n, xf, "MaxPool", {});
  im.bind(n, 0, int8 ? im.emit1("Cast", {y}, {{"to", int64_t(to_c(dt))}}) : y);
}

// A constant of X's dtype holding `num / den`, shape [1].
ValueId scalar_like(I& im, ValueId x, int64_t num, int64_t den) {
  const AttrMap to{{"to", int64_t(to_c(im.type(x).dtype))}};
  const ValueId a = im.emit1("Cast", {im.constant_i64(std::vector<int64_t>{num}, {1})}, to);
  if (den == 1) return a;
  return im.emit1("Div",
                  {a, im.emit1("Cast", {im.constant_i64(std::vector<int64_t>{den}, {1})}, to)});
}

// LpPool as ONNX defines it, (sum over the window of |x|^p)^(1/p), with
// the padding's zeros adding nothing: K * AveragePool(|x|^p,
// count_include_pad=1) is that sum (K the kernel's cell count), as ONNX's
// reference computes it. ceil_mode's windows that hang past the padding
// count fewer cells than K, so ceil_mode=1 is refused.
void lp_pool(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  if (!is_float(im.type(x).dtype)) im.fail("input must be floating point");
  const int64_t p = im.attr_int_or(n, "p", 2);
  if (p < 1) im.fail(fmt::format("attribute 'p' is {}, it must be >= 1", p));
  if (im.attr_int_or(n, "ceil_mode", 0) != 0) im.fail("ceil_mode=1 is not supported");
  const auto k = im.attr_ints(n, "kernel_shape");
  if (!k) im.fail("attribute 'kernel_shape' is required");
  __int128 cells = 1;
  for (int64_t d : *k) cells *= std::max<int64_t>(d, 1);
  const int64_t kcells = im.to_i64(cells, "the kernel's cell count");
  const ValueId a = im.emit1("Abs", {x});
  const ValueId ap = p == 1   ? a
                     : p == 2 ? im.emit1("Mul", {a, a})
                              : im.emit1("Pow", {a, scalar_like(im, x, p, 1)});
  const ValueId sum =
      im.emit1("Mul", {emit_pool(im, n, ap, "AveragePool", {{"count_include_pad", int64_t{1}}}),
                       scalar_like(im, x, kcells, 1)});
  im.bind(n, 0,
          p == 1   ? sum
          : p == 2 ? im.emit1("Sqrt", {sum})
                   : im.emit1("Pow", {sum, scalar_like(im, x, 1, p)}));
}

// --- contractions and normalisation ---------------------------------------

// Gemm before opset 11 requires C and Gemm 1-6 has `broadcast`; both are
// special cases of what ampx does (C optional, broadcast to [M, N]), so
// they import as they are.
void gemm(I& im, const N& n) {
  std::vector<ValueId> ins{im.input(n, 0), im.input(n, 1)};
  if (im.has_input(n, 2)) ins.push_back(im.input(n, 2));
  AttrMap attrs{{"alpha", double(im.attr_float_or(n, "alpha", 1.0f))},
                {"beta", double(im.attr_float_or(n, "beta", 1.0f))},
                {"transA", im.attr_int_or(n, "transA", 0)},
                {"transB", im.attr_int_or(n, "transB", 0)}};
  im.bind(n, 0, im.emit1("Gemm", std::move(ins), std::move(attrs)));
}

// BatchNormalization 7 and 8 have `spatial` (1: per-channel statistics,
// the usual case; 0: per activation, scale and mean of shape [C, H, W]);
// opset 9 dropped it. Opsets 7 to 13 train when the optional outputs (mean,
// var, saved_mean, saved_var) are used, 14+ with `training_mode=1` (outputs
// running_mean, running_var). ampx imports inference: unused training
// outputs are ignored, used ones refused. (`is_test` and `consumed_inputs`
// are opset 1-6 attributes, below what ampx reads.)
void batch_norm(I& im, const N& n) {
  if (im.attr_int_or(n, "spatial", 1) != 1)
    im.fail(
        fmt::format("spatial={} (statistics per activation, not per channel) is not "
                    "supported; only spatial=1",
                    im.attr_int_or(n, "spatial", 1)));
  if (const int64_t t = im.attr_int_or(n, "training_mode", 0); t != 0) {
    if (t != 1) im.fail(fmt::format("training_mode is {}, it must be 0 or 1", t));
    return batch_norm_training(im, n);  // opset 14+: the batch's statistics
  }
  const bool v14 = im.opset() >= 14;
  for (int i = 1; i < (v14 ? 3 : 5); ++i)
    if (im.output_used(n, i))
      im.fail(fmt::format(
          "output {} ('{}') is a training output ({}); inference import supports Y only", i,
          n.output(i),
          v14 ? (i == 1 ? "running_mean" : "running_var")
              : std::array<const char*, 5>{"", "mean", "var", "saved_mean", "saved_var"}[i]));
  std::vector<ValueId> ins;
  for (int i = 0; i < 5; ++i) ins.push_back(im.input(n, i));
  im.bind(n, 0,
          im.emit1("BatchNorm", std::move(ins),
                   {{"epsilon", double(im.attr_float_or(n, "epsilon", 1e-5f))}}));
}

void layer_norm(I& im, const N& n) {
  std::vector<ValueId> ins{im.input(n, 0), im.input(n, 1)};
  if (im.has_input(n, 2)) ins.push_back(im.input(n, 2));
  im.bind(n, 0,
          im.emit1("LayerNorm", std::move(ins),
                   {{"axis", im.attr_int_or(n, "axis", -1)},
                    {"epsilon", double(im.attr_float_or(n, "epsilon", 1e-5f))}}));
  if (im.output_used(n, 1) || im.output_used(n, 2)) layer_norm_statistics(im, n);
}

// Softmax/LogSoftmax. Before opset 13 they normalise over the input
// flattened to 2-D at `axis` (default 1): the same thing only when axis is
// the last one, so otherwise Reshape - op(-1) - Reshape. From axis 1 on the
// Reshapes leave the batch to -1 ([-1, inner], then [-1, d1, ...]), so the
// graph still takes any batch (training at --batch, a symbolic-batch
// export). The products fit: the input's size is bounded (kMaxTensorBytes).
void softmax(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const int64_t rank = rank_of(im, x);
  const bool legacy = im.opset() < 13;
  const int64_t axis = norm_axis(im, im.attr_int_or(n, "axis", legacy ? 1 : -1), rank);
  if (!legacy || axis == rank - 1) {
    im.bind(n, 0, im.emit1(n.op_type(), {x}, {{"axis", axis}}));
    return;
  }
  const Shape s = im.type(x).shape;  // a copy: emit() grows the value table
  const int64_t outer =
      std::accumulate(s.begin(), s.begin() + axis, int64_t{1}, std::multiplies<>());
  const int64_t inner = std::accumulate(s.begin() + axis, s.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> back(s.begin(), s.end());
  if (axis >= 1) back[0] = -1;
  const ValueId flat =
      im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>{axis >= 1 ? -1 : outer, inner}}});
  const ValueId y = im.emit1(n.op_type(), {flat}, {{"axis", int64_t{1}}});
  im.bind(n, 0, im.emit1("Reshape", {y}, {{"shape", std::move(back)}}));
}

// The Reduce ops: axes are an attribute before opset 18 (ReduceSum: 13)
// and an optional input from then on.
// The value of a reduction over nothing, for the reductions that have one
// (ONNX's reference: 0 for sums, 1 for a product, -inf/+inf for max/min, or
// the integer type's lowest/highest, false/true for bool max/min).
std::optional<double> empty_reduction_identity(std::string_view op, DType dt) {
  const double inf = std::numeric_limits<double>::infinity();
  if (op == "ReduceSum" || op == "ReduceSumSquare" || op == "ReduceL2") return 0.0;
  if (op == "ReduceProd") return 1.0;
  if (op == "ReduceLogSumExp" && is_float(dt)) return -inf;
  if (op == "ReduceMax") return dt == DType::kBool ? 0.0 : -inf;  // Cast saturates
  if (op == "ReduceMin") return dt == DType::kBool ? 1.0 : inf;
  return std::nullopt;
}

void reduce(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const bool axes_input = n.op_type() == "ReduceSum" ? im.opset() >= 13 : im.opset() >= 18;
  std::vector<int64_t> axes;
  if (axes_input) {
    if (im.has_input(n, 1)) axes = im.const_ints(n, 1, "axes");
  } else {
    axes = im.attr_ints(n, "axes").value_or(std::vector<int64_t>{});
  }
  if (axes.empty() && axes_input && im.attr_int_or(n, "noop_with_empty_axes", 0) != 0) {
    // "The output equals the input": for a sum, mean, product, max or min
    // of one element, that is the element. For the L2 norm, the sum of
    // squares and log-sum-exp it is not, and runtimes differ (ONNX's own
    // reference squares for ReduceSumSquare): refused.
    const std::string& op = n.op_type();
    if (op == "ReduceL2" || op == "ReduceSumSquare" || op == "ReduceLogSumExp")
      im.fail("noop_with_empty_axes=1 with no axes is not supported for " + op +
              " (runtimes disagree on what it computes)");
    im.bind(n, 0, x);
    return;
  }
  // ReduceLogSumExp 28 dropped the integer types (18 had them).
  if (n.op_type() == "ReduceLogSumExp" && im.opset() >= 28 && !is_float(im.type(x).dtype))
    im.fail(fmt::format("ReduceLogSumExp of {} is not defined from opset 28 (floats only)",
                        dtype_name(im.type(x).dtype)));
  AttrMap attrs{{"keepdims", im.attr_int_or(n, "keepdims", 1)}};
  if (!axes.empty()) attrs["axes"] = axes;
  if (const auto identity = empty_reduction_identity(n.op_type(), im.type(x).dtype)) {
    // Over an empty axis each output is the reduction's identity (ONNX 18+:
    // a max of nothing is -inf or the type's lowest, ...): a constant.
    const Shape& xs = im.type(x).shape;
    std::vector<bool> reduced(xs.size(), axes.empty());
    for (int64_t a : distinct_axes(im, axes, rank_of(im, x), "axes"))
      reduced[static_cast<size_t>(a)] = true;
    bool empty = false;
    Shape ys;
    for (size_t i = 0; i < xs.size(); ++i) {
      empty = empty || (reduced[i] && xs[i] == 0);
      if (!reduced[i])
        ys.push_back(xs[i]);
      else if (std::get<int64_t>(attrs["keepdims"]) != 0)
        ys.push_back(1);
    }
    if (empty) return im.bind(n, 0, filled(im, {im.type(x).dtype, ys}, *identity));
  }
  if (im.type(x).dtype == DType::kBool &&
      (n.op_type() == "ReduceMax" || n.op_type() == "ReduceMin")) {
    // bool (ONNX 20+): any / all, as the max / min of 0s and 1s in f32.
    const ValueId f = im.emit1("Cast", {x}, {{"to", int64_t(to_c(DType::kF32))}});
    const ValueId r = im.emit1(n.op_type(), {f}, std::move(attrs));
    im.bind(n, 0, im.emit1("Cast", {r}, {{"to", int64_t(to_c(DType::kBool))}}));
    return;
  }
  im.bind(n, 0, im.emit1(n.op_type(), {x}, std::move(attrs)));
}

// ArgMax, ArgMin (select_last_index from opset 12; absent before: 0).
void arg_max(I& im, const N& n) {
  im.bind(n, 0,
          im.emit1(n.op_type(), {im.input(n, 0)},
                   {{"axis", im.attr_int_or(n, "axis", 0)},
                    {"keepdims", im.attr_int_or(n, "keepdims", 1)},
                    {"select_last_index", im.attr_int_or(n, "select_last_index", 0)}}));
}

// --- shape and data movement ------------------------------------------------

void reshape(I& im, const N& n) {
  const auto shape = im.const_ints(n, 1, "shape");
  if (im.attr_int_or(n, "allowzero", 0) != 0 &&
      std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    // allowzero=1: a 0 is a dimension of 0, not a copy, so Y is empty and
    // so must X be; Y is then an empty constant. ONNX forbids -1 beside it.
    const ValueId x = im.input(n, 0);
    if (std::find(shape.begin(), shape.end(), -1) != shape.end())
      im.fail("allowzero=1 with both 0 and -1 in the shape is invalid");
    for (int64_t d : shape)
      if (d < 0) im.fail(fmt::format("shape has dimension {}", d));
    if (element_count(im.type(x).shape) != 0)
      im.fail(fmt::format("cannot reshape {} elements to a shape with a 0 (allowzero=1)",
                          element_count(im.type(x).shape)));
    return im.bind(n, 0, im.constant({im.type(x).dtype, Shape(shape.begin(), shape.end())}, {}));
  }
  im.bind(n, 0, im.emit1("Reshape", {im.input(n, 0)}, {{"shape", shape}}));
}

void flatten(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  int64_t axis = im.attr_int_or(n, "axis", 1);
  if (axis < 0) axis += rank_of(im, x);
  im.bind(n, 0, im.emit1("Flatten", {x}, {{"axis", axis}}));
}

void transpose(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  std::vector<int64_t> perm(static_cast<size_t>(rank_of(im, x)));
  std::iota(perm.rbegin(), perm.rend(), 0);
  im.bind(n, 0, im.emit1("Transpose", {x}, {{"perm", im.attr_ints(n, "perm").value_or(perm)}}));
}

void concat(I& im, const N& n) {
  std::vector<ValueId> ins;
  for (int i = 0; i < n.input_size(); ++i)
    if (im.has_input(n, i)) ins.push_back(im.input(n, i));
  const auto axis = im.attr_int(n, "axis");
  if (!axis) im.fail("attribute 'axis' is required");
  im.bind(n, 0, im.emit1("Concat", std::move(ins), {{"axis", *axis}}));
}

// Equal parts of `dim` (opset 18's num_outputs makes the last one smaller,
// possibly empty, never negative); 1 <= parts <= the node's outputs.
std::vector<int64_t> equal_split(I& im, int64_t dim, int64_t parts) {
  const int64_t each = dim / parts + (dim % parts != 0);
  if (each * (parts - 1) > dim)
    im.fail(fmt::format("cannot split {} into {} parts of {} (the last would be negative)", dim,
                        parts, each));
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(each, dim - i * each));
  return sizes;
}

void split(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const int64_t axis = norm_axis(im, im.attr_int_or(n, "axis", 0), rank_of(im, x));
  const int64_t dim = im.type(x).shape[static_cast<size_t>(axis)];
  const int64_t outputs = n.output_size();  // >= 1 (convert_nodes)
  std::vector<int64_t> sizes;
  if (im.opset() < 13) {
    sizes = im.attr_ints(n, "split").value_or(std::vector<int64_t>{});
  } else if (im.has_input(n, 1)) {
    sizes = im.const_ints(n, 1, "split");
  }
  if (sizes.empty()) {
    const int64_t parts = im.attr_int_or(n, "num_outputs", outputs);
    if (parts != outputs)
      im.fail(fmt::format("num_outputs is {}, the node has {} outputs", parts, outputs));
    sizes = equal_split(im, dim, parts);
  }
  if (static_cast<int64_t>(sizes.size()) != outputs)
    im.fail(fmt::format("split has {} values, the node has {} outputs", sizes.size(), outputs));
  const auto outs = im.emit("Split", {x}, {{"axis", axis}, {"split", sizes}});
  for (int i = 0; i < n.output_size(); ++i) im.bind(n, i, outs[static_cast<size_t>(i)]);
}

// Slice 1 (opsets 7 to 9) has starts/ends/axes attributes and no steps;
// from 10 on they are inputs.
void slice(I& im, const N& n) {
  if (im.opset() < 10) {
    const auto starts = im.attr_ints(n, "starts");
    const auto ends = im.attr_ints(n, "ends");
    if (!starts || !ends)
      im.fail("attributes 'starts' and 'ends' are required (Slice before opset 10)");
    AttrMap attrs{{"starts", *starts}, {"ends", *ends}};
    if (auto axes = im.attr_ints(n, "axes")) attrs["axes"] = *axes;
    im.bind(n, 0, im.emit1("Slice", {im.input(n, 0)}, std::move(attrs)));
    return;
  }
  AttrMap attrs{{"starts", im.const_ints(n, 1, "starts")}, {"ends", im.const_ints(n, 2, "ends")}};
  if (im.has_input(n, 3)) attrs["axes"] = im.const_ints(n, 3, "axes");
  if (im.has_input(n, 4)) attrs["steps"] = im.const_ints(n, 4, "steps");
  im.bind(n, 0, im.emit1("Slice", {im.input(n, 0)}, std::move(attrs)));
}

void gather(I& im, const N& n) {
  im.bind(n, 0,
          im.emit1("Gather", {im.input(n, 0), im.input(n, 1)},
                   {{"axis", im.attr_int_or(n, "axis", 0)}}));
}

std::vector<int64_t> axes_of(I& im, const N& n) {
  if (im.opset() < 13) return im.attr_ints(n, "axes").value_or(std::vector<int64_t>{});
  return im.has_input(n, 1) ? im.const_ints(n, 1, "axes") : std::vector<int64_t>{};
}

// Squeeze and Unsqueeze are Reshapes with a known shape.
void squeeze(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const Shape& s = im.type(x).shape;
  const auto rank = static_cast<int64_t>(s.size());
  std::vector<bool> drop(s.size(), false);
  const auto axes = axes_of(im, n);
  for (int64_t a : distinct_axes(im, axes, rank, "axes")) {
    const auto k = static_cast<size_t>(a);
    if (s[k] != 1) im.fail(fmt::format("cannot squeeze axis {} of size {}", a, s[k]));
    drop[k] = true;
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < s.size(); ++k)
    if (!(axes.empty() ? s[k] == 1 : drop[k])) out.push_back(s[k]);
  im.set_origin("Squeeze");
  im.bind(n, 0, im.emit1("Reshape", {x}, {{"shape", out}}));
}

void unsqueeze(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const Shape& s = im.type(x).shape;
  const auto axes = axes_of(im, n);
  const auto out_rank = static_cast<int64_t>(s.size() + axes.size());
  std::vector<bool> ins(static_cast<size_t>(out_rank), false);
  for (int64_t a : distinct_axes(im, axes, out_rank, "axes")) ins[static_cast<size_t>(a)] = true;
  std::vector<int64_t> out;
  size_t j = 0;
  for (size_t k = 0; k < ins.size(); ++k) out.push_back(ins[k] ? 1 : s[j++]);
  im.set_origin("Unsqueeze");
  im.bind(n, 0, im.emit1("Reshape", {x}, {{"shape", out}}));
}

void expand(I& im, const N& n) {
  im.bind(n, 0, im.emit1("Expand", {im.input(n, 0)}, {{"shape", im.const_ints(n, 1, "shape")}}));
}

// Pad 2 (opsets 7 to 10): `pads` and `value` attributes; 11+: inputs
// (18+: an `axes` input).
// Pad mode 'wrap' (19+, numpy's): each padded axis is one Gather of the
// indices lo + (j - begin) mod len, j over the output, which repeats the
// axis circularly as often as the pads need; negative pads crop first.
ValueId wrap_pad(I& im, ValueId x, std::span<const int64_t> pads) {
  const Shape s = im.type(x).shape;
  const size_t rank = s.size();
  if (pads.size() != 2 * rank)
    im.fail(fmt::format("pads has {} values, expected {}", pads.size(), 2 * rank));
  ValueId y = x;
  for (size_t a = 0; a < rank; ++a) {
    const int64_t begin = pads[a], end = pads[a + rank];
    if (begin == 0 && end == 0) continue;
    const int64_t lo = std::max<int64_t>(0, -begin);
    const int64_t len = s[a] - lo - std::max<int64_t>(0, -end);
    const __int128 out = __int128{len} + std::max<int64_t>(0, begin) + std::max<int64_t>(0, end);
    if (len < 0) im.fail(fmt::format("pads crop more than axis {}'s {} elements", a, s[a]));
    if (len == 0 && out > 0) im.fail(fmt::format("wrap-padding axis {}, which is empty", a));
    const int64_t count = im.to_i64(out, "the padded size");
    im.check_size({DType::kI64, Shape{count}}, "the wrap indices");
    Shape padded = im.type(y).shape;
    padded[a] = count;
    im.check_size({im.type(y).dtype, padded}, "its output");
    std::vector<int64_t> idx(static_cast<size_t>(count));
    const int64_t shift = std::max<int64_t>(0, begin) % std::max<int64_t>(len, 1);
    for (int64_t j = 0; j < count; ++j)
      idx[static_cast<size_t>(j)] = lo + ((j % len) - shift + len) % len;
    y = im.emit1("Gather", {y, im.constant_i64(idx, {count})}, {{"axis", static_cast<int64_t>(a)}});
  }
  return y;
}

void pad(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const int64_t rank = rank_of(im, x);
  const bool legacy = im.opset() < 11;
  std::vector<int64_t> pads;
  if (legacy) {
    const auto p = im.attr_ints(n, "pads");
    if (!p) im.fail("attribute 'pads' is required (Pad before opset 11)");
    pads = *p;
  } else {
    pads = im.const_ints(n, 1, "pads");
  }
  if (!legacy && im.has_input(n, 3)) {  // opset 18 axes: pads for those axes only
    const auto axes = distinct_axes(im, im.const_ints(n, 3, "axes"), rank, "axes");
    if (pads.size() != 2 * axes.size())
      im.fail(fmt::format("pads has {} values, expected {} (two per axis)", pads.size(),
                          2 * axes.size()));
    std::vector<int64_t> full(static_cast<size_t>(2 * rank), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const auto a = static_cast<size_t>(axes[i]);
      full[a] = pads[i];
      full[a + static_cast<size_t>(rank)] = pads[i + axes.size()];
    }
    pads = full;
  }
  // torchvision's AvgPool2d exports as Pad (all zeros) + AveragePool: a pad
  // of nothing is the identity in every mode, and costs a copy.
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
    im.bind(n, 0, x);
    return;
  }
  if (im.attr_string_or(n, "mode", "constant") == "wrap") {
    if (im.opset() < 19) im.fail("Pad mode 'wrap' is defined from opset 19");
    return im.bind(n, 0, wrap_pad(im, x, pads));
  }
  double value = 0;
  if (legacy)
    value = im.attr_float_or(n, "value", 0.0f);
  else if (im.has_input(n, 2))
    value = im.const_scalar(n, 2, "constant_value");
  im.bind(
      n, 0,
      im.emit1(
          "Pad", {x},
          {{"pads", pads}, {"mode", im.attr_string_or(n, "mode", "constant")}, {"value", value}}));
}

// ONNX's output sizes from scales: floor(in * scale). ONNX samples at
// multiples of 1/scale, not of in/out: where in * scale is a whole number
// (up to float rounding) the two agree and the Resize carries sizes only,
// else `exact` is cleared and the Resize carries the scales as well
// (docs/OPS.md, Resize).
std::vector<int64_t> sizes_from_scales(I& im, const Shape& s, std::span<const double> scales,
                                       bool& exact) {
  if (scales.size() != s.size())
    im.fail(fmt::format("scales has {} values, the input has rank {}", scales.size(), s.size()));
  std::vector<int64_t> sizes;
  exact = true;
  for (size_t i = 0; i < s.size(); ++i) {
    const double whole = static_cast<double>(s[i]) * scales[i];
    const double size = std::floor(whole);
    // Checked as a double: casting NaN or one past int64 is undefined.
    if (!(scales[i] > 0 && size >= 1 && size <= double(kMaxTensorBytes)))
      im.fail(fmt::format("scale {} of dimension {} is not valid", scales[i], i));
    sizes.push_back(static_cast<int64_t>(size));
    if (std::abs(whole - size) > 1e-5 * whole) exact = false;
  }
  return sizes;
}

// Upsample 7 to 9 and Resize 10 have no nearest_mode: ONNX Runtime takes
// floor(x) when a dimension grows and ceil(x) when it shrinks, with the
// asymmetric transform (x = i / scale). The IR has one nearest_mode for all
// dimensions.
std::string legacy_nearest_mode(I& im, std::span<const double> scales) {
  bool up = false, down = false;
  for (double sc : scales) {
    up = up || sc > 1;
    down = down || sc < 1;
  }
  if (up && down)
    im.fail("scales that grow one dimension and shrink another are not supported before opset 11");
  return down ? "ceil" : "floor";
}

void emit_resize(I& im, const N& n, ValueId x, std::vector<int64_t> sizes, const std::string& mode,
                 const std::string& ctm, const std::string& nearest_mode, AttrMap extra = {}) {
  extra["sizes"] = std::move(sizes);
  extra["mode"] = mode;
  extra["coordinate_transformation_mode"] = ctm;
  extra["nearest_mode"] = nearest_mode;
  im.bind(n, 0, im.emit1("Resize", {x}, std::move(extra)));
}

// `scales` for emit_resize's extra attributes, where sizes alone would
// sample elsewhere.
AttrMap scales_attr(std::span<const double> scales, bool exact) {
  if (exact) return {};
  return {{"scales", std::vector<double>(scales.begin(), scales.end())}};
}

std::string resize_mode(I& im, const N& n) {
  const std::string mode = im.attr_string_or(n, "mode", "nearest");
  const bool cubic = mode == "cubic" && n.op_type() == "Resize" && im.opset() >= 11;
  if (mode != "nearest" && mode != "linear" && !cubic)
    im.fail("mode '" + mode + "' is not supported");
  return mode;
}

// Upsample 7 (`scales` attribute) and 9 (`scales` input): a Resize with
// the asymmetric transform.
void upsample(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;  // a copy: emit() grows the value table
  const std::string mode = resize_mode(im, n);
  std::vector<double> scales;
  if (im.opset() < 9) {
    const auto f = im.attr_floats(n, "scales");
    if (!f) im.fail("attribute 'scales' is required (Upsample before opset 9)");
    scales.assign(f->begin(), f->end());
  } else {
    scales = im.const_floats(n, 1, "scales");
  }
  for (size_t i = 0; i < scales.size(); ++i)
    if (!(scales[i] >= 1))
      im.fail(fmt::format("scale {} of dimension {} is below 1 (Upsample only enlarges)", scales[i],
                          i));
  bool exact = true;
  auto sizes = sizes_from_scales(im, s, scales, exact);
  emit_resize(im, n, x, std::move(sizes), mode, "asymmetric", legacy_nearest_mode(im, scales),
              scales_attr(scales, exact));
}

// keep_aspect_ratio_policy not_larger/not_smaller (opset 18): one scale,
// the smallest/largest of sizes/in over `axes`, and sizes rounded half up
// from it (ONNX's reference).
std::vector<double> keep_aspect_ratio(I& im, const N& n, const Shape& s,
                                      std::span<const int64_t> axes, std::vector<int64_t>& sizes) {
  const std::string policy = im.attr_string_or(n, "keep_aspect_ratio_policy", "stretch");
  std::vector<double> scales(s.size(), 1.0);
  for (size_t i = 0; i < s.size(); ++i)
    scales[i] = static_cast<double>(sizes[i]) / static_cast<double>(s[i]);
  if (policy == "stretch") return scales;
  if (policy != "not_larger" && policy != "not_smaller")
    im.fail("keep_aspect_ratio_policy '" + policy + "' is not valid");
  double scale = scales[static_cast<size_t>(axes[0])];
  for (int64_t a : axes)
    scale = policy == "not_larger" ? std::min(scale, scales[static_cast<size_t>(a)])
                                   : std::max(scale, scales[static_cast<size_t>(a)]);
  std::fill(scales.begin(), scales.end(), 1.0);
  for (int64_t a : axes) {
    const auto u = static_cast<size_t>(a);
    scales[u] = scale;
    const double size = std::floor(scale * static_cast<double>(s[u]) + 0.5);
    if (!(size >= 1 && size <= double(kMaxTensorBytes)))
      im.fail(fmt::format("keep_aspect_ratio_policy gives dimension {} size {}", a, size));
    sizes[u] = static_cast<int64_t>(size);
  }
  return scales;
}

// Resize 10: X and scales, the asymmetric transform. 11+: roi, scales,
// sizes inputs (one of scales/sizes non-empty), coordinate_transformation_mode,
// nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value; 18+:
// axes, antialias, keep_aspect_ratio_policy.
void resize(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;  // a copy: emit() grows the value table
  const std::string mode = resize_mode(im, n);
  if (im.opset() < 11) {
    const auto scales = im.const_floats(n, 1, "scales");
    bool exact = true;
    auto sizes = sizes_from_scales(im, s, scales, exact);
    emit_resize(im, n, x, std::move(sizes), mode, "asymmetric", legacy_nearest_mode(im, scales),
                scales_attr(scales, exact));
    return;
  }
  const std::string ctm = im.attr_string_or(n, "coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "asymmetric" && ctm != "align_corners" &&
      ctm != "pytorch_half_pixel" && ctm != "half_pixel_symmetric" && ctm != "tf_crop_and_resize")
    im.fail("coordinate_transformation_mode '" + ctm + "' is not supported");
  const auto rank = static_cast<int64_t>(s.size());
  // opset 18's axes: scales/sizes/roi name those dimensions only.
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (auto a = im.attr_ints(n, "axes")) axes = distinct_axes(im, *a, rank, "axes");
  if (axes.empty()) im.fail("axes is empty");
  std::vector<int64_t> given_sizes;
  std::vector<double> given_scales;
  if (im.has_input(n, 3)) given_sizes = im.const_ints(n, 3, "sizes");
  if (given_sizes.empty() && im.has_input(n, 2)) given_scales = im.const_floats(n, 2, "scales");
  if (given_sizes.empty() && given_scales.empty()) im.fail("needs scales or sizes");
  const size_t given = given_sizes.empty() ? given_scales.size() : given_sizes.size();
  if (given != axes.size())
    im.fail(fmt::format("{} has {} values, expected {}", given_sizes.empty() ? "scales" : "sizes",
                        given, axes.size()));
  AttrMap extra;
  std::vector<int64_t> sizes(s.begin(), s.end());
  if (!given_sizes.empty()) {
    for (size_t i = 0; i < axes.size(); ++i) {
      if (given_sizes[i] < 1)
        im.fail(fmt::format("sizes value {} of axis {} must be >= 1", given_sizes[i], axes[i]));
      sizes[static_cast<size_t>(axes[i])] = given_sizes[i];
    }
    const std::string policy = im.attr_string_or(n, "keep_aspect_ratio_policy", "stretch");
    const std::vector<double> scales = keep_aspect_ratio(im, n, s, axes, sizes);
    if (policy != "stretch") extra["scales"] = scales;
  } else {
    std::vector<double> scales(s.size(), 1.0);
    for (size_t i = 0; i < axes.size(); ++i) scales[static_cast<size_t>(axes[i])] = given_scales[i];
    bool exact = true;
    sizes = sizes_from_scales(im, s, scales, exact);
    // half_pixel_symmetric differs from half_pixel only where the size was
    // floored: it needs the scales too.
    extra = scales_attr(scales, exact && ctm != "half_pixel_symmetric");
  }
  if (ctm == "tf_crop_and_resize") {
    if (!im.has_input(n, 1)) im.fail("tf_crop_and_resize needs the roi input");
    const std::vector<double> given_roi = im.const_floats(n, 1, "roi");
    if (given_roi.size() != 2 * axes.size())
      im.fail(fmt::format("roi has {} values, expected {}", given_roi.size(), 2 * axes.size()));
    std::vector<double> roi(2 * s.size(), 0.0);
    std::fill(roi.begin() + rank, roi.end(), 1.0);
    for (size_t i = 0; i < axes.size(); ++i) {
      roi[static_cast<size_t>(axes[i])] = given_roi[i];
      roi[static_cast<size_t>(axes[i] + rank)] = given_roi[i + axes.size()];
    }
    extra["roi"] = roi;
    extra["extrapolation_value"] = double(im.attr_float_or(n, "extrapolation_value", 0.0f));
  }
  if (mode == "cubic")
    extra["cubic_coeff_a"] = double(im.attr_float_or(n, "cubic_coeff_a", -0.75f));
  if (im.attr_int_or(n, "exclude_outside", 0) != 0) extra["exclude_outside"] = int64_t{1};
  // antialias applies to linear and cubic only (ONNX: nearest ignores it).
  if (im.attr_int_or(n, "antialias", 0) != 0 && mode != "nearest") extra["antialias"] = int64_t{1};
  emit_resize(im, n, x, std::move(sizes), mode, ctm,
              im.attr_string_or(n, "nearest_mode", "round_prefer_floor"), std::move(extra));
}

void cast(I& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const auto to = im.attr_int(n, "to");
  if (!to) im.fail("attribute 'to' is required");
  const auto dtype = dtype_from_onnx(static_cast<int32_t>(*to));
  if (!dtype)
    im.fail("cast to " + onnx_elem_type_name(static_cast<int32_t>(*to)) + " is not supported");
  if (*dtype == im.type(x).dtype) {
    im.bind(n, 0, x);
    return;
  }
  im.bind(n, 0, im.emit1("Cast", {x}, {{"to", int64_t(to_c(*dtype))}}));
}

// A tensor, sequence or optional (opsets 14+ and 16+) passes through.
void identity(I& im, const N& n) {
  im.bind_held(n, 0, im.held_input(n, 0));
}

// Dropout is the identity at inference. Opsets 7 to 11: `ratio` attribute
// (`is_test` is opset 6's, honoured if present); 12+: ratio and
// training_mode inputs, whose values may come from the graph's inputs
// (--input): training with ratio 0 is the identity too, with another ratio
// random (refused). The mask (10+: bool) is then all true: a constant.
void dropout(I& im, const N& n) {
  if (im.attr_int_or(n, "is_test", 1) == 0)
    im.fail("is_test=0 (training) is not supported (inference import)");
  const ValueId x = im.input(n, 0);
  if (im.opset() >= 12 && im.has_input(n, 2)) {
    const ConstantData train = im.required_value(n, 2, "training_mode");
    if (std::any_of(train->begin(), train->end(), [](std::byte b) { return b != std::byte{0}; })) {
      const double ratio = im.has_input(n, 1) ? im.const_scalar(n, 1, "ratio") : 0.5;
      if (ratio != 0)
        im.fail(fmt::format(
            "training_mode=true is not supported with ratio {} (random; inference import)", ratio));
    }
  }
  if (im.output_used(n, 1)) {
    if (im.opset() < 10) im.fail("the mask output of Dropout before opset 10 is not supported");
    const Shape s = im.type(x).shape;
    std::vector<std::byte> ones(static_cast<size_t>(element_count(s)), std::byte{1});
    im.bind(n, 1, im.constant({DType::kBool, s}, std::move(ones)));
  }
  im.bind(n, 0, x);
}

// --- resolved at import: the result depends on shapes or constants only ---

void shape_op(I& im, const N& n) {
  const Shape& s = im.type(im.input(n, 0)).shape;
  const auto rank = static_cast<int64_t>(s.size());
  auto clampi = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
  const int64_t start = clampi(im.attr_int_or(n, "start", 0));
  const int64_t end = clampi(im.attr_int_or(n, "end", rank));
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  im.bind(n, 0, im.constant_i64(dims, {static_cast<int64_t>(dims.size())}));
}

void size_op(I& im, const N& n) {
  const int64_t count = element_count(im.type(im.input(n, 0)).shape);
  im.bind(n, 0, im.constant_i64(std::span(&count, 1), {}));
}

// A float or int attribute as a one-element or 1-D tensor.
template <typename T>
ValueId scalar_constant(I& im, DType dtype, std::vector<T> values, bool scalar) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  Shape shape = scalar ? Shape{} : Shape{static_cast<int64_t>(values.size())};
  return im.constant({dtype, shape}, std::move(bytes));
}

void constant_op(I& im, const N& n) {
  if (const auto* t = im.attr_tensor(n, "value")) {
    TensorData d =
        read_tensor(*t, im.base_dir(), im.where_tensor(n.output(0)), im.max_tensor_bytes());
    im.bind(n, 0, im.constant(d.type, std::move(d.bytes)));
  } else if (auto f = im.attr_float(n, "value_float")) {
    im.bind(n, 0, scalar_constant<float>(im, DType::kF32, {*f}, true));
  } else if (auto i = im.attr_int(n, "value_int")) {
    im.bind(n, 0, scalar_constant<int64_t>(im, DType::kI64, {*i}, true));
  } else if (auto is = im.attr_ints(n, "value_ints")) {
    im.bind(n, 0, scalar_constant<int64_t>(im, DType::kI64, *is, false));
  } else {
    for (const auto& a : n.attribute())
      if (a.name() == "value_floats")
        return im.bind(
            n, 0,
            scalar_constant<float>(
                im, DType::kF32, std::vector<float>(a.floats().begin(), a.floats().end()), false));
    im.fail("only tensor, float and int constants are supported");
  }
}

void constant_of_shape(I& im, const N& n) {
  const auto shape = im.const_ints(n, 0, "shape");
  for (int64_t d : shape)
    if (d < 0) im.fail("negative dimension in the shape");
  const auto* value = im.attr_tensor(n, "value");
  TensorData fill =
      value
          ? read_tensor(*value, im.base_dir(), im.where_tensor(n.output(0)), im.max_tensor_bytes())
          : TensorData{TensorType{DType::kF32, Shape{1}}, std::vector<std::byte>(4)};  // f32 0
  if (element_count(fill.type.shape) != 1) im.fail("value must have one element");
  const TensorType type{fill.type.dtype, Shape(shape.begin(), shape.end())};
  im.check_size(type, "its output");  // before allocating it
  const size_t esize = dtype_size(fill.type.dtype);
  const auto count = static_cast<size_t>(element_count(type.shape));
  std::vector<std::byte> bytes(count * esize);
  for (size_t i = 0; i < count; ++i)
    std::memcpy(bytes.data() + i * esize, fill.bytes.data(), esize);
  im.bind(n, 0, im.constant(type, std::move(bytes)));
}

// Range 27 added float16/bfloat16 and `stash_type` (their accumulation
// precision); for i32, i64, f32 and f64 it is Range 11.
void range_op(I& im, const N& n) {
  const DType dt = im.type(im.input(n, 0)).dtype;
  const double start = im.const_scalar(n, 0, "start");
  const double limit = im.const_scalar(n, 1, "limit");
  const double delta = im.const_scalar(n, 2, "delta");
  if (delta == 0) im.fail("delta is 0");
  const double steps = std::max(0.0, std::ceil((limit - start) / delta));
  // Checked as a double first: casting one past int64 is undefined.
  if (!(steps <= double(kMaxTensorBytes)))
    im.fail(fmt::format("{} elements is more than a tensor may hold", steps));
  const auto count = static_cast<int64_t>(steps);
  im.check_size({dt, Shape{count}}, "its output");
  if (dt == DType::kI64 || dt == DType::kI32) {
    std::vector<int64_t> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      v[static_cast<size_t>(i)] = static_cast<int64_t>(start) + i * static_cast<int64_t>(delta);
    ValueId c = im.constant_i64(v, {count});
    if (dt == DType::kI32) c = im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
    im.bind(n, 0, c);
  } else if (dt == DType::kF32) {
    std::vector<float> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      v[static_cast<size_t>(i)] = static_cast<float>(start + static_cast<double>(i) * delta);
    im.bind(n, 0, scalar_constant<float>(im, DType::kF32, v, false));
  } else if (dt == DType::kF64) {
    std::vector<double> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      v[static_cast<size_t>(i)] = start + static_cast<double>(i) * delta;
    im.bind(n, 0, scalar_constant<double>(im, DType::kF64, v, false));
  } else if ((dt == DType::kF16 || dt == DType::kBF16) && im.opset() >= 27) {
    // Range 27: start + i * delta in `stash_type` (f32 by default, or f64),
    // as ONNX's reference (numpy's arange) computes it, then Cast to X's type.
    const int64_t stash = im.attr_int_or(n, "stash_type", 1);
    im.check_size({stash == 11 ? DType::kF64 : DType::kF32, Shape{count}}, "its stash");
    ValueId c;
    if (stash == 1) {
      std::vector<float> v(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i)
        v[static_cast<size_t>(i)] =
            static_cast<float>(start) + static_cast<float>(i) * static_cast<float>(delta);
      c = scalar_constant<float>(im, DType::kF32, v, false);
    } else if (stash == 11) {
      std::vector<double> v(static_cast<size_t>(count));
      for (int64_t i = 0; i < count; ++i)
        v[static_cast<size_t>(i)] = start + static_cast<double>(i) * delta;
      c = scalar_constant<double>(im, DType::kF64, v, false);
    } else {
      im.fail(fmt::format("stash_type {} is not FLOAT (1) or DOUBLE (11)", stash));
    }
    im.bind(n, 0, im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}}));
  } else {
    im.fail("Range of " + std::string(dtype_name(dt)) + " is not supported" +
            (dt == DType::kF16 || dt == DType::kBF16 ? " before opset 27" : ""));
  }
}

const std::unordered_map<std::string_view, OpConverter>& table() {
  static const std::unordered_map<std::string_view, OpConverter> t{
      {"Conv", {{"Conv2d", "Reshape"}, conv}},
      {"ConvTranspose",
       {{"ConvTranspose", "Reshape", "Transpose", "Slice", "Pad", "Add"}, conv_transpose}},
      {"BatchNormalization",
       {{"BatchNorm", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Div", "Reshape", "Cast"},
        batch_norm}},
      {"LayerNormalization",
       {{"LayerNorm", "Cast", "ReduceMean", "Sub", "Mul", "Add", "Sqrt", "Reciprocal"},
        layer_norm,
        17}},
      {"RMSNormalization", {{"RMSNorm", "Expand"}, rms_norm, 23}},
      {"Relu", {{"Relu"}, same_unary}},
      {"Sigmoid", {{"Sigmoid"}, same_unary}},
      {"Tanh", {{"Tanh"}, same_unary}},
      {"Erf", {{"Erf"}, same_unary, 9}},
      {"Sqrt", {{"Sqrt"}, same_unary}},
      {"Reciprocal", {{"Reciprocal"}, same_unary}},
      {"Exp", {{"Exp"}, same_unary}},
      {"Log", {{"Log"}, same_unary}},
      {"Neg", {{"Neg"}, same_unary}},
      {"HardSwish", {{"HardSwish"}, same_unary, 14}},
      {"GlobalAveragePool", {{"GlobalAveragePool"}, same_unary}},
      {"LeakyRelu", {{"LeakyRelu"}, leaky_relu}},
      {"HardSigmoid", {{"HardSigmoid"}, hard_sigmoid}},
      {"PRelu", {{"PRelu"}, same_binary}},
      {"Gelu", {{"Gelu"}, gelu, 20}},
      {"Clip", {{"Clip", "Max", "Min"}, clip}},
      {"Add", {{"Add"}, broadcasting_binary}},
      {"Sub", {{"Sub"}, broadcasting_binary}},
      {"Mul", {{"Mul"}, broadcasting_binary}},
      {"Div", {{"Div"}, broadcasting_binary}},
      {"Pow", {{"Pow", "Cast", "Mul", "Where"}, pow_op}},
      {"Equal", {{"Equal"}, broadcasting_binary}},
      {"Where", {{"Where"}, where, 9}},
      {"Floor", {{"Floor"}, same_unary}},
      {"Ceil", {{"Ceil"}, same_unary}},
      {"Round", {{"Round"}, same_unary, 11}},
      {"Abs", {{"Abs"}, same_unary}},
      {"Softplus", {{"Softplus"}, same_unary}},
      {"Mish", {{"Mish"}, same_unary, 18}},
      {"Sin", {{"Sin"}, same_unary, 7}},
      {"Cos", {{"Cos"}, same_unary, 7}},
      {"Tan", {{"Tan"}, same_unary, 7}},
      {"Asin", {{"Asin"}, same_unary, 7}},
      {"Acos", {{"Acos"}, same_unary, 7}},
      {"Atan", {{"Atan"}, same_unary, 7}},
      {"Sinh", {{"Sinh"}, same_unary, 9}},
      {"Cosh", {{"Cosh"}, same_unary, 9}},
      {"Asinh", {{"Asinh"}, same_unary, 9}},
      {"Acosh", {{"Acosh"}, same_unary, 9}},
      {"Atanh", {{"Atanh"}, same_unary, 9}},
      {"Less", {{"Less"}, broadcasting_binary}},
      {"Greater", {{"Greater"}, broadcasting_binary}},
      {"LessOrEqual", {{"LessOrEqual"}, broadcasting_binary, 12}},
      {"GreaterOrEqual", {{"GreaterOrEqual"}, broadcasting_binary, 12}},
      {"Not", {{"Not"}, same_unary}},
      {"And", {{"And"}, broadcasting_binary}},
      {"Or", {{"Or"}, broadcasting_binary}},
      {"Min", {{"Min"}, variadic}},
      {"Max", {{"Max"}, variadic}},
      {"Sum", {{"Sum"}, variadic}},
      {"Mean", {{"Mean"}, variadic}},
      {"MatMul", {{"MatMul", "Reshape"}, matmul}},
      {"Gemm", {{"Gemm"}, gemm}},
      {"MaxPool", {{"MaxPool", "MaxPoolIndices", "Reshape", "Cast"}, pool}},
      {"AveragePool", {{"AveragePool", "Reshape"}, pool}},
      {"LpPool", {{"Abs", "Mul", "Pow", "Sqrt", "Div", "Cast", "AveragePool", "Reshape"}, lp_pool}},
      {"Softmax", {{"Softmax", "Reshape"}, softmax}},
      {"LogSoftmax", {{"LogSoftmax", "Reshape"}, softmax}},
      {"ReduceMean", {{"ReduceMean", "Cast"}, reduce}},
      {"ReduceSum", {{"ReduceSum", "Cast"}, reduce}},
      {"ReduceMax", {{"ReduceMax", "Cast"}, reduce}},
      {"ArgMax", {{"ArgMax"}, arg_max}},
      {"ArgMin", {{"ArgMin"}, arg_max}},
      {"ReduceMin", {{"ReduceMin", "Cast"}, reduce}},
      {"ReduceProd", {{"ReduceProd", "Cast"}, reduce}},
      {"ReduceL2", {{"ReduceL2", "Cast"}, reduce}},
      {"ReduceSumSquare", {{"ReduceSumSquare", "Cast"}, reduce}},
      {"ReduceLogSumExp", {{"ReduceLogSumExp", "Cast"}, reduce}},
      {"Reshape", {{"Reshape"}, reshape}},
      {"Flatten", {{"Flatten"}, flatten}},
      {"Transpose", {{"Transpose"}, transpose}},
      {"Concat", {{"Concat"}, concat}},
      {"Split", {{"Split"}, split}},
      {"Slice", {{"Slice"}, slice}},
      {"Gather", {{"Gather"}, gather}},
      {"Squeeze", {{"Reshape"}, squeeze}},
      {"Unsqueeze", {{"Reshape"}, unsqueeze}},
      {"Expand", {{"Expand"}, expand, 8}},
      {"Pad", {{"Pad", "Gather"}, pad}},
      {"Resize", {{"Resize"}, resize, 10}},
      {"GridSample", {{"GridSample", "Cast"}, grid_sample, 16}},
      {"DeformConv",
       {{"Cast", "Reshape", "Mul", "Add", "Transpose", "Gather", "GridSample", "MatMul"},
        deform_conv,
        19}},
      {"AffineGrid", {{"Cast", "Transpose", "MatMul", "Reshape"}, affine_grid, 20}},
      {"LRN", {{"Mul", "Reshape", "AveragePool", "Add", "Pow", "Div", "Cast"}, lrn}},
      {"Det", {{"Det"}, det, 11}},
      {"Col2Im", {{"Col2Im"}, col2im, 18}},
      {"Upsample", {{"Resize"}, upsample, 7, 10}},  // deprecated in 10
      {"Cast", {{"Cast"}, cast}},
      {"Identity", {{}, identity}},
      {"Dropout", {{}, dropout}},
      {"Shape", {{}, shape_op}},
      {"Size", {{}, size_op}},
      {"Constant", {{}, constant_op}},
      {"ConstantOfShape", {{}, constant_of_shape, 9}},
      {"Range", {{"Cast"}, range_op, 11}},
      {"If", {{"Where"}, if_op}},
      {"Loop", {{"Reshape", "Concat"}, loop_op}},
      {"Scan", {{"Gather", "Reshape", "Concat"}, scan_op, 8}},
      {"SequenceEmpty", {{}, sequence_op, 11}},
      {"SequenceConstruct", {{}, sequence_op, 11}},
      {"SequenceInsert", {{}, sequence_op, 11}},
      {"SequenceAt", {{}, sequence_op, 11}},
      {"SequenceErase", {{}, sequence_op, 11}},
      {"SequenceLength", {{}, sequence_op, 11}},
      {"ConcatFromSequence", {{"Concat", "Reshape"}, sequence_op, 11}},
      {"SplitToSequence", {{"Split", "Reshape"}, sequence_op, 11}},
      {"SequenceMap", {{}, sequence_op, 17}},
      {"Optional", {{}, sequence_op, 15}},
      {"OptionalHasElement", {{}, sequence_op, 15}},
      {"OptionalGetElement", {{}, sequence_op, 15}},
      {"InstanceNormalization", {{"LayerNorm", "Reshape", "Mul", "Add"}, instance_norm}},
      {"GroupNormalization", {{"LayerNorm", "Reshape", "Mul", "Add", "Expand"}, group_norm, 18}},
      {"DepthToSpace", {{"Reshape", "Transpose"}, depth_to_space}},
      {"SpaceToDepth", {{"Reshape", "Transpose"}, space_to_depth}},
      {"Tile", {{"Reshape", "Expand"}, tile}},
      {"LSTM", {{"LSTM", "Transpose"}, recurrent}},
      {"GRU", {{"GRU", "Transpose"}, recurrent}},
      {"RNN", {{"RNN", "Transpose"}, recurrent}},
      {"Mod", {{"Mod"}, mod, 10}},
      {"BitShift", {{"BitShift"}, bit_shift, 11}},
      {"BitwiseAnd", {{"BitwiseAnd"}, bitwise_binary, 18}},
      {"BitwiseOr", {{"BitwiseOr"}, bitwise_binary, 18}},
      {"BitwiseXor", {{"BitwiseXor"}, bitwise_binary, 18}},
      {"BitwiseNot", {{"BitwiseNot"}, bitwise_not, 18}},
      {"BitCast", {{"BitCast"}, bit_cast, 26}},
      {"CumSum", {{"CumSum"}, cum_sum, 11}},
      {"CumProd", {{"CumProd"}, cum_sum, 26}},
      {"TopK", {{"TopK"}, top_k}},
      {"GatherElements", {{"GatherElements"}, gather_elements, 11}},
      {"GatherND", {{"GatherND"}, gather_nd, 11}},
      {"ScatterND", {{"ScatterND"}, scatter_nd, 11}},
      {"NonZero", {{}, non_zero, 9}},
      {"NonMaxSuppression", {{}, non_max_suppression, 10}},
      {"Unique", {{}, unique, 11}},
      {"ReverseSequence", {{"Reshape", "Gather"}, reverse_sequence, 10}},
      {"TensorScatter", {{"Transpose", "Reshape", "Concat", "Gather"}, tensor_scatter, 24}},
      {"Attention", {{"Attention", "Reshape", "Transpose", "Concat"}, attention, 23}},
      {"RotaryEmbedding", {{"RotaryEmbedding"}, rotary_embedding, 23}},
      {"LinearAttention", {{"LinearAttention", "Cast"}, linear_attention, 27}},
      {"Einsum", {{"Transpose", "Reshape", "MatMul", "ReduceSum", "Gather"}, einsum, 12}},
      {"SoftmaxCrossEntropyLoss",
       {{"LogSoftmax", "GatherElements", "Reshape", "Neg", "Mul", "Div", "ReduceSum", "ReduceMean",
         "Gather", "Cast", "Not", "Equal", "Where"},
        softmax_cross_entropy_loss,
        12}},
      {"CastLike", {{"Cast"}, cast_like, 15}},
      {"NegativeLogLikelihoodLoss",
       {{"GatherElements", "Reshape", "Neg", "Mul", "Div", "ReduceSum", "ReduceMean", "Gather",
         "Cast", "Not", "Equal", "Where"},
        negative_log_likelihood_loss,
        12}},
      // Signal processing (onnx_signal.cpp): constants, and the DFT as a MatMul.
      {"HannWindow", {{"Cast"}, hann_window, 17}},
      {"HammingWindow", {{"Cast"}, hamming_window, 17}},
      {"BlackmanWindow", {{"Cast"}, blackman_window, 17}},
      {"MelWeightMatrix", {{"Cast"}, mel_weight_matrix, 17}},
      {"DFT", {{"Transpose", "Reshape", "MatMul", "Cast"}, dft, 17}},
      {"STFT", {{"Gather", "Mul", "Transpose", "Reshape", "MatMul", "Cast"}, stft, 17}},
      // Compositions of op-set ops (onnx_composed_ops.cpp).
      {"Trilu", {{"Where", "Cast"}, trilu, 14}},
      {"Xor", {{"And", "Or", "Not"}, xor_op}},
      {"Hardmax", {{"ArgMax", "Equal", "Cast", "Reshape"}, hardmax}},
      {"ReduceL1", {{"ReduceSum", "Abs"}, reduce_composed}},
      {"ReduceLogSum", {{"ReduceSum", "Log"}, reduce_composed}},
      {"LpNormalization",
       {{"ReduceSum", "Abs", "ReduceL2", "Equal", "Div", "Where", "Cast"}, lp_normalization}},
      {"IsNaN", {{"Equal", "Not"}, is_nan, 9}},
      {"IsInf", {{"Equal", "Or", "Less", "Cast"}, is_inf, 10}},
      {"Elu", {{"Exp", "Sub", "Mul", "Less", "Where", "Cast"}, elu}},
      {"Selu", {{"Exp", "Sub", "Mul", "LessOrEqual", "Where", "Cast"}, selu}},
      {"Celu", {{"Exp", "Div", "Sub", "Mul", "Less", "Where", "Cast"}, celu, 12}},
      {"ThresholdedRelu", {{"Greater", "Where", "Cast"}, thresholded_relu, 10}},
      {"Softsign", {{"Abs", "Add", "Div", "Cast"}, softsign}},
      {"Shrink", {{"Less", "Greater", "Add", "Sub", "Where", "Cast"}, shrink, 9}},
      {"Sign", {{"Equal", "Less", "Greater", "Where", "Cast"}, sign, 9}},
      {"Swish", {{"Mul", "Sigmoid", "Cast"}, swish, 24}},
      {"MeanVarianceNormalization",
       {{"ReduceMean", "Pow", "Sub", "Sqrt", "Add", "Div", "Cast"},
        mean_variance_normalization,
        9}},
      {"EyeLike", {{"Cast"}, eye_like, 9}},
      {"GlobalMaxPool", {{"ReduceMax"}, global_max_pool}},
      {"MaxUnpool", {{"Expand", "ScatterND", "Reshape", "Pad", "Cast"}, max_unpool, 9}},
      {"CenterCropPad", {{"Slice", "Pad", "Reshape"}, center_crop_pad, 18}},
      {"ScatterElements", {{"ScatterND", "Concat", "Reshape", "Cast"}, scatter_elements, 11}},
      {"Scatter",
       {{"ScatterND", "Concat", "Reshape", "Cast"}, scatter_elements, 9, 11}},  // deprecated in 11
      // OneHot's and Compress's inputs read at import (onnx_index_ops.cpp).
      {"OneHot", {{"Equal", "Where", "Less", "Add", "Cast", "Reshape", "Gather"}, one_hot, 9}},
      {"Compress", {{"Gather", "Reshape"}, compress, 9}},
      // Integer n-gram counts against a constant pool (onnx_tfidf.cpp).
      {"TfIdfVectorizer",
       {{"Slice", "Reshape", "Equal", "And", "Cast", "ReduceSum", "Add", "Concat", "MatMul",
         "Greater", "Mul"},
        tfidf_vectorizer,
        9}},
      // Quantization as f32 arithmetic on integer values (onnx_quantization.cpp).
      {"QuantizeLinear",
       {{"Cast", "Div", "Round", "Add", "Clip", "Reshape", "Expand", "Slice"},
        quantize_linear,
        10}},
      {"DequantizeLinear",
       {{"Cast", "Sub", "Mul", "Reshape", "Expand", "Slice"}, dequantize_linear, 10}},
      {"DynamicQuantizeLinear",
       {{"Cast", "ReduceMax", "ReduceMin", "Max", "Min", "Sub", "Div", "Equal", "Where", "Neg",
         "Round", "Add", "Clip"},
        dynamic_quantize_linear,
        11}},
      {"MatMulInteger", {{"Cast", "Sub", "Reshape", "MatMul"}, matmul_integer, 10}},
      {"ConvInteger", {{"Cast", "Sub", "Reshape", "Conv2d"}, conv_integer, 10}},
      {"QLinearMatMul",
       {{"Cast", "Sub", "Reshape", "MatMul", "Mul", "Div", "Add", "Round", "Clip"},
        qlinear_matmul,
        10}},
      {"QLinearConv",
       {{"Cast", "Sub", "Reshape", "Conv2d", "Mul", "Div", "Add", "Round", "Clip"},
        qlinear_conv,
        10}},
      // The LLM blocks of opsets 27-28 (onnx_llm_ops.cpp).
      {"SwiGLU", {{"Mul", "Sigmoid", "Cast"}, swiglu, 28}},
      {"CausalConvWithState",
       {{"Conv2d", "Reshape", "Concat", "Pad", "Slice", "Mul", "Sigmoid", "Cast"},
        causal_conv_with_state,
        27}},
  };
  return t;
}

}  // namespace

ValueId conv_values(Importer& im, const onnx::NodeProto& n, ValueId x, ValueId w, ValueId bias) {
  if (rank_of(im, x) == 3) return conv1d(im, n, x, w, bias);
  require_2d(im, x, "convolution");
  const std::vector<int64_t> k = weight_kernel(im, w);
  const Window win = window_attrs(im, n);
  AttrMap attrs{{"group", group_attr(im, n)},
                {"pads", resolve_pads(im, n, im.type(x).shape, k, win.strides, win.dilations)},
                {"strides", win.strides},
                {"dilations", win.dilations}};
  std::vector<ValueId> ins{x, w};
  if (bias != kNone) ins.push_back(bias);
  return im.emit1("Conv2d", std::move(ins), std::move(attrs));
}

ValueId cast_scalar(Importer& im, DType dt, double value) {
  std::vector<std::byte> bytes(8);
  std::memcpy(bytes.data(), &value, 8);
  const ValueId c = im.constant({DType::kF64, {}}, std::move(bytes));
  if (dt == DType::kF64) return c;
  return im.emit1("Cast", {c}, {{"to", int64_t(to_c(dt))}});
}

const OpConverter* find_converter(std::string_view op_type) {
  const auto& t = table();
  const auto it = t.find(op_type);
  return it == t.end() ? nullptr : &it->second;
}

namespace {
bool defined_at(const OpConverter& c, int64_t opset) {
  return opset >= c.since && (c.until == 0 || opset < c.until);
}
}  // namespace

const OpConverter* find_converter(std::string_view domain, std::string_view op_type) {
  return is_default_domain(domain) ? find_converter(op_type)
                                   : find_domain_converter(domain, op_type);
}

bool is_supported(std::string_view domain, std::string_view op_type, int64_t opset) {
  const OpConverter* c = find_converter(domain, op_type);
  if (!c || !defined_at(*c, opset)) return false;
  if (!is_default_domain(domain) && opset > newest_domain_opset(domain)) return false;
  return std::all_of(c->ir_ops.begin(), c->ir_ops.end(),
                     [](std::string_view op) { return parse_op(op).has_value(); });
}

std::string defined_in(std::string_view domain, std::string_view op_type, int64_t opset) {
  const OpConverter* c = find_converter(domain, op_type);
  if (!c) return "";
  const bool other = !is_default_domain(domain);
  if (other && opset == 0) return fmt::format("the model imports no opset of {}", domain);
  if (other && opset > newest_domain_opset(domain))
    return fmt::format("{} opset {}: ampx knows opsets 1 to {}", domain, opset,
                       newest_domain_opset(domain));
  if (defined_at(*c, opset)) return "";
  const std::string of = other ? fmt::format(" of {}", domain) : "";
  if (c->until == 0) return fmt::format("defined from opset {}{}", c->since, of);
  return fmt::format("defined in opsets {} to {}{}", c->since, c->until - 1, of);
}

}  // namespace ampx::onnx_io
