// ONNX's quantization ops as f32 arithmetic on integer values (docs/ONNX.md,
// "Quantization"), each as ONNX's reference computes it:
//   QuantizeLinear    Cast(Clip(Round(x / scale) + zp, qmin, qmax)); the
//                     quotient rounded to the `precision` (else the
//                     scale's) dtype first, as an f16 division would
//   DequantizeLinear  (f32(x) - f32(zp)) * f32(scale), in the scale's dtype
//   DynamicQuantizeLinear
//                     the uint8 range of [min(0, min x), max(0, max x)]
//   MatMulInteger, ConvInteger
//                     MatMul / Conv of (a - a_zp) and (b - b_zp), Cast to i32
//   QLinearMatMul, QLinearConv
//                     the integer product (plus QLinearConv's i32 bias) times
//                     a_scale·b_scale / y_scale, then quantized as above
// Per-tensor (one value), per-axis (1-D along `axis`) and blocked
// (`block_size` along `axis`) scales and zero points are broadcast to x's
// shape by Reshape/Expand/Slice. Round halves to even and the value is
// clipped to the target range before the Cast, so no float-to-int
// conversion is ever out of range.
//
// Exactness: the integers are exact in f32 up to 2^24. A zero-point shifted
// 8-bit product is at most 255² = 65025, so a MatMul or Conv sums exactly
// while every partial sum stays below 2^24 (always for up to 258 products
// per output; past that a large sum is f32's rounding of the exact one). The
// requantization multiply is f32 (ONNX's reference: f64). Every IR node is
// marked Node::keep_f32: a 16-bit node would change the integers, so the
// planner keeps them f32 at every level (reason `integer-exact`).
#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

bool is_quantized(DType d) {
  return d == DType::kI8 || d == DType::kU8 || d == DType::kI16 || d == DType::kU16;
}

std::pair<double, double> quant_range(DType d) {
  switch (d) {
    case DType::kI8:
      return {-128, 127};
    case DType::kU8:
      return {0, 255};
    case DType::kI16:
      return {-32768, 32767};
    default:
      return {0, 65535};
  }
}

ValueId cast_to(Importer& im, ValueId v, DType d) {
  if (im.type(v).dtype == d) return v;
  return im.emit1("Cast", {v}, {{"to", int64_t(to_c(d))}});
}

ValueId f32(Importer& im, ValueId v) {
  return cast_to(im, v, DType::kF32);
}

// An f32 value rounded to `d` and back: what an operation computed in `d`
// (f16: correctly rounded from the f32 result) gives.
ValueId rounded_to(Importer& im, ValueId v, DType d) {
  if (d == DType::kF32 || d == DType::kF64) return v;
  return f32(im, cast_to(im, v, d));
}

ValueId scalar_f32(Importer& im, float value) {
  std::vector<std::byte> bytes(4);
  std::memcpy(bytes.data(), &value, 4);
  return im.constant({DType::kF32, {}}, std::move(bytes));
}

ValueId reshape(Importer& im, ValueId v, Shape shape) {
  if (im.type(v).shape == shape) return v;
  return im.emit1("Reshape", {v}, {{"shape", std::move(shape)}});
}

// An optional input: kNone when absent.
ValueId optional_input(Importer& im, const N& n, int i) {
  return im.has_input(n, i) ? im.input(n, i) : kNone;
}

