// ONNX ops imported exactly as a composition of op-set ops (docs/ONNX.md,
// "Composed ops"): each is ONNX's own definition (its function body or the
// formula of its spec) written with ops every backend runs, so the planner
// sees the parts and their AMP categories (an Exp stays black, a Where
// follows) and no backend needs a new kernel.
//   Trilu            Where(constant mask from the static shape and k, X, 0)
//   Xor              And(Or(A, B), Not(And(A, B)))
//   Hardmax          Cast(Equal(ArgMax(X, keepdims), iota along the axis))
//   ReduceL1         ReduceSum(Abs(X));  ReduceLogSum: Log(ReduceSum(X))
//   LpNormalization  Where(norm == 0, 0, X / norm), norm = ReduceSum(Abs)
//                    (p 1) or ReduceL2 (p 2), kept dims
//   IsNaN            Not(Equal(X, X));  IsInf: Equal(X, ±inf), Or-ed
//   Elu, Selu, Celu, ThresholdedRelu, Shrink, Sign
//                    Where of comparisons with 0 or the thresholds
//   Softsign         X / (1 + |X|);  Swish: X · Sigmoid(alpha · X)
//   MeanVarianceNormalization
//                    ONNX's function body: (X - E[X]) / (sqrt(E[X²] - E[X]²)
//                    + 1e-9), the squares as Pow (black: kept in f32)
//   EyeLike          a constant of the input's shape
//   GlobalMaxPool    ReduceMax over the spatial axes, kept dims
//   CenterCropPad    Slice (crop) then Pad with zeros, centred as ONNX's
//                    reference does
//   ScatterElements, Scatter
//                    ScatterND with the full coordinates of each index:
//                    constant positions on the other axes, the indices
//                    on `axis`
//   MaxUnpool        ScatterND of X into zeros of the inferred shape at the
//                    flat Indices, then (output_shape) Pad with zeros at the
//                    end of each spatial axis, as ONNX's reference does
// A comparison is false for NaN, and each Where is arranged so that a NaN
// input gives what ONNX's formula gives (NaN, or 0 for ThresholdedRelu).
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "onnx_ops.hpp"
#include "tensor_proto.hpp"
#include "tensor_size.hpp"

