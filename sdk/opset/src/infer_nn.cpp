// Output types of normalisation, softmax, pooling, reductions, ArgMax and Resize.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "infer_common.hpp"

namespace ampx::opset::detail {
namespace {

// `keepdims` (INT, default 1): 0 or 1, as the reference kernels require.
bool keepdims_attr(const Node& c) {
  const int64_t keep = c.v.get_int("keepdims", 1);
  AMPX_CHECK(keep == 0 || keep == 1,
             "attribute 'keepdims' must be 0 or 1, got " + std::to_string(keep));
  return keep == 1;
}

}  // namespace

Outputs infer_nn(const Node& c, std::string_view op) {
  const auto& in = c.in;
  const int n = c.n;
  const TensorSpec& x = in[0];
  if (op == "BatchNorm") {
    check_epsilon(c);
    require_same_dtype(c, in);
    require_float(c, x, "input");
    AMPX_CHECK(x.dims.size() >= 2, "input must have rank >= 2");
    for (int i = 1; i < 5; ++i)
      AMPX_CHECK(in[static_cast<size_t>(i)].dims == Dims{x.dims[1]},
                 "parameter " + std::to_string(i) + " must be [" + std::to_string(x.dims[1]) +
                     "], got " + dims_str(in[static_cast<size_t>(i)].dims));
    check_activation(c);
    return std::vector<TensorSpec>{x};
  }
  if (op == "LayerNorm") {
    check_epsilon(c);
    require_same_dtype(c, in);
    require_float(c, x, "input");
    const auto rank = static_cast<int64_t>(x.dims.size());
    const int64_t axis = normalize_axis(c, c.v.get_int("axis", -1), rank, "axis");
    const Dims norm(x.dims.begin() + axis, x.dims.end());
    for (int i = 1; i < n; ++i)
      AMPX_CHECK(in[static_cast<size_t>(i)].dims == norm,
                 "scale/bias must be " + dims_str(norm) + ", got " +
                     dims_str(in[static_cast<size_t>(i)].dims));
    return std::vector<TensorSpec>{x};
  }
  if (op == "RMSNorm") {  // LayerNorm without the mean and the bias
    check_epsilon(c);
    require_same_dtype(c, in);
    require_float(c, x, "input");
    AMPX_CHECK(!x.dims.empty(), "input is a scalar; RMSNorm needs rank >= 1");
    const auto rank = static_cast<int64_t>(x.dims.size());
    const int64_t axis = normalize_axis(c, c.v.get_int("axis", -1), rank, "axis");
    const Dims norm(x.dims.begin() + axis, x.dims.end());
    AMPX_CHECK(in[1].dims == norm,
               "scale must be " + dims_str(norm) + ", got " + dims_str(in[1].dims));
    return std::vector<TensorSpec>{x};
  }
  if (op == "Softmax") {
    require_float(c, x, "input");
    normalize_axis(c, c.v.get_int("axis", -1), static_cast<int64_t>(x.dims.size()), "axis");
    return std::vector<TensorSpec>{x};
  }
  if (op == "MaxPool" || op == "AveragePool") {
    require_float(c, x, "input");
    return std::vector<TensorSpec>{{x.dtype, pool_output(c, x.dims)}};
  }
  if (op == "MaxPoolIndices") {
    require_float(c, x, "input");
    (void)flag_attr(c, "storage_order");
    return std::vector<TensorSpec>{{AMPX_DTYPE_I64, pool_output(c, x.dims)}};
  }
  if (op == "GlobalAveragePool") {
    require_float(c, x, "input");
    AMPX_CHECK(x.dims.size() == 4, "input must be 4-D NCHW, got " + dims_str(x.dims));
    return std::vector<TensorSpec>{{x.dtype, {x.dims[0], x.dims[1], 1, 1}}};
  }
  if (op == "ReduceMean" || op == "ReduceSum" || op == "ReduceMax" || op == "ReduceMin" ||
      op == "ReduceProd" || op == "ReduceL2" || op == "ReduceSumSquare" ||
      op == "ReduceLogSumExp") {
    require_float(c, x, "input");
    const auto rank = static_cast<int64_t>(x.dims.size());
    auto axes = c.v.get_ints("axes");
    const bool keep = keepdims_attr(c);
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
    for (int64_t a : axes) {
      const auto na = static_cast<size_t>(normalize_axis(c, a, rank, "axis"));
      AMPX_CHECK(!reduced[na], "axis " + std::to_string(a) + " listed twice");
      reduced[na] = true;
    }
    Dims out;
    for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
      // A max or min has no value over nothing; the others have (a sum 0,
      // a mean NaN, a product 1, a log-sum-exp -inf).
      AMPX_CHECK((op != "ReduceMax" && op != "ReduceMin") || !reduced[i] || x.dims[i] > 0,
                 op == "ReduceMax" ? "max over an empty axis" : "min over an empty axis");
      if (!reduced[i])
        out.push_back(x.dims[i]);
      else if (keep)
        out.push_back(1);
    }
    return std::vector<TensorSpec>{{x.dtype, out}};
  }
  if (op == "LogSoftmax") {
    require_float(c, x, "input");
    normalize_axis(c, c.v.get_int("axis", -1), static_cast<int64_t>(x.dims.size()), "axis");
    return std::vector<TensorSpec>{x};
  }
  if (op == "ArgMax" || op == "ArgMin") {
    require_float(c, x, "input");
    const auto rank = static_cast<int64_t>(x.dims.size());
    const auto axis = static_cast<size_t>(normalize_axis(c, c.v.get_int("axis", 0), rank, "axis"));
    const bool keep = keepdims_attr(c);
    (void)flag_attr(c, "select_last_index");
    AMPX_CHECK(x.dims[axis] > 0,
               op == "ArgMax" ? "argmax over an empty axis" : "argmin over an empty axis");
    Dims out = x.dims;
    if (keep)
      out[axis] = 1;
    else
      out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
    return std::vector<TensorSpec>{{AMPX_DTYPE_I64, out}};
  }
  if (op == "Resize") {
    require_float(c, x, "input");
    auto sizes = c.v.get_ints("sizes");
    AMPX_CHECK(sizes.size() == x.dims.size(),
               "sizes must have " + std::to_string(x.dims.size()) + " values");
    for (int64_t d : sizes) AMPX_CHECK(d > 0, "sizes must be positive");
    const auto mode = c.v.get_string("mode", "nearest");
    AMPX_CHECK(mode == "nearest" || mode == "linear" || mode == "cubic",
               "mode must be 'nearest', 'linear' or 'cubic', got '" + mode + "'");
    const auto ctm = c.v.get_string("coordinate_transformation_mode", "half_pixel");
    AMPX_CHECK(ctm == "half_pixel" || ctm == "asymmetric" || ctm == "align_corners" ||
                   ctm == "pytorch_half_pixel" || ctm == "half_pixel_symmetric" ||
                   ctm == "tf_crop_and_resize",
               "unsupported coordinate_transformation_mode '" + ctm + "'");
    const auto nm = c.v.get_string("nearest_mode", "round_prefer_floor");
    AMPX_CHECK(
        nm == "round_prefer_floor" || nm == "round_prefer_ceil" || nm == "floor" || nm == "ceil",
        "unsupported nearest_mode '" + nm + "'");
    const auto scales = c.v.get_floats("scales");
    AMPX_CHECK(scales.empty() || scales.size() == x.dims.size(),
               "scales must have " + std::to_string(x.dims.size()) + " values");
    for (double s : scales) AMPX_CHECK(s > 0 && std::isfinite(s), "scales must be positive");
    const auto roi = c.v.get_floats("roi");
    AMPX_CHECK(roi.size() == (ctm == "tf_crop_and_resize" ? 2 * x.dims.size() : 0),
               "roi must have " + std::to_string(2 * x.dims.size()) +
                   " values with tf_crop_and_resize, and none otherwise");
    for (const char* flag : {"exclude_outside", "antialias"}) {
      const int64_t f = c.v.get_int(flag, 0);
      AMPX_CHECK(f == 0 || f == 1, std::string("attribute '") + flag + "' must be 0 or 1");
    }
    for (size_t i = 0; i < x.dims.size(); ++i) {
      const bool spatial = x.dims.size() >= 2 && i + 2 >= x.dims.size();
      AMPX_CHECK(spatial || sizes[i] == x.dims[i], "only the last two dimensions may be resized");
      AMPX_CHECK(spatial || scales.empty() || scales[i] == 1.0,
                 "only the last two dimensions may be resized");
      AMPX_CHECK(spatial || roi.empty() || (roi[i] == 0.0 && roi[i + x.dims.size()] == 1.0),
                 "only the last two dimensions may be cropped");
      AMPX_CHECK(!spatial || x.dims[i] > 0, "cannot resize an empty dimension");
    }
    if (mode != "nearest") AMPX_CHECK(x.dims.size() == 4, mode + " mode needs a 4-D NCHW input");
    return std::vector<TensorSpec>{{x.dtype, Dims(sizes.begin(), sizes.end())}};
  }
  return std::nullopt;
}

}  // namespace ampx::opset::detail
