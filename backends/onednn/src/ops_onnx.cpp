// The ONNX importer's ops that have a oneDNN 2.6 primitive: eltwise
// (LeakyRelu, HardSigmoid, HardSwish, Exp, Log, Sqrt, Neg, Reciprocal, Pow by
// a constant scalar), prelu (PRelu), logsoftmax (LogSoftmax), reduction
// (ReduceMax), deconvolution (ConvTranspose) and resampling (Resize, in the
// coordinate modes whose results it reproduces exactly). The rest, and the
// attribute values above that have no primitive, run the reference kernels
// (ops_registry.cpp, policy.cpp).
#include <cmath>
#include <cstring>
#include <string_view>

#include "ampx/half.hpp"
#include "ops.hpp"

namespace ampx::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

// The exponent of a Pow whose Y is a constant with one element and whose
// output is shaped like X: an eltwise_pow. Else nothing.
bool pow_scalar(const NodeView& v, float* exponent) {
  const ampx_tensor_desc& y = v.input(1);
  const void* data = NodeView::const_data(y);
  if (!data || plugin_support::element_count(y) != 1) return false;
  if (dims_of(v.output(0)) != dims_of(v.input(0))) return false;
  float e = 0.0f;
  switch (y.dtype) {
    case AMPX_DTYPE_F32:
      std::memcpy(&e, data, 4);
      break;
    case AMPX_DTYPE_F16: {
      uint16_t h;
      std::memcpy(&h, data, 2);
      e = f16_bits_to_float(h);
      break;
    }
    case AMPX_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, data, 2);
      e = bf16_bits_to_float(h);
      break;
    }
    default:
      return false;
  }
  if (exponent) *exponent = e;
  return true;
}

// oneDNN's resampling maps output o to source (o + 0.5) * in / out - 0.5:
// ONNX's half_pixel (pytorch_half_pixel when out > 1). Nearest rounds that
// half away from zero: round_prefer_ceil, or round_prefer_floor when no
// coordinate is a tie. Linear clamps to the edge, as ONNX does.
bool resampling_matches(const NodeView& v) {
  const ampx_tensor_desc &x = v.input(0), &y = v.output(0);
  if (x.rank != 4) return false;
  // ONNX's own scales, cubic, antialias and the crop have no primitive.
  const std::string mode = v.get_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear") return false;
  if (v.has_attr("scales") || v.has_attr("roi") || v.get_int("antialias", 0) != 0 ||
      v.get_int("exclude_outside", 0) != 0)
    return false;
  const std::string ctm = v.get_string("coordinate_transformation_mode", "half_pixel");
  const bool pytorch = ctm == "pytorch_half_pixel";
  if (ctm != "half_pixel" && !pytorch) return false;
  for (int d = 2; d < 4; ++d)
    if (pytorch && y.dims[d] == 1) return false;
  if (mode == "linear") return true;
  const std::string nm = v.get_string("nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_ceil") return true;
  if (nm != "round_prefer_floor") return false;
  for (int d = 2; d < 4; ++d) {
    // (2o + 1) * in / (2 * out) - 1/2 is a tie when (2o + 1) * in is a
    // multiple of 2 * out.
    for (int64_t o = 0; o < y.dims[d]; ++o)
      if ((2 * o + 1) * x.dims[d] % (2 * y.dims[d]) == 0) return false;
  }
  return true;
}

}  // namespace

bool onnx_op_has_primitive(const NodeView& v) {
  const std::string_view op = v.op_type();
  if (op == "Pow") return pow_scalar(v, nullptr);
  if (op == "Resize") return resampling_matches(v);
  if (op == "ConvTranspose") {
    // oneDNN takes output_padding as less right/bottom padding.
    const auto pads = v.get_ints("pads", {0, 0, 0, 0});
    const auto opad = v.get_ints("output_padding", {0, 0});
    return pads.size() == 4 && opad.size() == 2 && pads[2] >= opad[0] && pads[3] >= opad[1];
  }
  return op == "LeakyRelu" || op == "HardSigmoid" || op == "HardSwish" || op == "Exp" ||
         op == "Log" || op == "Sqrt" || op == "Neg" || op == "Reciprocal" || op == "PRelu" ||
         op == "LogSoftmax" || op == "ReduceMax";
}

