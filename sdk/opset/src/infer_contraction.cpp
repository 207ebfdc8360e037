// Output types of Conv2d, MatMul, Gemm and ConvTranspose.
#include <algorithm>
#include <limits>
#include <numeric>

#include "infer_common.hpp"

namespace ampx::opset::detail {

namespace {

// What Conv2d and ConvTranspose share: one float dtype, 4-D NCHW input and
// weight, and `group` >= 1 (returned).
int64_t conv_group(const Node& c) {
  const TensorSpec& x = c.in[0];
  const TensorSpec& w = c.in[1];
  require_same_dtype(c, c.in);
  require_float(c, x, "input");
  AMPX_CHECK(x.dims.size() == 4, "input must be 4-D NCHW, got " + dims_str(x.dims));
  AMPX_CHECK(w.dims.size() == 4, "weight must be 4-D, got " + dims_str(w.dims));
  const int64_t g = c.v.get_int("group", 1);
  AMPX_CHECK(g >= 1, "attribute 'group' = " + std::to_string(g) + " must be >= 1");
  return g;
}

}  // namespace

Outputs infer_contraction(const Node& c, std::string_view op) {
  const auto& in = c.in;
  const int n = c.n;
  const TensorSpec& x = in[0];
  if (op == "Conv2d") {
    const auto& w = in[1];
    const int64_t g = conv_group(c);
    AMPX_CHECK(x.dims[1] % g == 0 && w.dims[0] % g == 0,
               "channels must be divisible by group " + std::to_string(g));
    AMPX_CHECK(w.dims[1] * g == x.dims[1],
               "weight " + dims_str(w.dims) + " does not match input channels " +
                   std::to_string(x.dims[1]) + " with group " + std::to_string(g));
    if (n >= 3)
      AMPX_CHECK(in[2].dims == Dims{w.dims[0]},
                 "bias must be [" + std::to_string(w.dims[0]) + "], got " + dims_str(in[2].dims));
    auto s = pair_attr(c, "strides", {1, 1}, 2, true);
    auto p = pair_attr(c, "pads", {0, 0, 0, 0}, 4, false);
    auto d = pair_attr(c, "dilations", {1, 1}, 2, true);
    const int64_t oh = window_out(x.dims[2], w.dims[2], s[0], p[0], p[2], d[0], false);
    const int64_t ow = window_out(x.dims[3], w.dims[3], s[1], p[1], p[3], d[1], false);
    AMPX_CHECK(oh > 0 && ow > 0, "kernel larger than the padded input");
    check_activation(c);
    const Dims y{x.dims[0], w.dims[0], oh, ow};
    if (n == 4)  // the fused residual (docs/OPS.md), added before the activation
      AMPX_CHECK(in[3].dims == y,
                 "residual must be " + dims_str(y) + ", got " + dims_str(in[3].dims));
    return std::vector<TensorSpec>{{x.dtype, y}};
  }
  if (op == "MatMul") {
    require_same_dtype(c, in);
    require_float(c, x, "input");
    const auto& a = in[0].dims;
    const auto& b = in[1].dims;
    AMPX_CHECK(a.size() >= 2 && b.size() >= 2,
               "inputs must have rank >= 2, got " + dims_str(a) + " and " + dims_str(b));
    AMPX_CHECK(a.back() == b[b.size() - 2],
               "inner dimensions differ: " + dims_str(a) + " x " + dims_str(b));
    auto batch = broadcast_shapes(Dims(a.begin(), a.end() - 2), Dims(b.begin(), b.end() - 2));
    AMPX_CHECK(batch.has_value(),
               "batch dimensions of " + dims_str(a) + " and " + dims_str(b) + " do not broadcast");
    Dims out = *batch;
    out.push_back(a[a.size() - 2]);
    out.push_back(b.back());
    if (n == 3)
      AMPX_CHECK(in[2].dims == Dims{b.back()},
                 "bias must be [" + std::to_string(b.back()) + "], got " + dims_str(in[2].dims));
    check_activation(c);
    return std::vector<TensorSpec>{{x.dtype, out}};
  }
  if (op == "Gemm") {
    require_same_dtype(c, in);
    require_float(c, x, "input");
    AMPX_CHECK(in[0].dims.size() == 2 && in[1].dims.size() == 2, "A and B must be 2-D");
    const bool ta = flag_attr(c, "transA");
    const bool tb = flag_attr(c, "transB");
    const int64_t m = ta ? in[0].dims[1] : in[0].dims[0];
    const int64_t k = ta ? in[0].dims[0] : in[0].dims[1];
    const int64_t kb = tb ? in[1].dims[1] : in[1].dims[0];
    const int64_t nn = tb ? in[1].dims[0] : in[1].dims[1];
    AMPX_CHECK(k == kb, "inner dimensions differ: A " + dims_str(in[0].dims) + ", B " +
                            dims_str(in[1].dims));
    if (n == 3) {
      auto bc = broadcast_shapes(in[2].dims, {m, nn});
      AMPX_CHECK((bc && *bc == Dims{m, nn} && in[2].dims.size() <= 2),
                 "C " + dims_str(in[2].dims) + " does not broadcast to [" + std::to_string(m) +
                     "x" + std::to_string(nn) + "]");
    }
    check_activation(c);
    return std::vector<TensorSpec>{{x.dtype, {m, nn}}};
  }
  if (op == "ConvTranspose") {
    const auto& w = in[1];
    const int64_t g = conv_group(c);
    AMPX_CHECK(w.dims[0] == x.dims[1] && x.dims[1] % g == 0,
               "weight " + dims_str(w.dims) + " does not match input channels " +
                   std::to_string(x.dims[1]) + " with group " + std::to_string(g));
    const int64_t m = w.dims[1] * g;
    if (n == 3)
      AMPX_CHECK(in[2].dims == Dims{m},
                 "bias must be [" + std::to_string(m) + "], got " + dims_str(in[2].dims));
    auto s = pair_attr(c, "strides", {1, 1}, 2, true);
    auto p = pair_attr(c, "pads", {0, 0, 0, 0}, 4, false);
    auto d = pair_attr(c, "dilations", {1, 1}, 2, true);
    auto opad = pair_attr(c, "output_padding", {0, 0}, 2, false);
    Dims out{x.dims[0], m, 0, 0};
    for (size_t i = 0; i < 2; ++i) {
      AMPX_CHECK(opad[i] < s[i] || opad[i] < d[i],
                 "output_padding must be smaller than the stride or the dilation");
      out[2 + i] =
          s[i] * (x.dims[2 + i] - 1) + opad[i] + (w.dims[2 + i] - 1) * d[i] + 1 - p[i] - p[i + 2];
      AMPX_CHECK(out[2 + i] > 0, "pads leave an empty output");
    }
    return std::vector<TensorSpec>{{x.dtype, out}};
  }
  return std::nullopt;
}

}  // namespace ampx::opset::detail
