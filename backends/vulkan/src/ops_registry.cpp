// op type -> plan builder, and the dtype rule: every float tensor of a node
// shares one dtype (docs/OPS.md), which picks the shader variant. Ops that
// only move, select or compare elements also take integer and bool tensors
// (elem_storage()) and pick their variants themselves.
#include <stdexcept>
#include <string_view>

#include "op_plan.hpp"

namespace ampx::vulkan {
namespace {

// Ops whose builders pick their variants from the tensors' dtypes: Cast, and
// the element movers, selectors and comparers.
struct DtypeGenericOp {
  std::string_view op;
  OpPlan (*plan)(const NodeView&, const PlanTarget&);
};
constexpr DtypeGenericOp kDtypeGeneric[] = {
    {"Cast", plan_cast},
    {"Reshape", plan_identity},
    {"Flatten", plan_identity},
    {"Dropout", plan_identity},
    {"Transpose", plan_transpose},
    {"Slice", plan_slice},
    {"Concat", plan_concat},
    {"Split", plan_split},
    {"Gather", plan_gather},
    {"GatherElements", plan_gather_elements},
    {"GatherND", plan_gather_nd},
    {"ScatterND", plan_scatter_nd},
    {"Expand", plan_expand},
    {"Pad", plan_pad},
    {"Equal", plan_equal},
    {"Less", plan_equal},
    {"Greater", plan_equal},
    {"LessOrEqual", plan_equal},
    {"GreaterOrEqual", plan_equal},
    {"And", plan_equal},
    {"Or", plan_equal},
    {"Not", plan_equal},
    {"Where", plan_where},
    {"BitShift", plan_bitwise},
    {"BitwiseAnd", plan_bitwise},
    {"BitwiseOr", plan_bitwise},
    {"BitwiseXor", plan_bitwise},
    {"BitwiseNot", plan_bitwise},
    {"BitCast", plan_bitcast},
    {"TensorStats", plan_tensor_stats},
};

// unary.comp's ops.
bool is_unary(std::string_view op) {
  constexpr std::string_view kOps[] = {
      "Relu", "Sigmoid", "Tanh",       "Gelu", "Clip",  "HardSigmoid", "HardSwish", "LeakyRelu",
      "Erf",  "Sqrt",    "Reciprocal", "Exp",  "Log",   "Neg",         "Abs",       "Floor",
      "Ceil", "Round",   "Softplus",   "Mish", "Sin",   "Cos",         "Tan",       "Asin",
      "Acos", "Atan",    "Sinh",       "Cosh", "Asinh", "Acosh",       "Atanh"};
  for (std::string_view o : kOps)
    if (op == o) return true;
  return false;
}

// Shaders with a loop whose trip count grows with the data (a row, a
// reduction, a window, K, a sequence): their builders must estimate
// Dispatch::loop_iterations, or plan_node() refuses the plan, so a builder
// cannot forget the driver's loop budget.
bool loops_with_data(std::string_view shader) {
  constexpr std::string_view kShaders[] = {"reduce",
                                           "argmax",
                                           "cumsum",
                                           "softmax",
                                           "layernorm",
                                           "pool",
                                           "topk",
                                           "gather_grad",
                                           "gemm",
                                           "gemm_cpu",
                                           "conv2d",
                                           "conv2d_cpu",
                                           "conv_depthwise",
                                           "conv_transpose",
                                           "conv_transpose_cpu",
                                           "conv_grad_w",
                                           "conv_grad_w_cpu",
                                           "attention",
                                           "attention_bmask",
                                           "attention_sm64",
                                           "attention_bmask_sm64",
                                           "linear_attention",
                                           "bn_train",
                                           "bn_grad",
                                           "ln_grad",
                                           "softmax_grad",
                                           "xent",
                                           "pool_grad",
                                           "pool_indices",
                                           "col2im",
                                           "det",
                                           "update_guard",
                                           "tensor_stats_final"};
  const std::string_view base = shader.substr(0, shader.find('.'));
  for (std::string_view s : kShaders)
    if (base == s) return true;
  return false;
}

// The driver's loop budget (PlanTarget::loop_budget): llvmpipe ends an
// invocation's loops silently past it, so a plan whose dispatch could pass it
// is declined here, once for every builder, and placement runs the node on
// another device.
void check_loop_budget(const OpPlan& p, const PlanTarget& t, std::string_view op) {
  for (const Dispatch& d : p.dispatches) {
    if (d.loop_iterations == 0 && loops_with_data(d.shader))
      throw std::logic_error("Vulkan plan of " + std::string(op) + ": " + d.shader +
                             " has no loop estimate (Dispatch::loop_iterations)");
    if (t.loop_budget != 0 && d.loop_iterations > t.loop_budget)
      throw Unsupported(
          std::string(op) + ": " + d.shader + " loops " + std::to_string(d.loop_iterations) +
          " passes per invocation, past the driver's " + std::to_string(t.loop_budget) +
          "-iteration budget (llvmpipe ends longer loops silently)");
  }
}

OpPlan plan_unchecked(const NodeView& v, const PlanTarget& t);

}  // namespace

OpPlan plan_node(const NodeView& v, const PlanTarget& t) {
  OpPlan p = plan_unchecked(v, t);
  check_loop_budget(p, t, v.op_type());
  return p;
}

namespace {

OpPlan plan_unchecked(const NodeView& v, const PlanTarget& t) {
  // 32-bit indexing in every shader.
  bool uses16 = false;
  for (size_t i = 0; i < v.num_inputs() + v.num_outputs(); ++i) {
    const ampx_tensor_desc& d = i < v.num_inputs() ? v.input(i) : v.output(i - v.num_inputs());
    i32(numel(dims_of(d)));
    uses16 = uses16 || plugin_support::is_16bit_float(d.dtype);
  }
  const std::string_view op = v.op_type();
  for (const DtypeGenericOp& g : kDtypeGeneric) {
    if (op != g.op) continue;
    OpPlan p = g.plan(v, t);
    p.uses_16bit = uses16;
    return p;
  }
  // Integer arithmetic (the op set's R::kInteger ops on i64/i32).
  const ampx_dtype out_dt = v.num_outputs() ? v.output(0).dtype : AMPX_DTYPE_F32;
  if ((out_dt == AMPX_DTYPE_I64 || out_dt == AMPX_DTYPE_I32) &&
      (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Min" ||
       op == "Max" || op == "Neg" || op == "Abs")) {
    OpPlan p = plan_int_arith(v, t);
    p.uses_16bit = uses16;
    return p;
  }
  if ((op == "CumSum" || op == "CumProd") && plugin_support::is_integer_dtype(out_dt))
    throw Unsupported("integer " + std::string(op) +
                      ": no kernel (cumsum.comp runs in f32; cpu_ref runs it)");
  // Fused epilogues (docs/OPS.md): the GEMM and convolution shaders have
  // none yet, so such nodes are unsupported here and the host does not fuse.
  if ((op == "Gemm" || op == "MatMul" || op == "Conv2d" || op == "BatchNorm") &&
      v.get_string("activation", "none") != "none")
    throw Unsupported("no fused activation epilogue in the Vulkan kernels");
  if (op == "MatMul" && v.num_inputs() > 2)
    throw Unsupported("no fused MatMul bias in the Vulkan kernels");
  if (op == "Conv2d" && v.num_inputs() > 3)
    throw Unsupported("no fused Conv2d residual in the Vulkan kernels");
  if (op == "Conv2dGradWeight" && v.num_outputs() > 1)
    throw Unsupported("no fused bias gradient (bias_gradient) in the Vulkan kernels");
  // Float ops: the float dtype is the output's, except ArgMax's, ArgMin's
  // and MaxPoolIndices' (i64 out).
  const ampx_dtype dt = op == "ArgMax" || op == "ArgMin" || op == "MaxPoolIndices"
                            ? v.input(0).dtype
                            : v.output(0).dtype;
  const Variant var = variant_for(dt, t);
  OpPlan p;
  if (op == "Gemm")
    p = plan_gemm(v, var, t);
  else if (op == "MatMul")
    p = plan_matmul(v, var, t);
  else if (op == "Conv2d")
    p = plan_conv2d(v, var, t);
  else if (op == "ConvTranspose")
    p = plan_conv_transpose(v, var, t);
  else if (is_unary(op))
    p = plan_unary(v, var);
  else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
           op == "PRelu" || op == "Mod")
    p = plan_binary(v, var);
  else if (op == "Min" || op == "Max" || op == "Sum" || op == "Mean")
    p = plan_variadic(v, var);
  else if (op == "Softmax" || op == "LogSoftmax")
    p = plan_softmax(v, var);
  else if (op == "LayerNorm" || op == "RMSNorm")
    p = plan_layernorm(v, var);
  else if (op == "BatchNorm")
    p = plan_batchnorm(v, var);
  else if (op == "MaxPool" || op == "AveragePool")
    p = plan_pool(v, var);
  else if (op == "GlobalAveragePool")
    p = plan_global_pool(v, var, t);
  else if (op.starts_with("Reduce"))
    p = plan_reduce(v, var, t);
  else if (op == "ArgMax" || op == "ArgMin")
    p = plan_argmax(v, var);
  else if (op == "Resize")
    p = plan_resize(v, var);
  else if (op == "CumSum" || op == "CumProd")
    p = plan_cumsum(v, var);
  else if (op == "TopK")
    p = plan_topk(v, var);
  else if (op == "RotaryEmbedding")
    p = plan_rotary_embedding(v, var);
  else if (op == "Attention")
    p = plan_attention(v, var, t);
  else if (op == "LinearAttention")
    p = plan_linear_attention(v, var);
  else if (op == "MaxPoolIndices")
    p = plan_maxpool_indices(v, var);
  else if (op == "Col2Im")
    p = plan_col2im(v, var);
  else if (op == "GridSample")
    p = plan_grid_sample(v, var);
  else if (op == "Det")
    p = plan_det(v, var, t);
  else if (op == "ReluGrad" || op == "SigmoidGrad" || op == "TanhGrad" || op == "GeluGrad" ||
           op == "ClipGrad")
    p = plan_elementwise_grad(v, var);
  else if (op == "SoftmaxGrad")
    p = plan_softmax_grad(v, var);
  else if (op == "SoftmaxCrossEntropy")
    p = plan_softmax_cross_entropy(v, var);
  else if (op == "SoftmaxCrossEntropyGrad")
    p = plan_softmax_cross_entropy_grad(v, var);
  else if (op == "MaxPoolGrad" || op == "AveragePoolGrad")
    p = plan_pool_grad(v, var);
  else if (op == "Conv2dGradWeight")
    p = plan_conv2d_grad_weight(v, var, t);
  else if (op == "BatchNormTraining")
    p = plan_batchnorm_training(v, var);
  else if (op == "BatchNormGrad")
    p = plan_batchnorm_grad(v, var);
  else if (op == "LayerNormGrad")
    p = plan_layernorm_grad(v, var);
  else if (op == "SliceGrad")
    p = plan_slice_grad(v, var);
  else if (op == "GatherGrad")
    p = plan_gather_grad(v, var);
  else if (op == "DropoutTraining")
    p = plan_dropout_training(v, var);
  else if (op == "SgdUpdate")
    p = plan_sgd_update(v, var);
  else if (op == "AdamUpdate")
    p = plan_adam_update(v, var);
  else if (op == "UpdateGuard")
    p = plan_update_guard(v, var);
  else
    throw Unsupported("no Vulkan kernel for op " + std::string(op));
  p.variant = var;
  p.uses_16bit = uses16;
  return p;
}

}  // namespace

}  // namespace ampx::vulkan