PrimitivePlan plan_onnx_eltwise(const NodeView& v, const dnnl::engine& eng) {
  const std::string_view op = v.op_type();
  const memory::desc x_md = eltwise_md(v.input(0));
  const memory::desc y_md = eltwise_md(v.output(0));
  algorithm alg = algorithm::eltwise_linear;
  float alpha = 0.0f, beta = 0.0f;
  dnnl::primitive_attr attr = plan_attr();
  if (op == "LeakyRelu") {
    alg = algorithm::eltwise_relu;  // alpha: the negative slope
    alpha = static_cast<float>(v.get_float("alpha", 0.01));
  } else if (op == "HardSigmoid") {
    // 2.6 has no hardsigmoid: alpha x + beta, then clipped to [0, 1] by a
    // post-op on the f32 value (one rounding on store).
    alg = algorithm::eltwise_linear;
    alpha = static_cast<float>(v.get_float("alpha", 0.2));
    beta = static_cast<float>(v.get_float("beta", 0.5));
    dnnl::post_ops po;
    po.append_eltwise(1.0f, algorithm::eltwise_clip_v2, 0.0f, 1.0f);
    attr.set_post_ops(po);
  } else if (op == "HardSwish") {
    alg = algorithm::eltwise_hardswish;  // x * relu6(x + 3) / 6
  } else if (op == "Exp") {
    alg = algorithm::eltwise_exp;
  } else if (op == "Log") {
    alg = algorithm::eltwise_log;
  } else if (op == "Sqrt") {
    alg = algorithm::eltwise_sqrt;
  } else if (op == "Neg") {
    alg = algorithm::eltwise_linear;
    alpha = -1.0f;
  } else if (op == "Reciprocal") {
    alg = algorithm::eltwise_pow;  // alpha * x^beta
    alpha = 1.0f;
    beta = -1.0f;
  } else if (op == "Pow") {
    if (!pow_scalar(v, &beta)) throw NoPrimitive("Pow by a tensor: oneDNN 2.6 has no binary pow");
    alg = algorithm::eltwise_pow;
    alpha = 1.0f;
  } else {
    throw NoPrimitive("no oneDNN eltwise for " + std::string(op));
  }
  PrimitivePlan p;
  p.pd = dnnl::eltwise_forward::primitive_desc(
      dnnl::eltwise_forward::desc(prop_kind::forward_inference, alg, x_md, alpha, beta), attr, eng);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
  return p;
}

PrimitivePlan plan_prelu(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(0);
  const size_t rank = std::max(static_cast<size_t>(x.rank), kMinElementwiseRank);
  const memory::desc x_md = dense_md(pad_rank(dims_of(x), rank), to_dnnl(x.dtype));
  // The slope, right-aligned against X (NumPy rules): [C,1,1] -> [1,C,1,1].
  const memory::desc w_md = dense_md(pad_rank(dims_of(v.input(1)), rank), to_dnnl(x.dtype));
  PrimitivePlan p;
  p.pd = dnnl::prelu_forward::primitive_desc(
      dnnl::prelu_forward::desc(prop_kind::forward_inference, x_md, w_md), plan_attr(), eng);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md},
            {DNNL_ARG_WEIGHTS, false, 1, w_md},
            {DNNL_ARG_DST, true, 0, x_md}};  // Y has X's shape
  return p;
}

PrimitivePlan plan_log_softmax(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(0);
  const int axis = normalize_axis(v.get_int("axis", -1), x.rank);
  const memory::desc x_md = dense_md(x);
  PrimitivePlan p;
  p.pd = dnnl::logsoftmax_forward::primitive_desc(
      dnnl::logsoftmax_forward::desc(prop_kind::forward_inference, x_md, axis), plan_attr(), eng);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, dense_md(v.output(0))}};
  return p;
}

PrimitivePlan plan_reduce_max(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(0);
  const dims_t yd = reduced_dims(x, v.get_ints("axes"));
  const memory::desc x_md = dense_md(x), y_md = dense_md(yd, to_dnnl(x.dtype));
  PrimitivePlan p;
  p.pd = dnnl::reduction::primitive_desc(
      dnnl::reduction::desc(algorithm::reduction_max, x_md, y_md, 0.0f, 0.0f), plan_attr(), eng);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
  return p;
}

