// The later ONNX ops (opset::is_reference_only) that have a oneDNN 2.6
// primitive computing what the reference kernels compute:
//
// - Round (eltwise_round: halves to even, -0.5 -> -0, as std::nearbyint),
//   Abs (eltwise_abs), Mish (eltwise_mish: accurate to about 1.3e-6
//   absolute only, 0.1 % relative at x = -10; README, "Later ONNX ops");
// - Sum and Mean as one binary_add over the first two inputs, the others as
//   binary-add post-ops in input order, Mean then an eltwise_linear post-op
//   by 1/n (the reference divides by n: at most an ulp apart);
// - ReduceProd (reduction_mul), ReduceL2 (reduction_norm_lp_sum, p = 2) and
//   ReduceSumSquare (reduction_norm_lp_power_p_sum, p = 2).
//
// Checked against the reference kernels and left to the loop (the
// reference kernels, ops_registry.cpp's runs_as_loop()):
//
// - Min, Max (binary_min/max) and ReduceMin (reduction_min): oneDNN's
//   vminps/vmaxps keep a NaN only in the second operand, so a NaN is lost
//   where the reference (NumPy's minimum/maximum) propagates it; no post-op
//   chain fixes that (each step again keeps the second operand's NaN only).
// - Softplus (eltwise_soft_relu, 2.6's has no alpha): log(1 + e^x) with no
//   log1p, so 2 % off at x = -10 and, below about -14, noise around the
//   value that can be negative (-1.9e-6 at x = -17.7); the reference is
//   exact there, and a softplus must stay positive (a log or a division
//   may follow it).
// - Less, Greater, LessOrEqual, GreaterOrEqual (binary_lt/gt/le/ge): a bool
//   (u8) destination has only ref:any, and the jit kernel with an f32
//   destination answers GreaterOrEqual (and LessOrEqual) true for NaN.
// - Floor and Ceil (2.6 has eltwise_round only), Not, And, Or, Mod, CumSum,
//   CumProd, RMSNorm (2.6's layer_normalization always subtracts the mean),
//   TopK, ReduceLogSumExp, ArgMin, GridSample, Det, Col2Im, LinearAttention
//   (a recurrence over tokens: no primitive), MaxPoolIndices (2.6 pooling's
//   workspace is no index); GatherElements, GatherND and ScatterND
//   (data movement, any dtype).
// - Integer dtypes, empty tensors, and Sum/Mean whose first two inputs are
//   both broadcast.
//
// Where oneDNN has only a reference implementation for a node (ReduceL2 and
// ReduceSumSquare on AVX2, post-op broadcasts it lacks, 16-bit below
// AVX-512), the policy runs the loop instead (policy.cpp).
#include <cstdint>
#include <string_view>
#include <utility>

#include "ops.hpp"

namespace ampx::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

bool is_float16_32(ampx_dtype dt) {
  return dt == AMPX_DTYPE_F32 || dt == AMPX_DTYPE_F16 || dt == AMPX_DTYPE_BF16;
}

// The order Sum/Mean's inputs go to the primitive: input 0 (or 1, which
// changes nothing: addition commutes) must have the output's shape, as
// oneDNN broadcasts only src1 and the post-ops' operands. Empty when neither
// has it.
std::vector<size_t> variadic_order(const NodeView& v) {
  const dims_t yd = dims_of(v.output(0));
  const size_t rank = std::max(yd.size(), kMinElementwiseRank);
  const dims_t yr = pad_rank(yd, rank);
  std::vector<size_t> order(v.num_inputs());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (pad_rank(dims_of(v.input(0)), rank) == yr) return order;
  if (order.size() > 1 && pad_rank(dims_of(v.input(1)), rank) == yr) {
    std::swap(order[0], order[1]);
    return order;
  }
  return {};
}

}  // namespace

bool later_op_has_primitive(const NodeView& v) {
  const std::string_view op = v.op_type();
  for (size_t i = 0; i < v.num_inputs(); ++i) {
    if (!is_float16_32(v.input(i).dtype) || plugin_support::element_count(v.input(i)) == 0)
      return false;
  }
  if (v.num_outputs() != 1 || !is_float16_32(v.output(0).dtype)) return false;
  if (op == "Round" || op == "Abs" || op == "Mish") return true;
  if (op == "ReduceProd" || op == "ReduceL2" || op == "ReduceSumSquare") return true;
  if (op == "Sum" || op == "Mean") return v.num_inputs() >= 2 && !variadic_order(v).empty();
  return false;
}