// A scale or zero point `v` made broadcastable to x's shape `xs`, as
// ONNX's reference reshapes it: one value is a scalar; block 0: a 1-D
// tensor along `axis`; block > 0: x's shape with ceil(xs[axis] / block)
// on `axis`, each value repeated block times along it.
ValueId broadcast_param(Importer& im, ValueId v, const Shape& xs, int64_t axis, int64_t block,
                        const char* what) {
  const Shape vs = im.type(v).shape;
  if (element_count(vs) == 1 && block == 0) return reshape(im, v, {});
  const auto rank = static_cast<int64_t>(xs.size());
  const int64_t a = norm_axis(im, axis, rank);
  if (block == 0) {
    if (vs.size() != 1 || vs[0] != xs[static_cast<size_t>(a)])
      im.fail(fmt::format("{} has shape {}: expected one value or a 1-D tensor of {} (x's axis {})",
                          what, shape_str(vs), xs[static_cast<size_t>(a)], a));
    Shape s(xs.size(), 1);
    s[static_cast<size_t>(a)] = vs[0];
    return reshape(im, v, std::move(s));
  }
  const auto ua = static_cast<size_t>(a);
  const int64_t blocks = xs[ua] / block + (xs[ua] % block != 0);  // no overflow: block is any int64
  bool ok = vs.size() == xs.size();
  for (size_t i = 0; ok && i < xs.size(); ++i) ok = vs[i] == (i == ua ? blocks : xs[i]);
  if (!ok)
    im.fail(
        fmt::format("{} has shape {}: blocked quantization of x {} with block_size {} along "
                    "axis {} needs x's shape with {} there",
                    what, shape_str(vs), shape_str(xs), block, a, blocks));
  // [.., B, ..] -> [.., B, 1, ..] -> [.., B, block, ..] -> [.., B·block, ..],
  // then the last block cut to x's length.
  Shape split = vs, expanded = vs, merged = vs;
  split.insert(split.begin() + a + 1, 1);
  expanded.insert(expanded.begin() + a + 1, block);
  merged[ua] = blocks * block;
  im.check_size({im.type(v).dtype, expanded}, what);
  ValueId r = im.emit1("Expand", {reshape(im, v, split)}, {{"shape", expanded}});
  r = reshape(im, r, merged);
  if (merged[ua] != xs[ua])
    r = im.emit1("Slice", {r},
                 {{"starts", std::vector<int64_t>{0}},
                  {"ends", std::vector<int64_t>{xs[ua]}},
                  {"axes", std::vector<int64_t>{a}}});
  return r;
}

// Clip(Round(q) + zp, range) as `to`: q and zp f32 (zp may be kNone).
ValueId saturate(Importer& im, ValueId q, ValueId zp, DType to) {
  ValueId r = im.emit1("Round", {q});
  if (zp != kNone) r = im.emit1("Add", {r, f32(im, zp)});
  const auto [lo, hi] = quant_range(to);
  r = im.emit1("Clip", {r}, {{"min", float(lo)}, {"max", float(hi)}});
  return cast_to(im, r, to);
}

DType quantized_input(Importer& im, ValueId v, const char* what, bool allow_i32 = false) {
  const DType d = im.type(v).dtype;
  if (!is_quantized(d) && !(allow_i32 && d == DType::kI32))
    im.fail(fmt::format("{} is {}: ampx takes int8, uint8, int16{} and uint16", what, dtype_name(d),
                        allow_i32 ? ", int32" : ""));
  return d;
}

ValueId float_param(Importer& im, ValueId v, const char* what) {
  if (!is_float(im.type(v).dtype))
    im.fail(fmt::format("{} is {}, expected a float tensor", what, dtype_name(im.type(v).dtype)));
  return v;
}

// `axis` and `block_size`, checked (block_size from opset 21).
std::pair<int64_t, int64_t> axis_and_block(Importer& im, const N& n) {
  const int64_t axis = im.attr_int_or(n, "axis", 1);
  const int64_t block = im.attr_int_or(n, "block_size", 0);
  if (block < 0) im.fail(fmt::format("attribute 'block_size' is {}, it must be >= 0", block));
  return {axis, block};
}

// The dtype an `output_dtype` / `precision` attribute names; nullopt when
// absent or 0.
std::optional<DType> dtype_attr(Importer& im, const N& n, const char* name) {
  const int64_t t = im.attr_int_or(n, name, 0);
  if (t == 0) return std::nullopt;
  const auto d = t > 0 && t <= std::numeric_limits<int32_t>::max()
                     ? dtype_from_onnx(static_cast<int32_t>(t))
                     : std::nullopt;
  if (!d)
    im.fail(fmt::format("attribute '{}' is {}, a type ampx does not have", name,
                        t > 0 && t <= std::numeric_limits<int32_t>::max()
                            ? onnx_elem_type_name(static_cast<int32_t>(t))
                            : std::to_string(t)));
  return d;
}

// The node's nodes are integer arithmetic in f32: the planner keeps them.
void begin(Importer& im, const N& n) {
  im.set_keep_f32();
  im.set_origin(n.op_type());
}

}  // namespace