PrimitivePlan plan_conv_transpose(const NodeView& v, const dnnl::engine& eng) {
  if (!onnx_op_has_primitive(v)) throw NoPrimitive("output_padding larger than the end pads");
  const ampx_tensor_desc &x = v.input(0), &w = v.input(1), &y = v.output(0);
  const memory::data_type dt = to_dnnl(x.dtype);
  const auto strides = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = v.get_ints("dilations", {1, 1});
  const auto opad = v.get_ints("output_padding", {0, 0});
  const int64_t group = v.get_int("group", 1);
  const dims_t xd = dims_of(x), wd = dims_of(w), yd = dims_of(y);
  // W is [C, M/g, kH, kW]: oneDNN's (g)oihw dims laid out as (g)iohw.
  const int64_t c = wd[0], mg = wd[1];
  dims_t w_dims{mg * group, c, wd[2], wd[3]};
  memory::desc w_user(w_dims, dt, memory::format_tag::iohw);
  if (group > 1) {
    w_dims = {group, mg, c / group, wd[2], wd[3]};
    w_user = memory::desc(w_dims, dt, memory::format_tag::giohw);
  }
  const memory::desc x_user = dense_md(x), y_user = dense_md(y);
  const memory::desc x_any(xd, dt, memory::format_tag::any);
  const memory::desc w_any(w_dims, dt, memory::format_tag::any);
  const memory::desc y_any(yd, dt, memory::format_tag::any);
  const dims_t s{strides[0], strides[1]}, d{dil[0] - 1, dil[1] - 1};
  const dims_t pl{pads[0], pads[1]}, pr{pads[2] - opad[0], pads[3] - opad[1]};
  PrimitivePlan p;
  if (v.num_inputs() > 2 && NodeView::const_data(v.input(2))) {
    // The bias as an in-place binary add after the deconvolution
    // (PrimitivePlan::then_add), in the output's layout.
    p.pd = dnnl::deconvolution_forward::primitive_desc(
        dnnl::deconvolution_forward::desc(prop_kind::forward_inference,
                                          algorithm::deconvolution_direct, x_any, w_any, y_any, s,
                                          d, pl, pr),
        plan_attr(), eng);
    const memory::desc y_md = p.pd.query_md(dnnl::query::dst_md);
    const memory::desc b_md = same_layout(y_md, {1, yd[1], 1, 1});
    dnnl::binary::primitive_desc add(dnnl::binary::desc(algorithm::binary_add, y_md, b_md, y_md),
                                     eng);
    if (!is_reference_impl(add)) {
      p.then_add = add;
      p.then_input = 2;
    }
  }
  if (v.num_inputs() > 2 && !p.then_add) {  // a bias computed at run time: oneDNN's own
    const memory::desc b_user = dense_md(v.input(2));
    p.pd = dnnl::deconvolution_forward::primitive_desc(
        dnnl::deconvolution_forward::desc(prop_kind::forward_inference,
                                          algorithm::deconvolution_direct, x_any, w_any, b_user,
                                          y_any, s, d, pl, pr),
        plan_attr(), eng);
    p.args.push_back({DNNL_ARG_BIAS, false, 2, b_user});
  } else if (v.num_inputs() <= 2) {
    p.pd = dnnl::deconvolution_forward::primitive_desc(
        dnnl::deconvolution_forward::desc(prop_kind::forward_inference,
                                          algorithm::deconvolution_direct, x_any, w_any, y_any, s,
                                          d, pl, pr),
        plan_attr(), eng);
  }
  p.args.push_back({DNNL_ARG_SRC, false, 0, x_user});
  p.args.push_back({DNNL_ARG_WEIGHTS, false, 1, w_user});
  p.args.push_back({DNNL_ARG_DST, true, 0, y_user});
  return p;
}

PrimitivePlan plan_resize(const NodeView& v, const dnnl::engine& eng) {
  if (!resampling_matches(v))
    throw NoPrimitive("oneDNN resampling has no such coordinate or rounding mode");
  const memory::desc x_md = dense_md(v.input(0)), y_md = dense_md(v.output(0));
  const algorithm alg = v.get_string("mode", "nearest") == "linear" ? algorithm::resampling_linear
                                                                    : algorithm::resampling_nearest;
  PrimitivePlan p;
  p.pd = dnnl::resampling_forward::primitive_desc(
      dnnl::resampling_forward::desc(prop_kind::forward_inference, alg, x_md, y_md), plan_attr(),
      eng);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
  // A blocked source (a segmentation head's logits): resampled in its
  // layout, which oneDNN vectorises over the channel block.
  p.relayout = [=](const memory::desc& src) -> dnnl::primitive_desc_base {
    const memory::desc y(y_md.dims(), y_md.data_type(), memory::format_tag::any);
    return dnnl::resampling_forward::primitive_desc(
        dnnl::resampling_forward::desc(prop_kind::forward_inference, alg, src, y), plan_attr(),
        eng);
  };
  return p;
}

}  // namespace ampx::onednn
