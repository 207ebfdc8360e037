#include <algorithm>
#include <climits>
#include <numeric>

#include "infer_common.hpp"

#include "ampx/opset/activation.hpp"

namespace ampx::opset::detail {

Node::Node(const NodeView& view) : v(view) {
  for (size_t i = 0; i < v.num_inputs(); ++i) {
    const ampx_tensor_desc& t = v.input(i);
    in.push_back({t.dtype, Dims(t.dims, t.dims + t.rank)});
  }
  n = static_cast<int>(in.size());
}

int64_t normalize_axis(const Node& c, int64_t axis, int64_t rank, const char* what) {
  const int64_t a = axis < 0 && axis >= -rank ? axis + rank : axis;
  AMPX_CHECK(a >= 0 && a < rank, std::string(what) + " " + std::to_string(axis) +
                                     " is out of range for rank " + std::to_string(rank));
  return a;
}

Dims pair_attr(const Node& c, const char* name, Dims def, size_t n, bool positive) {
  Dims v = c.v.get_ints(name, std::move(def));
  AMPX_CHECK(v.size() == n, std::string("attribute '") + name + "' must have " + std::to_string(n) +
                                " values, got " + std::to_string(v.size()));
  for (int64_t x : v)
    AMPX_CHECK(positive ? x > 0 : x >= 0,
               std::string("attribute '") + name + "' has invalid value " + std::to_string(x));
  return v;
}

bool flag_attr(const Node& c, const char* name) {
  const int64_t v = c.v.get_int(name, 0);
  AMPX_CHECK(v == 0 || v == 1,
             std::string("attribute '") + name + "' must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

void check_epsilon(const Node& c) {
  const double eps = c.v.get_float("epsilon", 1e-5);
  AMPX_CHECK(eps >= 0, "attribute 'epsilon' must be >= 0, got " + std::to_string(eps));
}

void require_float(const Node& c, const TensorSpec& t, const char* what) {
  AMPX_CHECK(is_float_dtype(t.dtype),
             std::string(what) + " must be floating point, got " + dtype_name(t.dtype));
}

void require_same_dtype(const Node& c, std::span<const TensorSpec> ins) {
  for (size_t i = 1; i < ins.size(); ++i)
    AMPX_CHECK(ins[i].dtype == ins[0].dtype, "input " + std::to_string(i) + " has dtype " +
                                                 dtype_name(ins[i].dtype) + " but input 0 has " +
                                                 dtype_name(ins[0].dtype));
}

void check_activation(const Node& c) {
  const std::string act = c.v.get_string("activation", "none");
  // A name outside the op set is one this op set has no kernel for (a newer
  // host's epilogue): unsupported, so the node falls back, not malformed.
  if (!is_activation_name(act))
    throw UnsupportedNode(c.v.where() + ": activation '" + act + "' is not one of " +
                          activation_names_list());
}

int64_t checked_count(const Node& c, const Dims& dims) {
  try {
    return plugin_support::element_count(dims.data(), static_cast<int32_t>(dims.size()));
  } catch (const std::invalid_argument& e) {
    c.fail(e.what());
  }
}

Dims slice_output(const Node& c, const Dims& x) {
  const auto rank = static_cast<int64_t>(x.size());
  auto starts = c.v.get_ints("starts");
  auto ends = c.v.get_ints("ends");
  std::vector<int64_t> def_axes(starts.size());
  std::iota(def_axes.begin(), def_axes.end(), 0);
  auto axes = c.v.get_ints("axes", def_axes);
  auto steps = c.v.get_ints("steps", std::vector<int64_t>(starts.size(), 1));
  AMPX_CHECK(
      starts.size() == ends.size() && axes.size() == starts.size() && steps.size() == starts.size(),
      "starts, ends, axes and steps must have the same length");
  Dims out = x;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < starts.size(); ++i) {
    const auto a = static_cast<size_t>(normalize_axis(c, axes[i], rank, "axis"));
    AMPX_CHECK(!seen[a], "axis listed twice");
    seen[a] = true;
    AMPX_CHECK(steps[i] != 0, "step must not be 0");
    out[a] = slice_axis(starts[i], ends[i], steps[i], x[a]).length;
  }
  return out;
}

Dims gather_output(const Node& c, const Dims& data, const TensorSpec& indices) {
  AMPX_CHECK(indices.dtype == AMPX_DTYPE_I64 || indices.dtype == AMPX_DTYPE_I32,
             "indices must be i64 or i32, got " + std::string(dtype_name(indices.dtype)));
  const auto rank = static_cast<int64_t>(data.size());
  const auto axis = static_cast<size_t>(normalize_axis(c, c.v.get_int("axis", 0), rank, "axis"));
  Dims out(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.end(), indices.dims.begin(), indices.dims.end());
  out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(axis) + 1, data.end());
  return out;
}

Dims pool_output(const Node& c, const Dims& x) {
  AMPX_CHECK(x.size() == 4, "input must be 4-D NCHW, got " + dims_str(x));
  auto k = pair_attr(c, "kernel_shape", {}, 2, true);
  auto s = pair_attr(c, "strides", {1, 1}, 2, true);
  auto p = pair_attr(c, "pads", {0, 0, 0, 0}, 4, false);
  const bool ceil = flag_attr(c, "ceil_mode");
  if (c.v.has_attr("count_include_pad")) (void)flag_attr(c, "count_include_pad");
  // MaxPool/AveragePool's (the gradients' catalogue entries have none).
  auto d = pair_attr(c, "dilations", {1, 1}, 2, true);
  // The dilated window's extent; a pad as wide leaves a window of padding only.
  auto extent = [](int64_t kk, int64_t dd) {
    return static_cast<int64_t>(std::min<__int128>((__int128{kk} - 1) * dd + 1, INT64_MAX));
  };
  const int64_t eh = extent(k[0], d[0]), ew = extent(k[1], d[1]);
  AMPX_CHECK(p[0] < eh && p[2] < eh && p[1] < ew && p[3] < ew,
             "pads must be smaller than the kernel (its dilated extent)");
  const int64_t oh = window_out(x[2], k[0], s[0], p[0], p[2], d[0], ceil);
  const int64_t ow = window_out(x[3], k[1], s[1], p[1], p[3], d[1], ceil);
  AMPX_CHECK(oh > 0 && ow > 0, "window larger than the padded input " + dims_str(x));
  return {x[0], x[1], oh, ow};
}

}  // namespace ampx::opset::detail
