// The training ops that are one oneDNN backward primitive each (docs/OPS.md
// "Training ops"): ReluGrad, SigmoidGrad, TanhGrad, GeluGrad, ClipGrad
// (eltwise_backward), SoftmaxGrad (softmax_backward), Conv2dGradWeight
// (convolution_backward_weights, with diff_bias for bias_gradient) and
// AveragePoolGrad (pooling_v2_backward).
// oneDNN's backward descriptors need a forward primitive descriptor as a
// hint: one is made here with prop_kind::forward_training and dropped.
#include <cmath>
#include <limits>
#include <string_view>

#include "ops.hpp"

namespace ampx::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

// The eltwise algorithm whose backward is the op's gradient, and whether
// its second input (docs/OPS.md) is the forward output Y (…_use_dst_for_bwd,
// bound as DNNL_ARG_DST) rather than X (DNNL_ARG_SRC).
struct EltwiseGrad {
  algorithm alg;
  bool uses_dst;
  float alpha = 0.0f, beta = 0.0f;
};

EltwiseGrad eltwise_grad_of(const NodeView& v) {
  const std::string_view op = v.op_type();
  if (op == "ReluGrad") return {algorithm::eltwise_relu, false};
  if (op == "SigmoidGrad") return {algorithm::eltwise_logistic_use_dst_for_bwd, true};
  if (op == "TanhGrad") return {algorithm::eltwise_tanh_use_dst_for_bwd, true};
  if (op == "GeluGrad") {
    const std::string approx = v.get_string("approximate", "none");
    if (approx == "none") return {algorithm::eltwise_gelu_erf, false};
    if (approx == "tanh") return {algorithm::eltwise_gelu_tanh, false};
    throw NoPrimitive("GeluGrad approximate='" + approx + "'");
  }
  if (op == "ClipGrad") {
    // docs/OPS.md passes the gradient at the bounds (min <= x <= max, as
    // PyTorch); oneDNN's clip_v2 backward passes it strictly inside
    // (alpha < x < beta). The next floats outward make the strict test the
    // inclusive one for every finite x (16-bit inputs are compared as f32).
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const auto lo = static_cast<float>(v.get_float("min", -kInf));
    const auto hi = static_cast<float>(v.get_float("max", kInf));
    return {algorithm::eltwise_clip_v2, false, std::nextafter(lo, -kInf), std::nextafter(hi, kInf)};
  }
  throw NoPrimitive("no oneDNN eltwise backward for " + std::string(op));
}

}  // namespace

PrimitivePlan plan_eltwise_grad(const NodeView& v, const dnnl::engine& eng) {
  const EltwiseGrad g = eltwise_grad_of(v);
  const memory::desc dy_md = eltwise_md(v.input(0)), t_md = eltwise_md(v.input(1));
  const memory::desc dx_md = eltwise_md(v.output(0));
  // `data` (X or Y) decides the layout; dY and dX follow it, so a chain of
  // gradients of blocked activations stays blocked.
  auto make = [=](const memory::desc& data) -> dnnl::primitive_desc_base {
    const dnnl::eltwise_forward::primitive_desc hint(
        dnnl::eltwise_forward::desc(prop_kind::forward_training, g.alg, data, g.alpha, g.beta),
        plan_attr(), eng);
    return dnnl::eltwise_backward::primitive_desc(
        dnnl::eltwise_backward::desc(g.alg, data, data, g.alpha, g.beta), plan_attr(), eng, hint);
  };
  PrimitivePlan p;
  p.pd = make(t_md);
  p.args = {{DNNL_ARG_DIFF_DST, false, 0, dy_md},
            {g.uses_dst ? DNNL_ARG_DST : DNNL_ARG_SRC, false, 1, t_md},
            {DNNL_ARG_DIFF_SRC, true, 0, dx_md}};
  p.relayout = make;
  return p;
}

PrimitivePlan plan_softmax_grad(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& y = v.input(1);
  const int axis = normalize_axis(v.get_int("axis", -1), y.rank);
  const memory::desc dy_md = dense_md(v.input(0)), y_md = dense_md(y);
  const dnnl::softmax_forward::primitive_desc hint(
      dnnl::softmax_forward::desc(prop_kind::forward_training, y_md, axis), plan_attr(), eng);
  PrimitivePlan p;
  p.pd = dnnl::softmax_backward::primitive_desc(dnnl::softmax_backward::desc(y_md, y_md, axis),
                                                plan_attr(), eng, hint);
  p.args = {{DNNL_ARG_DIFF_DST, false, 0, dy_md},
            {DNNL_ARG_DST, false, 1, y_md},
            {DNNL_ARG_DIFF_SRC, true, 0, dense_md(v.output(0))}};
  return p;
}

