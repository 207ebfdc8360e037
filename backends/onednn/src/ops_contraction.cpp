// Conv2d (convolution_forward), MatMul and Gemm (matmul primitive).
#include <cmath>

#include "ops.hpp"

namespace ampx::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

// The node's fused `activation` (docs/OPS.md) as an eltwise post-op: the
// primitive applies it to its f32 accumulator before the store.
void append_activation(const NodeView& v, dnnl::post_ops& po) {
  const std::string act = v.get_string("activation", "none");
  if (act == "none") return;
  if (act == "relu") {
    po.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
  } else if (act == "gelu") {
    po.append_eltwise(1.0f, algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
  } else if (act == "gelu_tanh") {
    po.append_eltwise(1.0f, algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
  } else if (act == "clip") {
    po.append_eltwise(1.0f, algorithm::eltwise_clip_v2,
                      static_cast<float>(v.get_float("activation_alpha", -INFINITY)),
                      static_cast<float>(v.get_float("activation_beta", INFINITY)));
  } else if (act == "hardsigmoid") {
    // 2.6 has no hardsigmoid: alpha x + beta, then clipped to [0, 1], both
    // on the f32 accumulator.
    po.append_eltwise(1.0f, algorithm::eltwise_linear,
                      static_cast<float>(v.get_float("activation_alpha", 0.2)),
                      static_cast<float>(v.get_float("activation_beta", 0.5)));
    po.append_eltwise(1.0f, algorithm::eltwise_clip_v2, 0.0f, 1.0f);
  } else if (act == "hardswish") {
    po.append_eltwise(1.0f, algorithm::eltwise_hardswish, 0.0f, 0.0f);
  } else if (act == "sigmoid") {
    po.append_eltwise(1.0f, algorithm::eltwise_logistic, 0.0f, 0.0f);
  } else if (act == "swish") {
    po.append_eltwise(1.0f, algorithm::eltwise_swish, 1.0f, 0.0f);  // x sigmoid(1 x)
  } else if (act == "tanh") {
    po.append_eltwise(1.0f, algorithm::eltwise_tanh, 0.0f, 0.0f);
  } else if (act == "leaky_relu") {
    po.append_eltwise(1.0f, algorithm::eltwise_relu,
                      static_cast<float>(v.get_float("activation_alpha", 0.01)), 0.0f);
  } else {
    throw NoPrimitive("activation '" + act + "' has no oneDNN post-op");
  }
}

// The layout a constant [K, N] weight is reordered into once at prepare
// (`trans`: given as [N, K] row-major): rows 64 bytes longer than dense.
// oneDNN 2.6's f32 GEMM (gemm:jit, the matmul on AVX2) takes its no-copy
// kernel for a dense weight whose rows are a multiple of 64 bytes, and with
// rows of 768 or 3072 floats (transformer projections) those map to the same
// cache sets: 197x768x3072 ran in 26 ms against 14 ms with padded rows
// (bench/ort_compare.py's ViT). A non-constant operand stays as it is.
memory::desc weight_md(const NodeView& v, size_t input, int64_t k, int64_t n, bool trans,
                       memory::data_type dt) {
  const memory::desc dense({k, n}, dt, trans ? dims_t{1, k} : dims_t{n, 1});
  if (!NodeView::const_data(v.input(input))) return dense;
  const int64_t pad = 64 / static_cast<int64_t>(memory::data_type_size(dt));
  return memory::desc({k, n}, dt, trans ? dims_t{1, k + pad} : dims_t{n + pad, 1});
}

dnnl::primitive_attr activation_attr(const NodeView& v) {
  dnnl::post_ops po;
  append_activation(v, po);
  dnnl::primitive_attr attr = plan_attr();
  attr.set_post_ops(po);
  return attr;
}

}  // namespace

PrimitivePlan plan_conv2d(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc &x = v.input(0), &w = v.input(1), &y = v.output(0);
  const memory::data_type dt = to_dnnl(x.dtype);
  const bool has_bias = v.num_inputs() > 2;
  const auto strides = v.get_ints("strides", {1, 1});
  const auto pads = v.get_ints("pads", {0, 0, 0, 0});
  const auto dil = v.get_ints("dilations", {1, 1});
  const int64_t group = v.get_int("group", 1);
  const dims_t xd = dims_of(x), wd = dims_of(w), yd = dims_of(y);

  // User layouts: X nchw, W [M, C/g, kH, kW] (as goihw when grouped), Y nchw.
  const memory::desc x_user = dense_md(x), y_user = dense_md(y);
  memory::desc w_user = dense_md(w);
  dims_t w_dims = wd;
  if (group > 1) {
    w_dims = {group, wd[0] / group, wd[1], wd[2], wd[3]};
    w_user = dense_md(w_dims, dt);
  }
  // Let oneDNN choose the layouts; the kernel reorders in and out (weights
  // once at prepare when they are constant).
  const memory::desc x_any(xd, dt, memory::format_tag::any);
  const memory::desc w_any(w_dims, dt, memory::format_tag::any);
  const memory::desc y_any(yd, dt, memory::format_tag::any);
  const dims_t s{strides[0], strides[1]}, d{dil[0] - 1, dil[1] - 1};
  const dims_t pl{pads[0], pads[1]}, pr{pads[2], pads[3]};

  const dnnl::primitive_attr attr = activation_attr(v);
  PrimitivePlan p;
  if (v.num_inputs() > 3) {
    // The fused residual (input 3): a binary-add post-op before the
    // activation, its operand in the layout oneDNN picks for the output (so
    // a blocked residual from the previous block is read as it is).
    const memory::desc b_user = dense_md(v.input(2));
    dnnl::convolution_forward::desc desc(prop_kind::forward_inference,
                                         algorithm::convolution_direct, x_any, w_any, b_user, y_any,
                                         s, d, pl, pr);
    const memory::desc y_md =
        dnnl::convolution_forward::primitive_desc(desc, plan_attr(), eng).dst_desc();
    dnnl::post_ops po;
    po.append_binary(algorithm::binary_add, y_md);
    append_activation(v, po);
    dnnl::primitive_attr rattr = plan_attr();
    rattr.set_post_ops(po);
    dnnl::convolution_forward::desc fixed(prop_kind::forward_inference,
                                          algorithm::convolution_direct, x_any, w_any, b_user, y_md,
                                          s, d, pl, pr);
    p.pd = dnnl::convolution_forward::primitive_desc(fixed, rattr, eng);
    p.args.push_back({DNNL_ARG_BIAS, false, 2, b_user});
    p.args.push_back(
        {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, false, 3, dense_md(v.input(3))});
  } else if (has_bias) {
    const memory::desc b_user = dense_md(v.input(2));
    dnnl::convolution_forward::desc desc(prop_kind::forward_inference,
                                         algorithm::convolution_direct, x_any, w_any, b_user, y_any,
                                         s, d, pl, pr);
    p.pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
    p.args.push_back({DNNL_ARG_BIAS, false, 2, b_user});
  } else {
    dnnl::convolution_forward::desc desc(prop_kind::forward_inference,
                                         algorithm::convolution_direct, x_any, w_any, y_any, s, d,
                                         pl, pr);
    p.pd = dnnl::convolution_forward::primitive_desc(desc, attr, eng);
  }
  p.args.push_back({DNNL_ARG_SRC, false, 0, x_user});
  p.args.push_back({DNNL_ARG_WEIGHTS, false, 1, w_user});
  p.args.push_back({DNNL_ARG_DST, true, 0, y_user});
  return p;
}

PrimitivePlan plan_matmul(const NodeView& v, const dnnl::engine& eng) {
  const ampx_tensor_desc &a = v.input(0), &b = v.input(1), &y = v.output(0);
  const memory::data_type dt = to_dnnl(a.dtype);
  dims_t yd = dims_of(y), ad = pad_rank(dims_of(a), yd.size()),
         bd = pad_rank(dims_of(b), yd.size());
  // A 2-D weight under a batched A (a Linear on [seq, batch, features], as
  // torch's attention exports it: 197 batches of one row in ViT) is one
  // GEMM over all rows of A: [B..., M, K] x [K, N] seen as [B...·M, K] x
  // [K, N]. oneDNN would otherwise run one small GEMM per batch.
  if (yd.size() > 2 && product(bd, 0, bd.size() - 2) == 1 &&
      ad[ad.size() - 2] == yd[yd.size() - 2]) {
    const int64_t rows = product(yd, 0, yd.size() - 1);
    ad = {rows, ad.back()};
    bd = {bd[bd.size() - 2], bd.back()};
    yd = {rows, yd.back()};
  }
  // Batch dims broadcast: give both operands the output's rank (leading 1s);
  // the matmul primitive broadcasts size-1 batch dims.
  const memory::desc a_md = dense_md(ad, dt);
  const memory::desc b_md = dense_md(bd, dt);
  const memory::desc y_md = dense_md(yd, dt);
  const memory::desc b_want = bd.size() == 2 ? weight_md(v, 1, bd[0], bd[1], false, dt) : b_md;
  const dnnl::primitive_attr attr = activation_attr(v);
  PrimitivePlan p;
  if (v.num_inputs() > 2) {  // fused bias [N], broadcast over every row
    const memory::desc bias_md = dense_md(pad_rank(dims_of(v.input(2)), yd.size()), dt);
    p.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_want, bias_md, y_md), attr, eng);
    p.args.push_back({DNNL_ARG_BIAS, false, 2, bias_md});
  } else {
    p.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_want, y_md), attr, eng);
  }
  p.args.push_back({DNNL_ARG_SRC, false, 0, a_md});
  p.args.push_back({DNNL_ARG_WEIGHTS, false, 1, b_md});
  p.args.push_back({DNNL_ARG_DST, true, 0, y_md});
  return p;
}