namespace ampx::onnx_io {
namespace {

using N = onnx::NodeProto;

ValueId float_input(Importer& im, const N& n, int i) {
  const ValueId x = im.input(n, i);
  if (!is_float(im.type(x).dtype))
    im.fail(
        fmt::format("input {} is {}, expected a float tensor", i, dtype_name(im.type(x).dtype)));
  return x;
}

ValueId reshape(Importer& im, ValueId v, const Shape& shape) {
  return im.emit1("Reshape", {v}, {{"shape", std::vector<int64_t>(shape.begin(), shape.end())}});
}

ValueId where(Importer& im, ValueId cond, ValueId a, ValueId b) {
  return im.emit1("Where", {cond, a, b});
}

// A bool constant of `shape` from `keep(i)` over its row-major elements.
template <typename F>
ValueId bool_constant(Importer& im, const Shape& shape, F keep) {
  const TensorType type{DType::kBool, shape};
  im.check_size(type, "a mask");
  const int64_t count = element_count(shape);
  std::vector<std::byte> bytes(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    bytes[static_cast<size_t>(i)] = keep(i) ? std::byte{1} : std::byte{0};
  return im.constant(type, std::move(bytes));
}

void refuse_legacy_broadcast(Importer& im, const N& n) {
  for (const char* a : {"broadcast", "axis"})
    if (im.attr_int(n, a))
      im.fail(fmt::format(
          "attribute '{}' is opset 1-6 broadcasting (opset 7 replaced it); it is not supported",
          a));
}

// The axes of a Reduce* node: the attribute before opset 18, the optional
// input from then on. nullopt: noop_with_empty_axes with no axes.
std::optional<std::vector<int64_t>> reduce_axes(Importer& im, const N& n) {
  std::vector<int64_t> axes;
  if (im.opset() >= 18) {
    if (im.has_input(n, 1)) axes = im.const_ints(n, 1, "axes");
    if (axes.empty() && im.attr_int_or(n, "noop_with_empty_axes", 0) != 0) return std::nullopt;
  } else {
    axes = im.attr_ints(n, "axes").value_or(std::vector<int64_t>{});
  }
  return axes;
}

AttrMap reduce_attrs(Importer& im, const N& n, const std::vector<int64_t>& axes) {
  AttrMap attrs{{"keepdims", im.attr_int_or(n, "keepdims", 1)}};
  if (!axes.empty()) attrs["axes"] = axes;
  return attrs;
}

}  // namespace

void trilu(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;
  if (s.size() < 2) im.fail(fmt::format("input must have rank >= 2, got {}", s.size()));
  int64_t k = 0;
  if (im.has_input(n, 1)) {
    const auto ks = im.const_ints(n, 1, "k");
    if (ks.size() != 1) im.fail(fmt::format("k must hold one value, it has {}", ks.size()));
    k = ks[0];
  }
  const bool upper = im.attr_int_or(n, "upper", 1) != 0;
  const int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
  // Kept: j - i >= k (upper) or j - i <= k (lower), in 128 bits (k is any i64).
  const ValueId mask = bool_constant(im, {rows, cols}, [&](int64_t e) {
    const __int128 d = __int128{e % cols} - e / cols;
    return upper ? d >= k : d <= k;
  });
  im.bind(n, 0, where(im, mask, x, cast_scalar(im, im.type(x).dtype, 0)));
}

void xor_op(Importer& im, const N& n) {
  refuse_legacy_broadcast(im, n);
  const ValueId a = im.input(n, 0), b = im.input(n, 1);
  const ValueId both = im.emit1("And", {a, b});
  im.bind(n, 0, im.emit1("And", {im.emit1("Or", {a, b}), im.emit1("Not", {both})}));
}

// 1 at the first maximum along the axis, 0 elsewhere. Before opset 13 the
// input is coerced to 2-D [prod(dims < axis), prod(dims >= axis)] (axis
// default 1); from 13 on the axis is one dimension (default -1).
void hardmax(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const Shape s = im.type(x).shape;
  const int64_t rank = rank_of(im, x);
  const bool coerced = im.opset() < 13;
  int64_t axis = coerced ? im.attr_int_or(n, "axis", 1) : im.attr_int_or(n, "axis", -1);
  ValueId v = x;
  if (coerced) {
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a > rank) im.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
    __int128 outer = 1, inner = 1;
    for (int64_t i = 0; i < rank; ++i) (i < a ? outer : inner) *= s[static_cast<size_t>(i)];
    v = reshape(im, x, {im.to_i64(outer, "the 2-D view"), im.to_i64(inner, "the 2-D view")});
    axis = 1;
  } else {
    axis = norm_axis(im, axis, rank);
  }
  const Shape vs = im.type(v).shape;
  const ValueId idx = im.emit1(
      "ArgMax", {v}, {{"axis", axis}, {"keepdims", int64_t{1}}, {"select_last_index", int64_t{0}}});
  const int64_t d = vs[static_cast<size_t>(axis)];
  std::vector<int64_t> iota(static_cast<size_t>(d));
  for (int64_t i = 0; i < d; ++i) iota[static_cast<size_t>(i)] = i;
  Shape is(vs.size(), 1);
  is[static_cast<size_t>(axis)] = d;
  const ValueId hot = im.emit1("Equal", {idx, im.constant_i64(iota, is)});
  ValueId y = im.emit1("Cast", {hot}, {{"to", int64_t(to_c(im.type(x).dtype))}});
  if (coerced) y = reshape(im, y, s);
  im.bind(n, 0, y);
}

// ReduceL1 and ReduceLogSum. With noop_with_empty_axes and no axes ONNX
// says "the output equals the input", which for a norm or a log runtimes
// read differently: refused, as for ReduceL2.
void reduce_composed(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const auto axes = reduce_axes(im, n);
  if (!axes)
    im.fail("noop_with_empty_axes=1 with no axes is not supported for " + n.op_type() +
            " (runtimes disagree on what it computes)");
  // ONNX allows integers too; the op set's ReduceSum and Log take floats.
  float_input(im, n, 0);
  if (n.op_type() == "ReduceL1") {
    im.bind(n, 0, im.emit1("ReduceSum", {im.emit1("Abs", {x})}, reduce_attrs(im, n, *axes)));
    return;
  }
  im.bind(n, 0, im.emit1("Log", {im.emit1("ReduceSum", {x}, reduce_attrs(im, n, *axes))}));
}

void lp_normalization(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const int64_t axis = norm_axis(im, im.attr_int_or(n, "axis", -1), rank_of(im, x));
  const int64_t p = im.attr_int_or(n, "p", 2);
  const AttrMap attrs{{"axes", std::vector<int64_t>{axis}}, {"keepdims", int64_t{1}}};
  ValueId norm;
  if (p == 1)
    norm = im.emit1("ReduceSum", {im.emit1("Abs", {x})}, attrs);
  else if (p == 2)
    norm = im.emit1("ReduceL2", {x}, attrs);
  else
    im.fail(fmt::format("p must be 1 or 2, got {}", p));
  // A zero norm gives 0, not 0/0 (ONNX's reference, opset 22's text).
  const ValueId zero = cast_scalar(im, im.type(x).dtype, 0);
  im.bind(n, 0, where(im, im.emit1("Equal", {norm, zero}), zero, im.emit1("Div", {x, norm})));
}

void is_nan(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  im.bind(n, 0, im.emit1("Not", {im.emit1("Equal", {x, x})}));
}

void is_inf(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const DType dt = im.type(x).dtype;
  const bool pos = im.attr_int_or(n, "detect_positive", 1) != 0;
  const bool neg = im.attr_int_or(n, "detect_negative", 1) != 0;
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::optional<ValueId> y;
  if (pos) y = im.emit1("Equal", {x, cast_scalar(im, dt, inf)});
  if (neg) {
    const ValueId m = im.emit1("Equal", {x, cast_scalar(im, dt, -inf)});
    y = y ? im.emit1("Or", {*y, m}) : m;
  }
  // Neither: all false (x < x is false for every x, NaN included).
  im.bind(n, 0, y ? *y : im.emit1("Less", {x, x}));
}

// alpha·(exp(x) - 1) where x < 0, else x.
void elu(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const DType dt = im.type(x).dtype;
  const ValueId alpha = cast_scalar(im, dt, im.attr_float_or(n, "alpha", 1.0f));
  const ValueId neg =
      im.emit1("Mul", {alpha, im.emit1("Sub", {im.emit1("Exp", {x}), cast_scalar(im, dt, 1)})});
  im.bind(n, 0, where(im, im.emit1("Less", {x, cast_scalar(im, dt, 0)}), neg, x));
}

// gamma·x where x > 0, else gamma·(alpha·exp(x) - alpha); NaN stays NaN.
void selu(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const DType dt = im.type(x).dtype;
  const ValueId alpha =
      cast_scalar(im, dt, im.attr_float_or(n, "alpha", 1.67326319217681884765625f));
  const ValueId gamma =
      cast_scalar(im, dt, im.attr_float_or(n, "gamma", 1.05070102214813232421875f));
  const ValueId neg = im.emit1("Sub", {im.emit1("Mul", {alpha, im.emit1("Exp", {x})}), alpha});
  // x <= 0 picks the exponential: a NaN takes the x branch, so no backend's
  // exp of NaN is read.
  const ValueId y = where(im, im.emit1("LessOrEqual", {x, cast_scalar(im, dt, 0)}), neg, x);
  im.bind(n, 0, im.emit1("Mul", {gamma, y}));
}

// max(0, x) + min(0, alpha·(exp(x/alpha) - 1)): for any alpha != 0 the
// second term is 0 where x >= 0 and the first where x < 0, so a Where of
// the two (x itself where x >= 0 or NaN).
void celu(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const DType dt = im.type(x).dtype;
  const float a = im.attr_float_or(n, "alpha", 1.0f);
  if (a == 0.0f) im.fail("alpha must not be 0 (CELU divides by it)");
  const ValueId alpha = cast_scalar(im, dt, a);
  const ValueId e = im.emit1("Exp", {im.emit1("Div", {x, alpha})});
  const ValueId neg = im.emit1("Mul", {alpha, im.emit1("Sub", {e, cast_scalar(im, dt, 1)})});
  im.bind(n, 0, where(im, im.emit1("Less", {x, cast_scalar(im, dt, 0)}), neg, x));
}

// x where x > alpha, else 0 (NaN too, as ONNX's reference).
void thresholded_relu(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const DType dt = im.type(x).dtype;
  const ValueId alpha = cast_scalar(im, dt, im.attr_float_or(n, "alpha", 1.0f));
  im.bind(n, 0, where(im, im.emit1("Greater", {x, alpha}), x, cast_scalar(im, dt, 0)));
}

void softsign(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const ValueId den = im.emit1("Add", {cast_scalar(im, im.type(x).dtype, 1), im.emit1("Abs", {x})});
  im.bind(n, 0, im.emit1("Div", {x, den}));
}

// x + bias where x < -lambd, x - bias where x > lambd, else 0. Integer
// inputs (ONNX allows them) are refused: the thresholds are floats.
void shrink(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const DType dt = im.type(x).dtype;
  const double lambd = im.attr_float_or(n, "lambd", 0.5f);
  const ValueId bias = cast_scalar(im, dt, im.attr_float_or(n, "bias", 0.0f));
  const ValueId below = im.emit1("Less", {x, cast_scalar(im, dt, -lambd)});
  const ValueId above = im.emit1("Greater", {x, cast_scalar(im, dt, lambd)});
  const ValueId mid = where(im, above, im.emit1("Sub", {x, bias}), cast_scalar(im, dt, 0));
  im.bind(n, 0, where(im, below, im.emit1("Add", {x, bias}), mid));
}

// 1, -1 or 0; NaN stays NaN (numpy's sign, ONNX's reference), -0 gives 0.
void sign(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const DType dt = im.type(x).dtype;
  if (!is_float(dt) && dt != DType::kI64 && dt != DType::kI32)
    im.fail(fmt::format("input is {}, expected a float, i64 or i32 tensor", dtype_name(dt)));
  const ValueId zero = cast_scalar(im, dt, 0);
  ValueId rest = zero;
  if (is_float(dt)) rest = where(im, im.emit1("Equal", {x, x}), zero, x);
  rest = where(im, im.emit1("Less", {x, zero}), cast_scalar(im, dt, -1), rest);
  im.bind(n, 0, where(im, im.emit1("Greater", {x, zero}), cast_scalar(im, dt, 1), rest));
}

void swish(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const ValueId alpha = cast_scalar(im, im.type(x).dtype, im.attr_float_or(n, "alpha", 1.0f));
  im.bind(n, 0, im.emit1("Mul", {x, im.emit1("Sigmoid", {im.emit1("Mul", {alpha, x})})}));
}

void mean_variance_normalization(Importer& im, const N& n) {
  const ValueId x = float_input(im, n, 0);
  const DType dt = im.type(x).dtype;
  const int64_t rank = rank_of(im, x);
  const auto axes = im.attr_ints(n, "axes").value_or(std::vector<int64_t>{0, 2, 3});
  std::vector<int64_t> norm;
  for (int64_t a : axes) norm.push_back(norm_axis(im, a, rank));
  const AttrMap attrs{{"axes", norm}, {"keepdims", int64_t{1}}};
  const ValueId two = cast_scalar(im, dt, 2);
  const ValueId mean = im.emit1("ReduceMean", {x}, attrs);
  const ValueId mean_sq = im.emit1("Pow", {mean, two});
  const ValueId sq_mean = im.emit1("ReduceMean", {im.emit1("Pow", {x, two})}, attrs);
  const ValueId std_dev = im.emit1("Sqrt", {im.emit1("Sub", {sq_mean, mean_sq})});
  const ValueId den = im.emit1("Add", {std_dev, cast_scalar(im, dt, 1e-9)});
  im.bind(n, 0, im.emit1("Div", {im.emit1("Sub", {x, mean}), den}));
}

// Ones on the k-th diagonal of a 2-D input's shape; its values are not read.
void eye_like(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;
  if (s.size() != 2) im.fail(fmt::format("input must be 2-D, got rank {}", s.size()));
  DType dt = im.type(x).dtype;
  if (const auto to = im.attr_int(n, "dtype")) {
    const auto d = dtype_from_onnx(static_cast<int32_t>(*to));
    if (!d)
      im.fail("dtype " + onnx_elem_type_name(static_cast<int32_t>(*to)) + " is not supported");
    dt = *d;
  }
  const int64_t k = im.attr_int_or(n, "k", 0);
  const int64_t cols = s[1];
  const ValueId mask =
      bool_constant(im, s, [&](int64_t e) { return __int128{e % cols} - e / cols == k; });
  im.bind(n, 0, im.emit1("Cast", {mask}, {{"to", int64_t(to_c(dt))}}));
}

void global_max_pool(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const int64_t rank = rank_of(im, x);
  if (rank < 3) im.fail(fmt::format("X must be [N, C, spatial...], got rank {}", rank));
  std::vector<int64_t> axes;
  for (int64_t a = 2; a < rank; ++a) axes.push_back(a);
  im.bind(n, 0, im.emit1("ReduceMax", {x}, {{"axes", axes}, {"keepdims", int64_t{1}}}));
}

// Each listed axis cropped or padded (with zeros) to its target, centred:
// a crop starts at (dim - target) / 2, a pad puts (target - dim) / 2 before.
void center_crop_pad(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  const Shape s = im.type(x).shape;
  const int64_t rank = rank_of(im, x);
  const std::vector<int64_t> target = im.const_ints(n, 1, "shape");
  std::vector<int64_t> axes;
  if (const auto a = im.attr_ints(n, "axes")) {
    for (int64_t v : *a) {
      const int64_t ax = norm_axis(im, v, rank);
      if (std::find(axes.begin(), axes.end(), ax) != axes.end())
        im.fail(fmt::format("axes lists axis {} twice", ax));
      axes.push_back(ax);
    }
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (target.size() != axes.size())
    im.fail(fmt::format("shape has {} values for {} axes", target.size(), axes.size()));
  std::vector<int64_t> starts, ends, crop_axes, pads(static_cast<size_t>(2 * rank), 0);
  bool padded = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t dim = s[static_cast<size_t>(axes[i])], t = target[i];
    if (t < 0) im.fail(fmt::format("shape value {} is negative", t));
    if (t < dim) {
      starts.push_back((dim - t) / 2);
      ends.push_back((dim - t) / 2 + t);
      crop_axes.push_back(axes[i]);
    } else if (t > dim) {
      pads[static_cast<size_t>(axes[i])] = (t - dim) / 2;
      pads[static_cast<size_t>(axes[i] + rank)] = (t - dim) - (t - dim) / 2;
      padded = true;
    }
  }
  ValueId y = x;
  if (!crop_axes.empty())
    y = im.emit1("Slice", {y}, {{"starts", starts}, {"ends", ends}, {"axes", crop_axes}});
  if (padded)
    y = im.emit1("Pad", {y}, {{"pads", pads}, {"mode", std::string("constant")}, {"value", 0.0}});
  if (y == x) y = im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>(s.begin(), s.end())}});
  im.bind(n, 0, y);
}