void quantize_linear(Importer& im, const N& n) {
  begin(im, n);
  const ValueId x = im.input(n, 0);
  const ValueId scale = float_param(im, im.input(n, 1), "y_scale");
  const ValueId zp = optional_input(im, n, 2);
  const DType xt = im.type(x).dtype;
  if (!is_float(xt) && xt != DType::kI32)
    im.fail(fmt::format("x is {}, expected a float or int32 tensor", dtype_name(xt)));
  // `saturate` concerns float8 outputs only, which ampx does not have.
  const std::optional<DType> out = dtype_attr(im, n, "output_dtype");
  DType to = out.value_or(DType::kU8);
  if (zp != kNone) {
    to = im.type(zp).dtype;
    if (out && *out != to)
      im.fail(fmt::format("output_dtype {} differs from y_zero_point's {}", dtype_name(*out),
                          dtype_name(to)));
  }
  if (!is_quantized(to))
    im.fail(fmt::format("quantizing to {} is not supported (ampx: int8, uint8, int16, uint16)",
                        dtype_name(to)));
  const DType precision = dtype_attr(im, n, "precision").value_or(im.type(scale).dtype);
  if (!is_float(precision))
    im.fail(fmt::format("precision {} is not a float type", dtype_name(precision)));
  const Shape xs = im.type(x).shape;
  const auto [axis, block] = axis_and_block(im, n);
  const ValueId s = broadcast_param(im, scale, xs, axis, block, "y_scale");
  const ValueId z = zp == kNone ? kNone : broadcast_param(im, zp, xs, axis, block, "y_zero_point");
  const ValueId q = rounded_to(im,
                               im.emit1("Div", {rounded_to(im, f32(im, x), precision),
                                                rounded_to(im, f32(im, s), precision)}),
                               precision);
  im.bind(n, 0, saturate(im, q, z, to));
}

void dequantize_linear(Importer& im, const N& n) {
  begin(im, n);
  const ValueId x = im.input(n, 0);
  const ValueId scale = float_param(im, im.input(n, 1), "x_scale");
  const ValueId zp = optional_input(im, n, 2);
  const DType xt = quantized_input(im, x, "x", true);
  if (zp != kNone && im.type(zp).dtype != xt)
    im.fail(fmt::format("x_zero_point is {}, x is {}: they must match",
                        dtype_name(im.type(zp).dtype), dtype_name(xt)));
  const DType to = dtype_attr(im, n, "output_dtype").value_or(im.type(scale).dtype);
  if (!is_float(to)) im.fail(fmt::format("output_dtype {} is not a float type", dtype_name(to)));
  const Shape xs = im.type(x).shape;
  const auto [axis, block] = axis_and_block(im, n);
  ValueId d = f32(im, x);
  if (zp != kNone)
    d = im.emit1("Sub", {d, f32(im, broadcast_param(im, zp, xs, axis, block, "x_zero_point"))});
  d = im.emit1("Mul", {d, f32(im, broadcast_param(im, scale, xs, axis, block, "x_scale"))});
  im.bind(n, 0, cast_to(im, d, to));
}

// ONNX's reference: scale = (max(0, max x) - min(0, min x)) / 255 (1/255
// for an all-zero x), zp = Round(Clip(-min / scale, 0, 255)).
void dynamic_quantize_linear(Importer& im, const N& n) {
  begin(im, n);
  const ValueId x = im.input(n, 0);
  if (im.type(x).dtype != DType::kF32)
    im.fail(fmt::format("x is {}, expected float32", dtype_name(im.type(x).dtype)));
  if (element_count(im.type(x).shape) == 0) im.fail("x is empty: it has no range to quantize");
  const AttrMap all{{"keepdims", int64_t{0}}};
  const ValueId zero = scalar_f32(im, 0.0f);
  const ValueId hi = im.emit1("Max", {im.emit1("ReduceMax", {x}, all), zero});
  const ValueId lo = im.emit1("Min", {im.emit1("ReduceMin", {x}, all), zero});
  const ValueId range = im.emit1(
      "Where", {im.emit1("Equal", {hi, lo}), scalar_f32(im, 1.0f), im.emit1("Sub", {hi, lo})});
  const ValueId scale = im.emit1("Div", {range, scalar_f32(im, 255.0f)});
  const ValueId zp0 = im.emit1("Neg", {im.emit1("Div", {lo, scale})});
  const ValueId zp =
      im.emit1("Round", {im.emit1("Clip", {zp0}, {{"min", float{0}}, {"max", float{255}}})});
  im.bind(n, 0, saturate(im, im.emit1("Div", {x, scale}), zp, DType::kU8));
  im.bind(n, 1, scale);
  im.bind(n, 2, cast_to(im, zp, DType::kU8));
}