// Y = alpha·A'·B' + beta·C. oneDNN's matmul computes scale·(A·B + bias) and
// then its post-ops, so C is the bias only when alpha = beta = 1; otherwise
// scale = alpha/beta, C comes in through a binary-add post-op (broadcast) and
// an eltwise_linear post-op multiplies everything by beta. `allow_bias`:
// the C-as-bias form may be used.
namespace {

PrimitivePlan plan_gemm_as(const NodeView& v, const dnnl::engine& eng, bool allow_bias) {
  const ampx_tensor_desc &a = v.input(0), &y = v.output(0);
  const memory::data_type dt = to_dnnl(a.dtype);
  const float alpha = static_cast<float>(v.get_float("alpha", 1.0));
  const float beta = static_cast<float>(v.get_float("beta", 1.0));
  const bool ta = v.get_int("transA", 0) != 0, tb = v.get_int("transB", 0) != 0;
  const int64_t m = y.dims[0], n = y.dims[1];
  const int64_t k = ta ? a.dims[0] : a.dims[1];
  // Transposition through strides: A' is [M,K] whatever A's layout.
  const memory::desc a_md({m, k}, dt, ta ? dims_t{1, m} : dims_t{k, 1});
  const memory::desc b_md({k, n}, dt, tb ? dims_t{1, k} : dims_t{n, 1});
  const memory::desc b_want = weight_md(v, 1, k, n, tb, dt);
  const memory::desc y_md = dense_md(dims_of(y), dt);
  const bool use_c = v.num_inputs() > 2 && beta != 0.0f;
  const bool c_as_bias = use_c && allow_bias && alpha == 1.0f && beta == 1.0f;
  const memory::desc c_md = use_c ? dense_md(pad_rank(dims_of(v.input(2)), 2), dt) : y_md;

  dnnl::primitive_attr attr = plan_attr();
  const float scale = use_c ? alpha / beta : alpha;
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  PrimitivePlan p;
  dnnl::post_ops po;
  if (use_c && !c_as_bias) {
    po.append_binary(algorithm::binary_add, c_md);
    if (beta != 1.0f) po.append_eltwise(1.0f, algorithm::eltwise_linear, beta, 0.0f);
    p.args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, false, 2, c_md});
  }
  append_activation(v, po);  // after C: Y = act(alpha·A'·B' + beta·C)
  attr.set_post_ops(po);
  if (c_as_bias) {
    p.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_want, c_md, y_md), attr, eng);
    p.args.push_back({DNNL_ARG_BIAS, false, 2, c_md});
  } else {
    p.pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_want, y_md), attr, eng);
  }
  p.args.push_back({DNNL_ARG_SRC, false, 0, a_md});
  p.args.push_back({DNNL_ARG_WEIGHTS, false, 1, b_md});
  p.args.push_back({DNNL_ARG_DST, true, 0, y_md});
  return p;
}

}  // namespace

// Measured: C as the bias first; oneDNN's optimised matmul takes only some
// bias shapes (a full [M,N] one goes to ref:any), so when that lands on a
// reference implementation the binary post-op form is tried too.
PrimitivePlan plan_gemm(const NodeView& v, const dnnl::engine& eng) {
  PrimitivePlan p = plan_gemm_as(v, eng, true);
  if (v.num_inputs() > 2 && is_reference_impl(p.pd)) {
    try {
      PrimitivePlan q = plan_gemm_as(v, eng, false);
      if (!is_reference_impl(q.pd)) return q;
    } catch (const dnnl::error&) {
    }
  }
  return p;
}

}  // namespace ampx::onednn