PrimitivePlan plan_later_op(const NodeView& v, const dnnl::engine& eng) {
  if (!later_op_has_primitive(v))
    throw NoPrimitive("no oneDNN 2.6 primitive for " + std::string(v.op_type()) + " as described");
  const std::string_view op = v.op_type();
  const ampx_tensor_desc& x = v.input(0);
  const memory::data_type dt = to_dnnl(v.output(0).dtype);
  PrimitivePlan p;

  if (op == "Round" || op == "Abs" || op == "Mish") {
    const algorithm alg = op == "Round" ? algorithm::eltwise_round
                          : op == "Abs" ? algorithm::eltwise_abs
                                        : algorithm::eltwise_mish;
    const memory::desc x_md = eltwise_md(x), y_md = eltwise_md(v.output(0));
    auto make = [=](const memory::desc& src) -> dnnl::primitive_desc_base {
      return dnnl::eltwise_forward::primitive_desc(
          dnnl::eltwise_forward::desc(prop_kind::forward_inference, alg, src, 0.0f, 0.0f),
          plan_attr(), eng);
    };
    p.pd = make(x_md);
    p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
    p.relayout = make;  // follows a producer's blocked layout, as plan_eltwise
    return p;
  }

  if (op == "ReduceProd" || op == "ReduceL2" || op == "ReduceSumSquare") {
    const dims_t yd = reduced_dims(x, v.get_ints("axes"));
    const algorithm alg = op == "ReduceProd" ? algorithm::reduction_mul
                          : op == "ReduceL2" ? algorithm::reduction_norm_lp_sum
                                             : algorithm::reduction_norm_lp_power_p_sum;
    const float power = op == "ReduceProd" ? 0.0f : 2.0f;  // eps 0: nothing added
    const memory::desc x_md = dense_md(x), y_md = dense_md(yd, dt);
    p.pd = dnnl::reduction::primitive_desc(dnnl::reduction::desc(alg, x_md, y_md, power, 0.0f),
                                           plan_attr(), eng);
    p.args = {{DNNL_ARG_SRC, false, 0, x_md}, {DNNL_ARG_DST, true, 0, y_md}};
    return p;
  }

  // Sum, Mean: ((x0 + x1) + x2) + ..., in f32 inside the primitive, one
  // rounding on store.
  const std::vector<size_t> order = variadic_order(v);
  const dims_t yd = dims_of(v.output(0));
  const size_t rank = std::max(yd.size(), kMinElementwiseRank);
  const memory::desc y_md = dense_md(pad_rank(yd, rank), dt);
  auto md_of = [&](size_t i) { return dense_md(pad_rank(dims_of(v.input(i)), rank), dt); };
  dnnl::primitive_attr attr = plan_attr();
  dnnl::post_ops po;
  for (size_t k = 2; k < order.size(); ++k) {
    po.append_binary(algorithm::binary_add, md_of(order[k]));
    p.args.push_back({DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(k - 2)) | DNNL_ARG_SRC_1,
                      false, order[k], md_of(order[k])});
  }
  if (op == "Mean") {
    po.append_eltwise(1.0f, algorithm::eltwise_linear, 1.0f / static_cast<float>(v.num_inputs()),
                      0.0f);
  }
  if (po.len() > 0) attr.set_post_ops(po);
  const memory::desc a_md = md_of(order[0]), b_md = md_of(order[1]);
  p.pd = dnnl::binary::primitive_desc(dnnl::binary::desc(algorithm::binary_add, a_md, b_md, y_md),
                                      attr, eng);
  p.args.push_back({DNNL_ARG_SRC_0, false, order[0], a_md});
  p.args.push_back({DNNL_ARG_SRC_1, false, order[1], b_md});
  p.args.push_back({DNNL_ARG_DST, true, 0, y_md});
  return p;
}

}  // namespace ampx::onednn
