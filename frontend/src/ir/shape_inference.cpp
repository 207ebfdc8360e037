#include <ampx/ir/activation.hpp>
#include <ampx/ir/attr_access.hpp>
#include <ampx/ir/shape_inference.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <sstream>

namespace ampx {
namespace {

// Collects the node's identity so every failure names it.
class Checker {
 public:
  Checker(OpType op, std::string_view name) : op_(op), name_(name) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw GraphError("node '" + std::string(name_) + "' (" + std::string(op_name(op_)) +
                     "): " + what);
  }
  // Attribute access with the node named in any kind mismatch.
  template <typename F>
  auto attr(F&& f) const -> decltype(f()) {
    try {
      return f();
    } catch (const GraphError& e) {
      fail(e.what());
    }
  }

 private:
  OpType op_;
  std::string_view name_;
};

// Builds the message only when the check fails: inference runs for every
// node the planner rewrites, and most checks pass.
#define AMPX_CHECK(cond, msg) \
  do {                        \
    if (!(cond)) c.fail(msg); \
  } while (0)

int64_t normalize_axis(const Checker& c, int64_t axis, int64_t rank, const char* what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  AMPX_CHECK(a >= 0 && a < rank, std::string(what) + " " + std::to_string(axis) +
                                     " is out of range for rank " + std::to_string(rank));
  return a;
}

// Output spatial size of a window op. ceil_mode rounds up but a window must
// start inside the (left-padded) input, as in ONNX.
int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                   int64_t dilation, bool ceil_mode) {
  const int64_t eff = dilation * (k - 1) + 1;
  const int64_t span = in + pad_lo + pad_hi - eff;
  if (span < 0) return 0;
  int64_t out = ceil_mode ? (span + stride - 1) / stride + 1 : span / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_lo) --out;
  return out;
}

std::vector<int64_t> pair_attr(const Checker& c, const AttrMap& attrs, const char* name,
                               std::vector<int64_t> def, size_t n, bool positive) {
  auto v = c.attr([&] { return attr_ints(attrs, name, def); });
  AMPX_CHECK(v.size() == n, std::string("attribute '") + name + "' must have " + std::to_string(n) +
                                " values, got " + std::to_string(v.size()));
  for (int64_t x : v)
    AMPX_CHECK(positive ? x > 0 : x >= 0,
               std::string("attribute '") + name + "' has invalid value " + std::to_string(x));
  return v;
}

void require_float(const Checker& c, const TensorType& t, const char* what) {
  AMPX_CHECK(is_float(t.dtype), std::string(what) + " must be floating point, got " +
                                    std::string(dtype_name(t.dtype)));
}

void require_same_dtype(const Checker& c, std::span<const TensorType> ins) {
  for (size_t i = 1; i < ins.size(); ++i)
    AMPX_CHECK(ins[i].dtype == ins[0].dtype, "input " + std::to_string(i) + " has dtype " +
                                                 std::string(dtype_name(ins[i].dtype)) +
                                                 " but input 0 has " +
                                                 std::string(dtype_name(ins[0].dtype)));
}

// The fused epilogue of Conv2d, MatMul and Gemm (docs/OPS.md).
void check_activation(const Checker& c, const AttrMap& attrs) {
  const auto act = c.attr([&] { return attr_string(attrs, "activation", "none"); });
  AMPX_CHECK(is_activation_name(act),
             "activation must be one of " + activation_names_list() + ", got '" + act + "'");
}

