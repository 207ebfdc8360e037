// Output types of the data-movement ops and Cast.
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "infer_common.hpp"

namespace ampx::opset::detail {

namespace {

// a + b; nullopt when it overflows int64 (Pad's and Concat's sizes, Split's
// total: attribute values are untrusted).
std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

}  // namespace

Outputs infer_data(const Node& c, std::string_view op) {
  const auto& in = c.in;
  const int n = c.n;
  const TensorSpec& x = in[0];
  if (op == "Reshape") {
    auto target = c.v.get_ints("shape");
    Dims out;
    int infer_at = -1;
    for (size_t i = 0; i < target.size(); ++i) {
      int64_t d = target[i];
      if (d == 0) {
        AMPX_CHECK(i < x.dims.size(), "shape[" + std::to_string(i) + "] = 0 has no input dim");
        d = x.dims[i];
      } else if (d == -1) {
        AMPX_CHECK(infer_at < 0, "more than one -1 in shape");
        infer_at = static_cast<int>(i);
        out.push_back(1);
        continue;
      }
      AMPX_CHECK(d >= 0, "invalid dimension " + std::to_string(d) + " in shape");
      out.push_back(d);
    }
    const int64_t total = checked_count(c, x.dims);
    const int64_t known = checked_count(c, out);  // the -1 counts as 1
    if (infer_at >= 0) {
      AMPX_CHECK(known > 0 && total % known == 0, "cannot infer -1: " + std::to_string(total) +
                                                      " elements into " + dims_str(target));
      out[static_cast<size_t>(infer_at)] = total / known;
    }
    AMPX_CHECK(checked_count(c, out) == total, "cannot reshape " + dims_str(x.dims) + " (" +
                                                   std::to_string(total) + " elements) to " +
                                                   dims_str(out));
    return std::vector<TensorSpec>{{x.dtype, out}};
  }
  if (op == "Flatten") {
    const auto rank = static_cast<int64_t>(x.dims.size());
    int64_t axis = c.v.get_int("axis", 1);
    if (axis < 0) axis += rank;
    AMPX_CHECK(axis >= 0 && axis <= rank, "axis out of range for rank " + std::to_string(rank));
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= x.dims[static_cast<size_t>(i)];
    return std::vector<TensorSpec>{{x.dtype, {a, b}}};
  }
  if (op == "Transpose") {
    const size_t rank = x.dims.size();
    std::vector<int64_t> def(rank);
    std::iota(def.rbegin(), def.rend(), 0);
    auto perm = c.v.get_ints("perm", def);
    AMPX_CHECK(perm.size() == rank, "perm must have " + std::to_string(rank) + " entries");
    std::vector<bool> seen(rank, false);
    Dims out;
    for (int64_t p : perm) {
      AMPX_CHECK(p >= 0 && static_cast<size_t>(p) < rank && !seen[static_cast<size_t>(p)],
                 "perm is not a permutation");
      seen[static_cast<size_t>(p)] = true;
      out.push_back(x.dims[static_cast<size_t>(p)]);
    }
    return std::vector<TensorSpec>{{x.dtype, out}};
  }
  if (op == "Concat") {
    require_same_dtype(c, in);
    const auto rank = static_cast<int64_t>(x.dims.size());
    const auto axis = static_cast<size_t>(normalize_axis(c, c.v.get_int("axis", 0), rank, "axis"));
    Dims out = x.dims;
    for (int i = 1; i < n; ++i) {
      const auto& s = in[static_cast<size_t>(i)].dims;
      AMPX_CHECK(s.size() == x.dims.size(), "inputs differ in rank");
      for (size_t d = 0; d < s.size(); ++d)
        if (d != axis)
          AMPX_CHECK(s[d] == x.dims[d], "input " + std::to_string(i) + " " + dims_str(s) +
                                            " differs from " + dims_str(x.dims) +
                                            " outside the axis");
      const auto sum = checked_add(out[axis], s[axis]);
      AMPX_CHECK(sum.has_value(), "the output's axis size overflows int64");
      out[axis] = *sum;
    }
    return std::vector<TensorSpec>{{x.dtype, out}};
  }
  if (op == "Slice") return std::vector<TensorSpec>{{x.dtype, slice_output(c, x.dims)}};
  if (op == "Gather") return std::vector<TensorSpec>{{x.dtype, gather_output(c, x.dims, in[1])}};
  if (op == "Cast") {
    const int64_t to = c.v.get_int("to", 0);
    // Range-check before the conversion: an enum cannot hold any int64.
    const bool known =
        to > 0 && to < 64 && plugin_support::dtype_size(static_cast<ampx_dtype>(to)) != 0;
    AMPX_CHECK(known, "attribute 'to' = " + std::to_string(to) + " is not a dtype");
    const auto t = static_cast<ampx_dtype>(to);
    return std::vector<TensorSpec>{{t, x.dims}};
  }
  if (op == "BitCast") {  // the same bits as another type of the same width
    const int64_t to = c.v.get_int("to", 0);
    const bool known =
        to > 0 && to < 64 && plugin_support::dtype_size(static_cast<ampx_dtype>(to)) != 0;
    AMPX_CHECK(known, "attribute 'to' = " + std::to_string(to) + " is not a dtype");
    const auto t = static_cast<ampx_dtype>(to);
    AMPX_CHECK(plugin_support::dtype_size(t) == plugin_support::dtype_size(x.dtype),
               std::string("attribute 'to' = ") + dtype_name(t) + " has another width than the " +
                   dtype_name(x.dtype) + " input");
    return std::vector<TensorSpec>{{t, x.dims}};
  }
  if (op == "Split") {
    const auto rank = static_cast<int64_t>(x.dims.size());
    const auto axis = static_cast<size_t>(normalize_axis(c, c.v.get_int("axis", 0), rank, "axis"));
    auto split = c.v.get_ints("split");
    AMPX_CHECK(!split.empty(), "split must not be empty");
    int64_t total = 0;
    std::vector<TensorSpec> outs;
    for (int64_t v : split) {
      AMPX_CHECK(v >= 0, "split has a negative size " + std::to_string(v));
      const auto sum = checked_add(total, v);
      AMPX_CHECK(sum.has_value() && *sum <= x.dims[axis],
                 "split sizes sum to more than the axis' " + std::to_string(x.dims[axis]));
      total = *sum;
      TensorSpec t = x;
      t.dims[axis] = v;
      outs.push_back(std::move(t));
    }
    AMPX_CHECK(total == x.dims[axis], "split sizes sum to " + std::to_string(total) +
                                          ", the axis has " + std::to_string(x.dims[axis]));
    return outs;
  }
  if (op == "Expand") {
    auto shape = c.v.get_ints("shape");
    for (int64_t d : shape) AMPX_CHECK(d >= 0, "shape has a negative dimension");
    auto s = broadcast_shapes(x.dims, shape);
    AMPX_CHECK(s.has_value(),
               "input " + dims_str(x.dims) + " does not broadcast with shape " + dims_str(shape));
    return std::vector<TensorSpec>{{x.dtype, *s}};
  }
  if (op == "Pad") {
    const size_t rank = x.dims.size();
    auto pads = c.v.get_ints("pads");
    AMPX_CHECK(pads.size() == 2 * rank, "pads must have " + std::to_string(2 * rank) +
                                            " values, got " + std::to_string(pads.size()));
    const auto mode = c.v.get_string("mode", "constant");
    AMPX_CHECK(mode == "constant" || mode == "reflect" || mode == "edge",
               "mode must be 'constant', 'reflect' or 'edge', got '" + mode + "'");
    (void)c.v.get_float("value", 0.0);
    Dims out = x.dims;
    for (size_t i = 0; i < rank; ++i) {
      const auto lo = checked_add(x.dims[i], pads[i]);
      const auto sum = lo ? checked_add(*lo, pads[i + rank]) : std::nullopt;
      AMPX_CHECK(sum.has_value(), "pads make dimension " + std::to_string(i) + " overflow int64");
      out[i] = *sum;
      AMPX_CHECK(out[i] >= 0, "pads make dimension " + std::to_string(i) + " negative");
      if (mode == "reflect" && (pads[i] > 0 || pads[i + rank] > 0))
        AMPX_CHECK(pads[i] < x.dims[i] && pads[i + rank] < x.dims[i],
                   "reflect pads must be smaller than the dimension");
      if (mode == "edge" && (pads[i] > 0 || pads[i + rank] > 0))
        AMPX_CHECK(x.dims[i] > 0, "edge padding of an empty dimension");
    }
    return std::vector<TensorSpec>{{x.dtype, out}};
  }
  return std::nullopt;
}

}  // namespace ampx::opset::detail
