// BatchNorm (inference, global stats), LayerNorm (over trailing dims, as 2-D),
// MaxPool / AveragePool / GlobalAveragePool (pooling_v2) and ReduceMean /
// ReduceSum (reduction).
#include <algorithm>
#include <string_view>

#include "ops.hpp"

namespace ampx::onednn {

using dnnl::algorithm;
using dnnl::normalization_flags;
using dnnl::prop_kind;

PrimitivePlan plan_batchnorm(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(0);
  const float eps = static_cast<float>(v.get_float("epsilon", 1e-5));
  const memory::desc x_md = dense_md(x);
  auto flags = normalization_flags::use_global_stats | normalization_flags::use_scale |
               normalization_flags::use_shift;
  // The fused activation (fusion.hpp): oneDNN has ReLU only, as a flag.
  const std::string act = v.get_string("activation", "none");
  if (act == "relu") {
    flags |= normalization_flags::fuse_norm_relu;
  } else if (act != "none") {
    throw NoPrimitive("activation '" + act + "' has no oneDNN batch-normalization form");
  }
  auto make = [=](const memory::desc& src) -> dnnl::primitive_desc_base {
    return dnnl::batch_normalization_forward::primitive_desc(
        dnnl::batch_normalization_forward::desc(prop_kind::forward_inference, src, eps, flags),
        plan_attr(), eng);
  };
  PrimitivePlan p;
  p.pd = make(x_md);
  p.relayout = make;
  // scale, bias, mean, var: [C] in the node dtype; oneDNN keeps them in f32
  // (the kernel converts 16-bit ones once per launch, or at prepare).
  p.args = {{DNNL_ARG_SRC, false, 0, x_md},
            {DNNL_ARG_SCALE, false, 1, dense_md(v.input(1))},
            {DNNL_ARG_SHIFT, false, 2, dense_md(v.input(2))},
            {DNNL_ARG_MEAN, false, 3, dense_md(v.input(3))},
            {DNNL_ARG_VARIANCE, false, 4, dense_md(v.input(4))},
            {DNNL_ARG_DST, true, 0, dense_md(v.output(0))}};
  return p;
}

PrimitivePlan plan_layernorm(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(0);
  const memory::data_type dt = to_dnnl(x.dtype);
  const int axis = normalize_axis(v.get_int("axis", -1), x.rank);
  const float eps = static_cast<float>(v.get_float("epsilon", 1e-5));
  const dims_t xd = dims_of(x);
  const int64_t rows = product(xd, 0, static_cast<size_t>(axis));
  const int64_t cols = product(xd, static_cast<size_t>(axis));
  const memory::desc data_md = dense_md({rows, cols}, dt);
  const bool has_bias = v.num_inputs() > 2;
  auto flags = normalization_flags::use_scale;
  if (has_bias) flags = flags | normalization_flags::use_shift;
  PrimitivePlan p;
  p.pd = dnnl::layer_normalization_forward::primitive_desc(
      dnnl::layer_normalization_forward::desc(prop_kind::forward_inference, data_md, eps, flags),
      plan_attr(), eng);
  p.args = {{DNNL_ARG_SRC, false, 0, data_md},
            {DNNL_ARG_SCALE, false, 1, dense_md({cols}, to_dnnl(v.input(1).dtype))},
            {DNNL_ARG_DST, true, 0, data_md}};
  if (has_bias) p.args.push_back({DNNL_ARG_SHIFT, false, 2, dense_md({cols}, dt)});
  return p;
}

PrimitivePlan plan_pool(const NodeView& v, const dnnl::engine& eng) {
  const std::string_view op = v.op_type();
  const ampx_tensor_desc &x = v.input(0), &y = v.output(0);
  const dims_t xd = dims_of(x), yd = dims_of(y);
  dims_t kernel, strides{1, 1}, pl{0, 0}, pr{0, 0}, dil{0, 0};  // oneDNN's dilation: ONNX's - 1
  algorithm alg = algorithm::pooling_max;
  if (op == "GlobalAveragePool") {
    kernel = {xd[2], xd[3]};
    alg = algorithm::pooling_avg_include_padding;
  } else {
    const auto k = v.get_ints("kernel_shape");
    const auto s = v.get_ints("strides", {1, 1});
    const auto pads = v.get_ints("pads", {0, 0, 0, 0});
    const auto d = v.get_ints("dilations", {1, 1});
    kernel = {k[0], k[1]};
    strides = {s[0], s[1]};
    pl = {pads[0], pads[1]};
    dil = {d[0] - 1, d[1] - 1};
    // Right padding that yields exactly the output size: ceil_mode's extra
    // window becomes extra right padding (floor mode may need less than given).
    for (int i = 0; i < 2; ++i) {
      const int64_t extent = (kernel[i] - 1) * d[i] + 1;
      pr[i] = std::max<int64_t>(0, (yd[2 + i] - 1) * strides[i] + extent - xd[2 + i] - pl[i]);
    }
    if (op == "AveragePool") {
      const bool include = v.get_int("count_include_pad", 0) != 0;
      if (include && (pr[0] > pads[2] || pr[1] > pads[3])) {
        throw NoPrimitive("AveragePool count_include_pad with ceil_mode windows past the padding");
      }
      alg =
          include ? algorithm::pooling_avg_include_padding : algorithm::pooling_avg_exclude_padding;
    }
  }
  const memory::desc x_md = dense_md(x), y_md = dense_md(y);
  auto make = [=](const memory::desc& src, const memory::desc& dst) {
    return dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(prop_kind::forward_inference, alg, src, dst, strides, kernel,
                                       dil, pl, pr),
        plan_attr(), eng);
  };
  PrimitivePlan p;
  p.pd = make(x_md, y_md);
  // oneDNN's jit pooling wants channel-blocked layouts: on plain NCHW it picks
  // simple_nchw. Measure the blocked ones too; the kernel reorders in and out.
  if (is_reference_impl(p.pd)) {
    for (auto tag : {memory::format_tag::nChw16c, memory::format_tag::nChw8c}) {
      try {
        auto q = make(memory::desc(xd, x_md.data_type(), tag),
                      memory::desc(yd, y_md.data_type(), memory::format_tag::any));
        if (!is_reference_impl(q)) {
          p.pd = q;
          break;
        }
      } catch (const dnnl::error&) {
      }
    }
  }
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
  // dst `any`: the implementation for a blocked source writes blocked too.
  const memory::desc y_any(yd, y_md.data_type(), memory::format_tag::any);
  p.relayout = [make, y_any](const memory::desc& src) -> dnnl::primitive_desc_base {
    return make(src, y_any);
  };
  return p;
}

PrimitivePlan plan_reduce(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(0);
  const memory::data_type dt = to_dnnl(x.dtype);
  const dims_t yd = reduced_dims(x, v.get_ints("axes"));
  const memory::desc x_md = dense_md(x);
  const memory::desc y_md = dense_md(yd, dt);
  const algorithm alg =
      v.op_type() == "ReduceMean" ? algorithm::reduction_mean : algorithm::reduction_sum;
  PrimitivePlan p;
  p.pd = dnnl::reduction::primitive_desc(dnnl::reduction::desc(alg, x_md, y_md, 0.0f, 0.0f),
                                         plan_attr(), eng);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
  return p;
}

}  // namespace ampx::onednn