// ScatterElements (and Scatter, opsets 9-10): ScatterND with coordinates
// [indices' shape..., rank]: on `axis` the index (a negative one counts
// from the end in ScatterND as in ScatterElements), on every other axis
// the element's own position.
void scatter_elements(Importer& im, const N& n) {
  const ValueId data = im.input(n, 0), indices = im.input(n, 1), updates = im.input(n, 2);
  const Shape ds = im.type(data).shape, is = im.type(indices).shape;
  const int64_t rank = rank_of(im, data);
  const DType idt = im.type(indices).dtype;
  if (idt != DType::kI64 && idt != DType::kI32)
    im.fail(fmt::format("indices are {}, expected i64 or i32", dtype_name(idt)));
  if (static_cast<int64_t>(is.size()) != rank)
    im.fail(fmt::format("indices have rank {}, data rank {}", is.size(), rank));
  if (im.type(updates).shape != is)
    im.fail(fmt::format("updates have shape {}, indices {}", shape_str(im.type(updates).shape),
                        shape_str(is)));
  for (int64_t a = 0; a < rank; ++a)
    if (is[static_cast<size_t>(a)] > ds[static_cast<size_t>(a)])
      im.fail(fmt::format("indices dimension {} ({}) exceeds data's ({})", a,
                          is[static_cast<size_t>(a)], ds[static_cast<size_t>(a)]));
  const int64_t axis = norm_axis(im, im.attr_int_or(n, "axis", 0), rank);
  const std::string r =
      n.op_type() == "Scatter" ? "none" : im.attr_string_or(n, "reduction", "none");
  if ((r == "max" || r == "min") && im.opset() < 18)
    im.fail(fmt::format("reduction '{}' is defined from opset 18", r));
  if ((r == "add" || r == "mul") && im.opset() < 16)
    im.fail(fmt::format("reduction '{}' is defined from opset 16", r));

  Shape column = is;
  column.push_back(1);
  ValueId idx = indices;
  if (idt != DType::kI64) idx = im.emit1("Cast", {idx}, {{"to", int64_t(to_c(DType::kI64))}});
  const int64_t count = element_count(is);
  std::vector<ValueId> coords;
  for (int64_t a = 0; a < rank; ++a) {
    if (a == axis) {
      coords.push_back(reshape(im, idx, column));
      continue;
    }
    // The element's position on axis a: (e / stride) % size.
    int64_t stride = 1;
    for (int64_t b = a + 1; b < rank; ++b) stride *= is[static_cast<size_t>(b)];
    im.check_size({DType::kI64, column}, "the scatter coordinates");
    std::vector<int64_t> pos(static_cast<size_t>(count));
    for (int64_t e = 0; e < count; ++e)
      pos[static_cast<size_t>(e)] = (e / stride) % is[static_cast<size_t>(a)];
    coords.push_back(im.constant_i64(pos, column));
  }
  const ValueId nd = im.emit1("Concat", std::move(coords), {{"axis", rank}});
  im.bind(n, 0, im.emit1("ScatterND", {data, nd, updates}, {{"reduction", r}}));
}

