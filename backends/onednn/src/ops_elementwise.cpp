// Eltwise (Relu, Sigmoid, Tanh, Gelu, Clip), binary (Add, Sub, Mul, Div with
// broadcasting) and Softmax.
#include <limits>
#include <string_view>

#include "ops.hpp"

namespace ampx::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

PrimitivePlan plan_eltwise(const NodeView& v, const dnnl::engine& eng) {
  const std::string_view op = v.op_type();
  const memory::desc x_md = eltwise_md(v.input(0));
  const memory::desc y_md = eltwise_md(v.output(0));
  algorithm alg = algorithm::eltwise_relu;
  float alpha = 0.0f, beta = 0.0f;
  if (op == "Relu") {
    alg = algorithm::eltwise_relu;
  } else if (op == "Sigmoid") {
    alg = algorithm::eltwise_logistic;
  } else if (op == "Tanh") {
    alg = algorithm::eltwise_tanh;
  } else if (op == "Gelu") {
    const std::string approx = v.get_string("approximate", "none");
    if (approx == "none") {
      alg = algorithm::eltwise_gelu_erf;
    } else if (approx == "tanh") {
      alg = algorithm::eltwise_gelu_tanh;
    } else {
      throw NoPrimitive("Gelu approximate='" + approx + "'");
    }
  } else if (op == "Clip") {
    alg = algorithm::eltwise_clip_v2;  // min <= x <= max, ties keep x
    alpha = static_cast<float>(v.get_float("min", -std::numeric_limits<double>::infinity()));
    beta = static_cast<float>(v.get_float("max", std::numeric_limits<double>::infinity()));
  } else {
    throw NoPrimitive("no oneDNN eltwise for " + std::string(op));
  }
  auto make = [=](const memory::desc& src) -> dnnl::primitive_desc_base {
    return dnnl::eltwise_forward::primitive_desc(
        dnnl::eltwise_forward::desc(prop_kind::forward_inference, alg, src, alpha, beta),
        plan_attr(), eng);
  };
  PrimitivePlan p;
  p.pd = make(x_md);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
  p.relayout = make;
  return p;
}

bool binary_has_primitive(const NodeView& v) {
  const std::string_view op = v.op_type();
  const dims_t yd = dims_of(v.output(0));
  const size_t rank = std::max(yd.size(), kMinElementwiseRank);
  const dims_t yr = pad_rank(yd, rank);
  if (pad_rank(dims_of(v.input(0)), rank) == yr) return true;
  return pad_rank(dims_of(v.input(1)), rank) == yr && (op == "Add" || op == "Mul" || op == "Sub");
}

PrimitivePlan plan_binary(const NodeView& v, const dnnl::engine& eng) {
  const std::string_view op = v.op_type();
  const memory::data_type dt = to_dnnl(v.output(0).dtype);
  const dims_t yd = dims_of(v.output(0));
  const size_t rank = std::max(yd.size(), kMinElementwiseRank);
  dims_t ad = pad_rank(dims_of(v.input(0)), rank), bd = pad_rank(dims_of(v.input(1)), rank);
  const dims_t yr = pad_rank(yd, rank);
  const bool commutative = op == "Add" || op == "Mul";
  size_t src0 = 0, src1 = 1;
  bool negate = false;
  // oneDNN broadcasts src1 only: swap the operands when only A broadcasts
  // (A - B = -(B - A): a linear post-op negates).
  if (ad != yr) {
    if (bd != yr || !(commutative || op == "Sub")) {
      throw NoPrimitive("oneDNN binary broadcasts only the second operand");
    }
    std::swap(ad, bd);
    std::swap(src0, src1);
    negate = op == "Sub";
  }
  algorithm alg = algorithm::binary_add;
  if (op == "Sub") alg = algorithm::binary_sub;
  if (op == "Mul") alg = algorithm::binary_mul;
  if (op == "Div") alg = algorithm::binary_div;
  const memory::desc a_md = dense_md(ad, dt), b_md = dense_md(bd, dt), y_md = dense_md(yr, dt);
  dnnl::primitive_attr attr = plan_attr();
  if (negate) {
    dnnl::post_ops po;
    po.append_eltwise(1.0f, algorithm::eltwise_linear, -1.0f, 0.0f);
    attr.set_post_ops(po);
  }
  PrimitivePlan p;
  p.pd = dnnl::binary::primitive_desc(dnnl::binary::desc(alg, a_md, b_md, y_md), attr, eng);
  p.args = {{DNNL_ARG_SRC_0, false, src0, a_md},
            {DNNL_ARG_SRC_1, false, src1, b_md},
            {DNNL_ARG_DST, true, 0, y_md}};
  // Operands in a producer's layout (a residual Add, the gate Mul of a
  // squeeze-excitation block, whose gate comes from a convolution): both in
  // that layout, the result in the source's.
  p.relayout = [=](const memory::desc& src) -> dnnl::primitive_desc_base {
    const memory::desc y(yr, dt, memory::format_tag::any);
    return dnnl::binary::primitive_desc(
        dnnl::binary::desc(alg, same_layout(src, ad), same_layout(src, bd), y), attr, eng);
  };
  return p;
}

PrimitivePlan plan_softmax(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc& x = v.input(0);
  const int axis = normalize_axis(v.get_int("axis", -1), x.rank);
  const memory::desc x_md = dense_md(x);
  PrimitivePlan p;
  p.pd = dnnl::softmax_forward::primitive_desc(
      dnnl::softmax_forward::desc(prop_kind::forward_inference, x_md, axis), plan_attr(), eng);
  p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, dense_md(v.output(0))}};
  return p;
}

}  // namespace ampx::onednn