namespace {

// (v - zp) in f32, zp broadcast as `zp_shape` gives it (kNone: v itself).
ValueId shifted(Importer& im, ValueId v, ValueId zp, const char* what) {
  quantized_input(im, v, what);
  if (zp == kNone) return f32(im, v);
  if (im.type(zp).dtype != im.type(v).dtype)
    im.fail(fmt::format("the zero point of {} is {}, {} is {}: they must match", what,
                        dtype_name(im.type(zp).dtype), what, dtype_name(im.type(v).dtype)));
  return im.emit1("Sub", {f32(im, v), f32(im, zp)});
}

// A MatMul operand's scale or zero point: one value, or per row of A
// (1-D of A's rows, `row` true) or per column of B (1-D of B's columns).
ValueId matmul_param(Importer& im, ValueId p, ValueId operand, bool row, const char* what) {
  if (p == kNone) return kNone;
  const Shape ps = im.type(p).shape, os = im.type(operand).shape;
  if (element_count(ps) == 1) return reshape(im, p, {});
  const int64_t dim = os[os.size() - (row ? 2 : 1)];
  if (ps.size() != 1 || ps[0] != dim)
    im.fail(fmt::format("{} has shape {}: expected one value or a 1-D tensor of {} (per {})", what,
                        shape_str(ps), dim, row ? "row" : "column"));
  return row ? reshape(im, p, {dim, 1}) : p;
}

void require_matrix(Importer& im, ValueId v, const char* what) {
  if (rank_of(im, v) < 2)
    im.fail(fmt::format("{} has rank {}: ampx takes rank >= 2", what, rank_of(im, v)));
}

// A weight's zero point or scale: one value, or one per output channel
// (1-D of W's first dim), shaped [M, 1, ...] against a tensor of `rank`
// with channels on axis `channel_axis`.
ValueId channel_param(Importer& im, ValueId p, int64_t channels, size_t rank, size_t channel_axis,
                      const char* what) {
  if (p == kNone) return kNone;
  const Shape ps = im.type(p).shape;
  if (element_count(ps) == 1) return reshape(im, p, {});
  if (ps.size() != 1 || ps[0] != channels)
    im.fail(
        fmt::format("{} has shape {}: expected one value or a 1-D tensor of {} (per output "
                    "channel)",
                    what, shape_str(ps), channels));
  Shape s(rank, 1);
  s[channel_axis] = channels;
  return reshape(im, p, std::move(s));
}

// The single-value zero point of a convolution's input.
ValueId scalar_param(Importer& im, ValueId p, const char* what) {
  if (p == kNone) return kNone;
  if (element_count(im.type(p).shape) != 1)
    im.fail(fmt::format("{} has shape {}: expected one value", what, shape_str(im.type(p).shape)));
  return reshape(im, p, {});
}

ValueId product_scale(Importer& im, ValueId a_scale, ValueId b_scale, ValueId y_scale) {
  const DType st = im.type(a_scale).dtype;
  const ValueId ab = rounded_to(im, im.emit1("Mul", {f32(im, a_scale), f32(im, b_scale)}), st);
  return rounded_to(im, im.emit1("Div", {ab, f32(im, y_scale)}), st);
}

// The requantized output: Round(acc · multiplier) + y_zp, saturated to
// y_zp's dtype (without one: `fallback`'s).
ValueId requantize(Importer& im, ValueId acc, ValueId multiplier, ValueId y_zp, DType fallback) {
  const DType to = y_zp == kNone ? fallback : im.type(y_zp).dtype;
  if (!is_quantized(to)) im.fail(fmt::format("y_zero_point is {}", dtype_name(to)));
  return saturate(im, im.emit1("Mul", {acc, multiplier}), y_zp, to);
}

}  // namespace