// MaxUnpool (opsets 9, 11): Y has the inferred shape, (in - 1) * stride +
// kernel - pads per spatial axis, zero but at Indices (flat positions in
// Y, MaxPool's Indices with storage_order 0), which get X's values. An
// output_shape (input 2) at least that large puts Y at its start and zeros
// after, as ONNX's reference places it.
void max_unpool(Importer& im, const N& n) {
  const ValueId x = im.input(n, 0);
  ValueId idx = im.input(n, 1);
  const Shape xs = im.type(x).shape;
  if (xs.size() < 3) im.fail(fmt::format("X must be [N, C, spatial...], got rank {}", xs.size()));
  if (im.type(idx).shape != xs) im.fail("I must have X's shape");
  const DType idt = im.type(idx).dtype;
  if (idt != DType::kI64 && idt != DType::kI32) im.fail("I must be int64");
  const size_t s = xs.size() - 2;
  const auto k = im.attr_ints(n, "kernel_shape");
  if (!k || k->size() != s)
    im.fail(fmt::format("kernel_shape must have {} value{}", s, s == 1 ? "" : "s"));
  const auto strides = im.attr_ints(n, "strides").value_or(std::vector<int64_t>(s, 1));
  const auto pads = im.attr_ints(n, "pads").value_or(std::vector<int64_t>(2 * s, 0));
  if (strides.size() != s || pads.size() != 2 * s)
    im.fail(fmt::format("strides must have {} and pads {} values", s, 2 * s));
  Shape ys{xs[0], xs[1]};
  __int128 total = __int128{xs[0]} * xs[1];
  for (size_t i = 0; i < s; ++i) {
    if ((*k)[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[i + s] < 0)
      im.fail("kernel_shape and strides must be >= 1, pads >= 0");
    const __int128 d =
        (__int128{xs[2 + i]} - 1) * strides[i] + (*k)[i] - __int128{pads[i]} - pads[i + s];
    if (d < 1) im.fail(fmt::format("the inferred output has spatial dimension {} < 1", i));
    ys.push_back(im.to_i64(d, "the output's size"));
    total *= d;
  }
  const int64_t numel = im.to_i64(total, "the output's size");
  if (static_cast<uint64_t>(total) * 8 > kMaxTensorBytes) im.fail("the output is too large");
  if (idt != DType::kI64) idx = im.emit1("Cast", {idx}, {{"to", int64_t(to_c(DType::kI64))}});
  int64_t m = 1;
  for (int64_t d : xs) m *= d;  // X exists: no overflow
  const ValueId zeros = im.emit1("Expand", {cast_scalar(im, im.type(x).dtype, 0.0)},
                                 {{"shape", std::vector<int64_t>{numel}}});
  const ValueId flat =
      im.emit1("ScatterND",
               {zeros, im.emit1("Reshape", {idx}, {{"shape", std::vector<int64_t>{m, 1}}}),
                im.emit1("Reshape", {x}, {{"shape", std::vector<int64_t>{m}}})},
               {{"reduction", std::string("none")}});
  ValueId y = im.emit1("Reshape", {flat}, {{"shape", std::vector<int64_t>(ys)}});
  if (!im.has_input(n, 2)) {
    im.bind(n, 0, y);
    return;
  }
  const std::vector<int64_t> want = im.const_ints(n, 2, "output_shape");
  if (want.size() != ys.size())
    im.fail(fmt::format("output_shape has {} values, X has rank {}", want.size(), ys.size()));
  std::vector<int64_t> pad(2 * ys.size(), 0);
  bool any = false;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (want[i] < ys[i] || (i < 2 && want[i] != ys[i]))
      im.fail(fmt::format("output_shape's dimension {} ({}) is not the inferred {} or larger", i,
                          want[i], ys[i]));
    pad[ys.size() + i] = want[i] - ys[i];
    any = any || want[i] != ys[i];
  }
  if (any)
    y = im.emit1("Pad", {y}, {{"pads", pad}, {"mode", std::string("constant")}, {"value", 0.0}});
  im.bind(n, 0, y);
}

}  // namespace ampx::onnx_io