PrimitivePlan plan_conv_grad_weight(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc &dy = v.input(0), &x = v.input(1), &dw = v.output(0);
  const memory::data_type dt = to_dnnl(x.dtype);
  const auto strides = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = v.get_ints("dilations", {1, 1});
  const int64_t group = v.get_int("group", 1);
  const dims_t xd = dims_of(x), dyd = dims_of(dy), dwd = dims_of(dw);
  // dW [M, C/g, kH, kW] is goihw [g, M/g, C/g, kH, kW] when grouped: the
  // same bytes (as Conv2d's weights, ops_contraction.cpp).
  dims_t w_dims = dwd;
  if (group > 1) w_dims = {group, dwd[0] / group, dwd[1], dwd[2], dwd[3]};
  // oneDNN picks the layouts (blocked on every ISA with a jit kernel); the
  // kernel reorders X and dY in and dW out.
  const memory::desc x_any(xd, dt, memory::format_tag::any);
  const memory::desc w_any(w_dims, dt, memory::format_tag::any);
  const memory::desc y_any(dyd, dt, memory::format_tag::any);
  const dims_t s{strides[0], strides[1]}, d{dil[0] - 1, dil[1] - 1};
  const dims_t pl{pads[0], pads[1]}, pr{pads[2], pads[3]};
  PrimitivePlan p;
  if (v.num_outputs() > 1) {
    // bias_gradient: the primitive's diff_bias is dB, summed in the same
    // pass over dY as dW (docs/OPS.md), in dY's dtype.
    const memory::desc b_md = dense_md(v.output(1));
    const dnnl::convolution_forward::primitive_desc hint(
        dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                        x_any, w_any, b_md, y_any, s, d, pl, pr),
        plan_attr(), eng);
    p.pd = dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, x_any, w_any, b_md,
                                                 y_any, s, d, pl, pr),
        plan_attr(), eng, hint);
  } else {
    const dnnl::convolution_forward::primitive_desc hint(
        dnnl::convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                        x_any, w_any, y_any, s, d, pl, pr),
        plan_attr(), eng);
    p.pd = dnnl::convolution_backward_weights::primitive_desc(
        dnnl::convolution_backward_weights::desc(algorithm::convolution_direct, x_any, w_any, y_any,
                                                 s, d, pl, pr),
        plan_attr(), eng, hint);
  }
  // Its batch sum may be split over threads (the im2col GEMM below AVX2,
  // the AVX-512 jit kernel): thread_check.hpp keeps docs/OPS.md's promise.
  p.args = {{DNNL_ARG_DIFF_DST, false, 0, dense_md(dy)},
            {DNNL_ARG_SRC, false, 1, dense_md(x)},
            {DNNL_ARG_DIFF_WEIGHTS, true, 0, dense_md(w_dims, dt)}};
  if (v.num_outputs() > 1) p.args.push_back({DNNL_ARG_DIFF_BIAS, true, 1, dense_md(v.output(1))});
  return p;
}

PoolGradGeometry pool_grad_geometry(const NodeView& v, const dims_t& xd, const dims_t& yd) {
  PoolGradGeometry g;
  const auto k = v.get_ints("kernel_shape");
  const auto s = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  g.kernel = {k[0], k[1]};
  g.strides = {s[0], s[1]};
  g.pl = {pads[0], pads[1]};
  // As plan_pool: the right padding that yields exactly the output size
  // (ceil_mode's extra window becomes extra right padding).
  g.pr = {0, 0};
  for (size_t i = 0; i < 2; ++i) {
    g.pr[i] =
        std::max<int64_t>(0, (yd[2 + i] - 1) * g.strides[i] + g.kernel[i] - xd[2 + i] - g.pl[i]);
  }
  g.alg = algorithm::pooling_max;
  if (v.op_type() == "AveragePoolGrad") {
    const bool include = v.get_int("count_include_pad", 0) != 0;
    if (include && (g.pr[0] > pads[2] || g.pr[1] > pads[3])) {
      throw NoPrimitive(
          "AveragePoolGrad count_include_pad with ceil_mode windows past the padding");
    }
    g.alg =
        include ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
  }
  return g;
}

dnnl::pooling_v2_forward::primitive_desc pool_grad_forward_pd(const PoolGradGeometry& g,
                                                              const memory::desc& x,
                                                              const memory::desc& y,
                                                              const dnnl::engine& eng) {
  return dnnl::pooling_v2_forward::primitive_desc(
      dnnl::pooling_v2_forward::desc(prop_kind::forward_training, g.alg, x, y, g.strides, g.kernel,
                                     dims_t{0, 0}, g.pl, g.pr),
      plan_attr(), eng);
}

dnnl::pooling_v2_backward::primitive_desc pool_grad_backward_pd(
    const PoolGradGeometry& g, const dnnl::pooling_v2_forward::primitive_desc& hint,
    const memory::desc& dx, const memory::desc& dy, const dnnl::engine& eng) {
  return dnnl::pooling_v2_backward::primitive_desc(
      dnnl::pooling_v2_backward::desc(g.alg, dx, dy, g.strides, g.kernel, dims_t{0, 0}, g.pl, g.pr),
      plan_attr(), eng, hint);
}

PrimitivePlan plan_avgpool_grad(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc &dy = v.input(0), &dx = v.output(0);
  const dims_t xd = dims_of(dx), yd = dims_of(dy);
  const PoolGradGeometry g = pool_grad_geometry(v, xd, yd);
  const memory::desc dy_md = dense_md(dy), dx_md = dense_md(dx);
  auto make = [&](const memory::desc& x, const memory::desc& y) {
    return pool_grad_backward_pd(g, pool_grad_forward_pd(g, x, y, eng), x, y, eng);
  };
  PrimitivePlan p;
  p.pd = make(dx_md, dy_md);
  // As the forward pool (plan_pool): on plain NCHW oneDNN has only
  // simple_nchw; its jit backward wants channel-blocked layouts, so measure
  // those too and let the kernel reorder dY in and dX out.
  if (is_reference_impl(p.pd)) {
    for (auto tag : {memory::format_tag::nChw16c, memory::format_tag::nChw8c}) {
      try {
        auto q = make(memory::desc(xd, dx_md.data_type(), tag),
                      memory::desc(yd, dy_md.data_type(), tag));
        if (!is_reference_impl(q)) {
          p.pd = q;
          break;
        }
      } catch (const dnnl::error&) {
      }
    }
  }
  p.args = {{DNNL_ARG_DIFF_DST, false, 0, dy_md}, {DNNL_ARG_DIFF_SRC, true, 0, dx_md}};
  return p;
}

}  // namespace ampx::onednn