void matmul_integer(Importer& im, const N& n) {
  begin(im, n);
  const ValueId a = im.input(n, 0), b = im.input(n, 1);
  require_matrix(im, a, "A");
  require_matrix(im, b, "B");
  const ValueId az = matmul_param(im, optional_input(im, n, 2), a, true, "a_zero_point");
  const ValueId bz = matmul_param(im, optional_input(im, n, 3), b, false, "b_zero_point");
  const ValueId y = im.emit1("MatMul", {shifted(im, a, az, "A"), shifted(im, b, bz, "B")});
  im.bind(n, 0, cast_to(im, y, DType::kI32));
}

void qlinear_matmul(Importer& im, const N& n) {
  begin(im, n);
  const ValueId a = im.input(n, 0), b = im.input(n, 3);
  require_matrix(im, a, "a");
  require_matrix(im, b, "b");
  const ValueId as = float_param(im, im.input(n, 1), "a_scale");
  const ValueId bs = float_param(im, im.input(n, 4), "b_scale");
  const ValueId ys = float_param(im, im.input(n, 6), "y_scale");
  const ValueId az = matmul_param(im, optional_input(im, n, 2), a, true, "a_zero_point");
  const ValueId bz = matmul_param(im, optional_input(im, n, 5), b, false, "b_zero_point");
  const ValueId yz = scalar_param(im, optional_input(im, n, 7), "y_zero_point");
  const ValueId acc = im.emit1("MatMul", {shifted(im, a, az, "a"), shifted(im, b, bz, "b")});
  const ValueId m =
      product_scale(im, matmul_param(im, as, a, true, "a_scale"),
                    matmul_param(im, bs, b, false, "b_scale"), scalar_param(im, ys, "y_scale"));
  im.bind(n, 0, requantize(im, acc, m, yz, im.type(a).dtype));
}

void conv_integer(Importer& im, const N& n) {
  begin(im, n);
  const ValueId x = im.input(n, 0), w = im.input(n, 1);
  const Shape ws = im.type(w).shape;
  if (ws.empty()) im.fail("w must have rank >= 3");
  const ValueId xz = scalar_param(im, optional_input(im, n, 2), "x_zero_point");
  const ValueId wz =
      channel_param(im, optional_input(im, n, 3), ws[0], ws.size(), 0, "w_zero_point");
  const ValueId y = conv_values(im, n, shifted(im, x, xz, "x"), shifted(im, w, wz, "w"), kNone);
  im.bind(n, 0, cast_to(im, y, DType::kI32));
}

void qlinear_conv(Importer& im, const N& n) {
  begin(im, n);
  const ValueId x = im.input(n, 0), w = im.input(n, 3);
  const Shape ws = im.type(w).shape;
  if (ws.empty()) im.fail("w must have rank >= 3");
  const ValueId xz = scalar_param(im, optional_input(im, n, 2), "x_zero_point");
  const ValueId wz =
      channel_param(im, optional_input(im, n, 5), ws[0], ws.size(), 0, "w_zero_point");
  const ValueId yz = scalar_param(im, optional_input(im, n, 7), "y_zero_point");
  ValueId bias = optional_input(im, n, 8);
  if (bias != kNone) {
    if (im.type(bias).dtype != DType::kI32)
      im.fail(fmt::format("B is {}, expected int32", dtype_name(im.type(bias).dtype)));
    bias = f32(im, bias);
  }
  const ValueId acc = conv_values(im, n, shifted(im, x, xz, "x"), shifted(im, w, wz, "w"), bias);
  const size_t rank = im.type(acc).shape.size();
  const ValueId m = product_scale(
      im, scalar_param(im, float_param(im, im.input(n, 1), "x_scale"), "x_scale"),
      channel_param(im, float_param(im, im.input(n, 4), "w_scale"), ws[0], rank, 1, "w_scale"),
      scalar_param(im, float_param(im, im.input(n, 6), "y_scale"), "y_scale"));
  im.bind(n, 0, requantize(im, acc, m, yz, im.type(x).dtype));
}

}  // namespace ampx::onnx_io