std::vector<TensorType> infer_pool(const Checker& c, OpType op, const TensorType& x,
                                   const AttrMap& attrs) {
  AMPX_CHECK(x.shape.size() == 4, "input must be 4-D NCHW, got " + shape_str(x.shape));
  auto k = pair_attr(c, attrs, "kernel_shape", {}, 2, true);
  auto s = pair_attr(c, attrs, "strides", {1, 1}, 2, true);
  auto p = pair_attr(c, attrs, "pads", {0, 0, 0, 0}, 4, false);
  const bool ceil = c.attr([&] { return attr_int(attrs, "ceil_mode", 0); }) != 0;
  AMPX_CHECK(p[0] < k[0] && p[2] < k[0] && p[1] < k[1] && p[3] < k[1],
             "pads must be smaller than the kernel");
  const int64_t oh = window_out(x.shape[2], k[0], s[0], p[0], p[2], 1, ceil);
  const int64_t ow = window_out(x.shape[3], k[1], s[1], p[1], p[3], 1, ceil);
  AMPX_CHECK(oh > 0 && ow > 0, "window larger than the padded input " + shape_str(x.shape));
  (void)op;
  return {{x.dtype, {x.shape[0], x.shape[1], oh, ow}}};
}

}  // namespace

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<TensorType> infer_output_types(OpType op, std::span<const TensorType> in,
                                           const AttrMap& attrs, std::string_view node_name) {
  const Checker c(op, node_name);
  const OpSchema& schema = op_schema(op);
  const int n = static_cast<int>(in.size());
  AMPX_CHECK(n >= schema.min_inputs && (schema.max_inputs < 0 || n <= schema.max_inputs),
             "expected " +
                 (schema.min_inputs == schema.max_inputs
                      ? std::to_string(schema.min_inputs)
                      : std::to_string(schema.min_inputs) + ".." +
                            (schema.max_inputs < 0 ? std::string("n")
                                                   : std::to_string(schema.max_inputs))) +
                 " inputs, got " + std::to_string(n));
  for (int i = 0; i < n; ++i) {
    AMPX_CHECK(in[static_cast<size_t>(i)].dtype != DType::kInvalid,
               "input " + std::to_string(i) + " has no dtype");
    for (int64_t d : in[static_cast<size_t>(i)].shape)
      AMPX_CHECK(d >= 0, "input " + std::to_string(i) + " has a negative dimension");
  }
  // Attribute names and kinds against the schema.
  for (const auto& [key, value] : attrs) {
    const auto it = std::find_if(schema.attrs.begin(), schema.attrs.end(),
                                 [&](const AttrSpec& s) { return s.name == key; });
    AMPX_CHECK(it != schema.attrs.end(), "unknown attribute '" + key + "'");
    AMPX_CHECK(attr_kind(value) == it->kind, "attribute '" + key + "' must be " +
                                                 attr_kind_name(it->kind) + ", got " +
                                                 attr_kind_name(attr_kind(value)));
  }
  for (const auto& spec : schema.attrs)
    AMPX_CHECK(!spec.required || attrs.contains(spec.name),
               "missing required attribute '" + std::string(spec.name) + "'");

  const TensorType& x = in[0];
  switch (op) {
    case OpType::kConv2d: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      const auto& w = in[1];
      AMPX_CHECK(x.shape.size() == 4, "input must be 4-D NCHW, got " + shape_str(x.shape));
      AMPX_CHECK(w.shape.size() == 4, "weight must be 4-D, got " + shape_str(w.shape));
      const int64_t g = c.attr([&] { return attr_int(attrs, "group", 1); });
      AMPX_CHECK(g >= 1, "group must be >= 1");
      AMPX_CHECK(x.shape[1] % g == 0 && w.shape[0] % g == 0,
                 "channels must be divisible by group " + std::to_string(g));
      AMPX_CHECK(w.shape[1] * g == x.shape[1],
                 "weight " + shape_str(w.shape) + " does not match input channels " +
                     std::to_string(x.shape[1]) + " with group " + std::to_string(g));
      if (n >= 3)
        AMPX_CHECK(in[2].shape == Shape{w.shape[0]}, "bias must be [" + std::to_string(w.shape[0]) +
                                                         "], got " + shape_str(in[2].shape));
      auto s = pair_attr(c, attrs, "strides", {1, 1}, 2, true);
      auto p = pair_attr(c, attrs, "pads", {0, 0, 0, 0}, 4, false);
      auto d = pair_attr(c, attrs, "dilations", {1, 1}, 2, true);
      const int64_t oh = window_out(x.shape[2], w.shape[2], s[0], p[0], p[2], d[0], false);
      const int64_t ow = window_out(x.shape[3], w.shape[3], s[1], p[1], p[3], d[1], false);
      AMPX_CHECK(oh > 0 && ow > 0, "kernel larger than the padded input");
      check_activation(c, attrs);
      const Shape y{x.shape[0], w.shape[0], oh, ow};
      if (n == 4)  // the fused residual (docs/OPS.md), added before the activation
        AMPX_CHECK(in[3].shape == y,
                   "residual must be " + shape_str(y) + ", got " + shape_str(in[3].shape));
      return {{x.dtype, y}};
    }
    case OpType::kMatMul: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      const auto& a = in[0].shape;
      const auto& b = in[1].shape;
      AMPX_CHECK(a.size() >= 2 && b.size() >= 2,
                 "inputs must have rank >= 2, got " + shape_str(a) + " and " + shape_str(b));
      AMPX_CHECK(a.back() == b[b.size() - 2],
                 "inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
      auto batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
      AMPX_CHECK(batch.has_value(), "batch dimensions of " + shape_str(a) + " and " + shape_str(b) +
                                        " do not broadcast");
      Shape out = *batch;
      out.push_back(a[a.size() - 2]);
      out.push_back(b.back());
      if (n == 3)
        AMPX_CHECK(in[2].shape == Shape{b.back()}, "bias must be [" + std::to_string(b.back()) +
                                                       "], got " + shape_str(in[2].shape));
      check_activation(c, attrs);
      return {{x.dtype, out}};
    }
    case OpType::kGemm: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      AMPX_CHECK(in[0].shape.size() == 2 && in[1].shape.size() == 2, "A and B must be 2-D");
      const bool ta = c.attr([&] { return attr_int(attrs, "transA", 0); }) != 0;
      const bool tb = c.attr([&] { return attr_int(attrs, "transB", 0); }) != 0;
      const int64_t m = ta ? in[0].shape[1] : in[0].shape[0];
      const int64_t k = ta ? in[0].shape[0] : in[0].shape[1];
      const int64_t kb = tb ? in[1].shape[1] : in[1].shape[0];
      const int64_t nn = tb ? in[1].shape[0] : in[1].shape[1];
      AMPX_CHECK(k == kb, "inner dimensions differ: A " + shape_str(in[0].shape) + ", B " +
                              shape_str(in[1].shape));
      if (n == 3) {
        auto bc = broadcast_shapes(in[2].shape, {m, nn});
        AMPX_CHECK((bc && *bc == Shape{m, nn} && in[2].shape.size() <= 2),
                   "C " + shape_str(in[2].shape) + " does not broadcast to [" + std::to_string(m) +
                       "x" + std::to_string(nn) + "]");
      }
      check_activation(c, attrs);
      return {{x.dtype, {m, nn}}};
    }
    case OpType::kBatchNorm: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      AMPX_CHECK(x.shape.size() >= 2, "input must have rank >= 2");
      for (int i = 1; i < 5; ++i)
        AMPX_CHECK(in[static_cast<size_t>(i)].shape == Shape{x.shape[1]},
                   "parameter " + std::to_string(i) + " must be [" + std::to_string(x.shape[1]) +
                       "], got " + shape_str(in[static_cast<size_t>(i)].shape));
      check_activation(c, attrs);
      return {x};
    }
    case OpType::kLayerNorm: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      const auto rank = static_cast<int64_t>(x.shape.size());
      const int64_t axis =
          normalize_axis(c, c.attr([&] { return attr_int(attrs, "axis", -1); }), rank, "axis");
      const Shape norm(x.shape.begin() + axis, x.shape.end());
      for (int i = 1; i < n; ++i)
        AMPX_CHECK(in[static_cast<size_t>(i)].shape == norm,
                   "scale/bias must be " + shape_str(norm) + ", got " +
                       shape_str(in[static_cast<size_t>(i)].shape));
      return {x};
    }
    case OpType::kSoftmax: {
      require_float(c, x, "input");
      normalize_axis(c, c.attr([&] { return attr_int(attrs, "axis", -1); }),
                     static_cast<int64_t>(x.shape.size()), "axis");
      return {x};
    }
    case OpType::kClip: {
      require_float(c, x, "input");
      const double lo = c.attr(
          [&] { return attr_float(attrs, "min", -std::numeric_limits<double>::infinity()); });
      const double hi =
          c.attr([&] { return attr_float(attrs, "max", std::numeric_limits<double>::infinity()); });
      AMPX_CHECK(lo <= hi, "min must not exceed max");
      return {x};
    }
    case OpType::kGelu: {
      require_float(c, x, "input");
      const auto mode = c.attr([&] { return attr_string(attrs, "approximate", "none"); });
      AMPX_CHECK(mode == "none" || mode == "tanh",
                 "approximate must be 'none' or 'tanh', got '" + mode + "'");
      return {x};
    }
    case OpType::kRelu:
    case OpType::kSigmoid:
    case OpType::kTanh:
    case OpType::kDropout:
      require_float(c, x, "input");
      return {x};
    case OpType::kAdd:
    case OpType::kSub:
    case OpType::kMul:
    case OpType::kDiv: {
      require_same_dtype(c, in);
      auto s = broadcast_shapes(in[0].shape, in[1].shape);
      AMPX_CHECK(s.has_value(), "shapes " + shape_str(in[0].shape) + " and " +
                                    shape_str(in[1].shape) + " do not broadcast");
      return {{x.dtype, *s}};
    }
    case OpType::kMaxPool:
    case OpType::kAveragePool:
      require_float(c, x, "input");
      return infer_pool(c, op, x, attrs);
    case OpType::kGlobalAveragePool:
      require_float(c, x, "input");
      AMPX_CHECK(x.shape.size() == 4, "input must be 4-D NCHW, got " + shape_str(x.shape));
      return {{x.dtype, {x.shape[0], x.shape[1], 1, 1}}};
    case OpType::kReduceMean:
    case OpType::kReduceSum:
    case OpType::kReduceMax: {
      require_float(c, x, "input");
      const auto rank = static_cast<int64_t>(x.shape.size());
      auto axes = c.attr([&] { return attr_ints(attrs, "axes"); });
      const bool keep = c.attr([&] { return attr_int(attrs, "keepdims", 1); }) != 0;
      std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
      for (int64_t a : axes) {
        const auto na = static_cast<size_t>(normalize_axis(c, a, rank, "axis"));
        AMPX_CHECK(!reduced[na], "axis " + std::to_string(a) + " listed twice");
        reduced[na] = true;
      }
      Shape out;
      for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
        // A max has no value over nothing; a sum or mean has (0 or NaN).
        AMPX_CHECK(op != OpType::kReduceMax || !reduced[i] || x.shape[i] > 0,
                   "max over an empty axis");
        if (!reduced[i])
          out.push_back(x.shape[i]);
        else if (keep)
          out.push_back(1);
      }
      return {{x.dtype, out}};
    }
    case OpType::kReshape: {
      auto target = c.attr([&] { return attr_ints(attrs, "shape"); });
      Shape out;
      int infer_at = -1;
      int64_t known = 1;
      for (size_t i = 0; i < target.size(); ++i) {
        int64_t d = target[i];
        if (d == 0) {
          AMPX_CHECK(i < x.shape.size(), "shape[" + std::to_string(i) + "] = 0 has no input dim");
          d = x.shape[i];
        } else if (d == -1) {
          AMPX_CHECK(infer_at < 0, "more than one -1 in shape");
          infer_at = static_cast<int>(i);
          out.push_back(1);
          continue;
        }
        AMPX_CHECK(d >= 0, "invalid dimension " + std::to_string(d) + " in shape");
        out.push_back(d);
        known *= d;
      }
      const int64_t total = element_count(x.shape);
      if (infer_at >= 0) {
        AMPX_CHECK(known > 0 && total % known == 0, "cannot infer -1: " + std::to_string(total) +
                                                        " elements into " + shape_str(target));
        out[static_cast<size_t>(infer_at)] = total / known;
      }
      AMPX_CHECK(element_count(out) == total, "cannot reshape " + shape_str(x.shape) + " (" +
                                                  std::to_string(total) + " elements) to " +
                                                  shape_str(out));
      return {{x.dtype, out}};
    }
    case OpType::kFlatten: {
      const auto rank = static_cast<int64_t>(x.shape.size());
      int64_t axis = c.attr([&] { return attr_int(attrs, "axis", 1); });
      if (axis < 0) axis += rank;
      AMPX_CHECK(axis >= 0 && axis <= rank, "axis out of range for rank " + std::to_string(rank));
      int64_t a = 1, b = 1;
      for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= x.shape[static_cast<size_t>(i)];
      return {{x.dtype, {a, b}}};
    }
    case OpType::kTranspose: {
      const size_t rank = x.shape.size();
      std::vector<int64_t> def(rank);
      std::iota(def.rbegin(), def.rend(), 0);
      auto perm = c.attr([&] { return attr_ints(attrs, "perm", def); });
      AMPX_CHECK(perm.size() == rank, "perm must have " + std::to_string(rank) + " entries");
      std::vector<bool> seen(rank, false);
      Shape out;
      for (int64_t p : perm) {
        AMPX_CHECK(p >= 0 && static_cast<size_t>(p) < rank && !seen[static_cast<size_t>(p)],
                   "perm is not a permutation");
        seen[static_cast<size_t>(p)] = true;
        out.push_back(x.shape[static_cast<size_t>(p)]);
      }
      return {{x.dtype, out}};
    }
    case OpType::kConcat: {
      require_same_dtype(c, in);
      const auto rank = static_cast<int64_t>(x.shape.size());
      const auto axis = static_cast<size_t>(
          normalize_axis(c, c.attr([&] { return attr_int(attrs, "axis", 0); }), rank, "axis"));
      Shape out = x.shape;
      for (int i = 1; i < n; ++i) {
        const auto& s = in[static_cast<size_t>(i)].shape;
        AMPX_CHECK(s.size() == x.shape.size(), "inputs differ in rank");
        for (size_t d = 0; d < s.size(); ++d)
          if (d != axis)
            AMPX_CHECK(s[d] == x.shape[d], "input " + std::to_string(i) + " " + shape_str(s) +
                                               " differs from " + shape_str(x.shape) +
                                               " outside the axis");
        out[axis] += s[axis];
      }
      return {{x.dtype, out}};
    }
    case OpType::kSlice: {
      const auto rank = static_cast<int64_t>(x.shape.size());
      auto starts = c.attr([&] { return attr_ints(attrs, "starts"); });
      auto ends = c.attr([&] { return attr_ints(attrs, "ends"); });
      std::vector<int64_t> def_axes(starts.size());
      std::iota(def_axes.begin(), def_axes.end(), 0);
      auto axes = c.attr([&] { return attr_ints(attrs, "axes", def_axes); });
      auto steps =
          c.attr([&] { return attr_ints(attrs, "steps", std::vector<int64_t>(starts.size(), 1)); });
      AMPX_CHECK(starts.size() == ends.size() && axes.size() == starts.size() &&
                     steps.size() == starts.size(),
                 "starts, ends, axes and steps must have the same length");
      Shape out = x.shape;
      std::vector<bool> seen(static_cast<size_t>(rank), false);
      for (size_t i = 0; i < starts.size(); ++i) {
        const auto a = static_cast<size_t>(normalize_axis(c, axes[i], rank, "axis"));
        AMPX_CHECK(!seen[a], "axis listed twice");
        seen[a] = true;
        const int64_t dim = x.shape[a];
        const int64_t step = steps[i];
        AMPX_CHECK(step != 0, "step must not be 0");
        auto clampi = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v, lo, hi); };
        int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
        int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
        if (step > 0) {
          s = clampi(s, 0, dim);
          e = clampi(e, 0, dim);
          out[a] = e > s ? (e - s + step - 1) / step : 0;
        } else {
          s = clampi(s, -1, dim - 1);
          e = clampi(e, -1, dim - 1);
          out[a] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
        }
      }
      return {{x.dtype, out}};
    }
    case OpType::kGather: {
      AMPX_CHECK(in[1].dtype == DType::kI64 || in[1].dtype == DType::kI32,
                 "indices must be i64 or i32, got " + std::string(dtype_name(in[1].dtype)));
      const auto rank = static_cast<int64_t>(x.shape.size());
      const auto axis = static_cast<size_t>(
          normalize_axis(c, c.attr([&] { return attr_int(attrs, "axis", 0); }), rank, "axis"));
      Shape out(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(axis));
      out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
      out.insert(out.end(), x.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape.end());
      return {{x.dtype, out}};
    }
    case OpType::kCast: {
      const int64_t to = c.attr([&] { return attr_int(attrs, "to", 0); });
      const auto t = static_cast<DType>(to);
      AMPX_CHECK(dtype_size(t) != 0, "attribute 'to' = " + std::to_string(to) + " is not a dtype");
      return {{t, x.shape}};
    }
    case OpType::kConvTranspose: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      const auto& w = in[1];
      AMPX_CHECK(x.shape.size() == 4, "input must be 4-D NCHW, got " + shape_str(x.shape));
      AMPX_CHECK(w.shape.size() == 4, "weight must be 4-D, got " + shape_str(w.shape));
      const int64_t g = c.attr([&] { return attr_int(attrs, "group", 1); });
      AMPX_CHECK(g >= 1, "group must be >= 1");
      AMPX_CHECK(w.shape[0] == x.shape[1] && x.shape[1] % g == 0,
                 "weight " + shape_str(w.shape) + " does not match input channels " +
                     std::to_string(x.shape[1]) + " with group " + std::to_string(g));
      const int64_t m = w.shape[1] * g;
      if (n == 3)
        AMPX_CHECK(in[2].shape == Shape{m},
                   "bias must be [" + std::to_string(m) + "], got " + shape_str(in[2].shape));
      auto s = pair_attr(c, attrs, "strides", {1, 1}, 2, true);
      auto p = pair_attr(c, attrs, "pads", {0, 0, 0, 0}, 4, false);
      auto d = pair_attr(c, attrs, "dilations", {1, 1}, 2, true);
      auto op = pair_attr(c, attrs, "output_padding", {0, 0}, 2, false);
      Shape out{x.shape[0], m, 0, 0};
      for (size_t i = 0; i < 2; ++i) {
        AMPX_CHECK(op[i] < s[i] || op[i] < d[i],
                   "output_padding must be smaller than the stride or the dilation");
        out[2 + i] =
            s[i] * (x.shape[2 + i] - 1) + op[i] + (w.shape[2 + i] - 1) * d[i] + 1 - p[i] - p[i + 2];
        AMPX_CHECK(out[2 + i] > 0, "pads leave an empty output");
      }
      return {{x.dtype, out}};
    }
    case OpType::kLeakyRelu:
    case OpType::kHardSigmoid:
    case OpType::kHardSwish:
    case OpType::kErf:
    case OpType::kSqrt:
    case OpType::kReciprocal:
    case OpType::kExp:
    case OpType::kLog:
      require_float(c, x, "input");
      return {x};
    case OpType::kNeg:
      AMPX_CHECK(is_float(x.dtype) || x.dtype == DType::kI64 || x.dtype == DType::kI32,
                 "input must be a float, i64 or i32, got " + std::string(dtype_name(x.dtype)));
      return {x};
    case OpType::kPRelu: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      auto s = broadcast_shapes(x.shape, in[1].shape);
      AMPX_CHECK(s && *s == x.shape, "slope " + shape_str(in[1].shape) +
                                         " does not broadcast to the input " + shape_str(x.shape));
      return {x};
    }
    case OpType::kPow: {
      require_same_dtype(c, in);
      require_float(c, x, "input");
      auto s = broadcast_shapes(in[0].shape, in[1].shape);
      AMPX_CHECK(s.has_value(), "shapes " + shape_str(in[0].shape) + " and " +
                                    shape_str(in[1].shape) + " do not broadcast");
      return {{x.dtype, *s}};
    }
    case OpType::kEqual: {
      require_same_dtype(c, in);
      auto s = broadcast_shapes(in[0].shape, in[1].shape);
      AMPX_CHECK(s.has_value(), "shapes " + shape_str(in[0].shape) + " and " +
                                    shape_str(in[1].shape) + " do not broadcast");
      return {{DType::kBool, *s}};
    }
    case OpType::kWhere: {
      AMPX_CHECK(x.dtype == DType::kBool,
                 "condition must be bool, got " + std::string(dtype_name(x.dtype)));
      AMPX_CHECK(in[1].dtype == in[2].dtype, "X is " + std::string(dtype_name(in[1].dtype)) +
                                                 " but Y is " +
                                                 std::string(dtype_name(in[2].dtype)));
      auto s = broadcast_shapes(in[0].shape, in[1].shape);
      if (s) s = broadcast_shapes(*s, in[2].shape);
      AMPX_CHECK(s.has_value(), "shapes " + shape_str(in[0].shape) + ", " + shape_str(in[1].shape) +
                                    " and " + shape_str(in[2].shape) + " do not broadcast");
      return {{in[1].dtype, *s}};
    }
    case OpType::kLogSoftmax: {
      require_float(c, x, "input");
      normalize_axis(c, c.attr([&] { return attr_int(attrs, "axis", -1); }),
                     static_cast<int64_t>(x.shape.size()), "axis");
      return {x};
    }
    case OpType::kArgMax: {
      require_float(c, x, "input");
      const auto rank = static_cast<int64_t>(x.shape.size());
      const auto axis = static_cast<size_t>(
          normalize_axis(c, c.attr([&] { return attr_int(attrs, "axis", 0); }), rank, "axis"));
      const bool keep = c.attr([&] { return attr_int(attrs, "keepdims", 1); }) != 0;
      (void)c.attr([&] { return attr_int(attrs, "select_last_index", 0); });
      AMPX_CHECK(x.shape[axis] > 0, "argmax over an empty axis");
      Shape out = x.shape;
      if (keep)
        out[axis] = 1;
      else
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
      return {{DType::kI64, out}};
    }
    case OpType::kSplit: {
      const auto rank = static_cast<int64_t>(x.shape.size());
      const auto axis = static_cast<size_t>(
          normalize_axis(c, c.attr([&] { return attr_int(attrs, "axis", 0); }), rank, "axis"));
      auto split = c.attr([&] { return attr_ints(attrs, "split"); });
      AMPX_CHECK(!split.empty(), "split must not be empty");
      int64_t total = 0;
      std::vector<TensorType> outs;
      for (int64_t v : split) {
        AMPX_CHECK(v >= 0, "split has a negative size " + std::to_string(v));
        total += v;
        TensorType t = x;
        t.shape[axis] = v;
        outs.push_back(std::move(t));
      }
      AMPX_CHECK(total == x.shape[axis], "split sizes sum to " + std::to_string(total) +
                                             ", the axis has " + std::to_string(x.shape[axis]));
      return outs;
    }
    case OpType::kExpand: {
      auto shape = c.attr([&] { return attr_ints(attrs, "shape"); });
      for (int64_t d : shape) AMPX_CHECK(d >= 0, "shape has a negative dimension");
      auto s = broadcast_shapes(x.shape, shape);
      AMPX_CHECK(s.has_value(), "input " + shape_str(x.shape) + " does not broadcast with shape " +
                                    shape_str(shape));
      return {{x.dtype, *s}};
    }
    case OpType::kPad: {
      const size_t rank = x.shape.size();
      auto pads = c.attr([&] { return attr_ints(attrs, "pads"); });
      AMPX_CHECK(pads.size() == 2 * rank, "pads must have " + std::to_string(2 * rank) +
                                              " values, got " + std::to_string(pads.size()));
      const auto mode = c.attr([&] { return attr_string(attrs, "mode", "constant"); });
      AMPX_CHECK(mode == "constant" || mode == "reflect" || mode == "edge",
                 "mode must be 'constant', 'reflect' or 'edge', got '" + mode + "'");
      (void)c.attr([&] { return attr_float(attrs, "value", 0.0); });
      Shape out = x.shape;
      for (size_t i = 0; i < rank; ++i) {
        out[i] += pads[i] + pads[i + rank];
        AMPX_CHECK(out[i] >= 0, "pads make dimension " + std::to_string(i) + " negative");
        if (mode == "reflect" && (pads[i] > 0 || pads[i + rank] > 0))
          AMPX_CHECK(pads[i] < x.shape[i] && pads[i + rank] < x.shape[i],
                     "reflect pads must be smaller than the dimension");
        if (mode == "edge" && (pads[i] > 0 || pads[i + rank] > 0))
          AMPX_CHECK(x.shape[i] > 0, "edge padding of an empty dimension");
      }
      return {{x.dtype, out}};
    }
    case OpType::kResize: {
      require_float(c, x, "input");
      auto sizes = c.attr([&] { return attr_ints(attrs, "sizes"); });
      AMPX_CHECK(sizes.size() == x.shape.size(),
                 "sizes must have " + std::to_string(x.shape.size()) + " values");
      for (int64_t d : sizes) AMPX_CHECK(d > 0, "sizes must be positive");
      const auto mode = c.attr([&] { return attr_string(attrs, "mode", "nearest"); });
      AMPX_CHECK(mode == "nearest" || mode == "linear",
                 "mode must be 'nearest' or 'linear', got '" + mode + "'");
      const auto ctm = c.attr(
          [&] { return attr_string(attrs, "coordinate_transformation_mode", "half_pixel"); });
      AMPX_CHECK(ctm == "half_pixel" || ctm == "asymmetric" || ctm == "align_corners" ||
                     ctm == "pytorch_half_pixel",
                 "unsupported coordinate_transformation_mode '" + ctm + "'");
      const auto nm =
          c.attr([&] { return attr_string(attrs, "nearest_mode", "round_prefer_floor"); });
      AMPX_CHECK(
          nm == "round_prefer_floor" || nm == "round_prefer_ceil" || nm == "floor" || nm == "ceil",
          "unsupported nearest_mode '" + nm + "'");
      for (size_t i = 0; i < x.shape.size(); ++i) {
        const bool spatial = x.shape.size() >= 2 && i + 2 >= x.shape.size();
        AMPX_CHECK(spatial || sizes[i] == x.shape[i],
                   "only the last two dimensions may be resized");
        AMPX_CHECK(!spatial || x.shape[i] > 0, "cannot resize an empty dimension");
      }
      if (mode == "linear") AMPX_CHECK(x.shape.size() == 4, "linear mode needs a 4-D NCHW input");
      return {{x.dtype, Shape(sizes.begin(), sizes.end())}};
    }
  }
  c.fail("no shape inference");
}

}  // namespace ampx
