// op type -> plan builder, and the dtype rule: every float tensor of a node
// shares one dtype (docs/OPS.md), which picks the shader variant.
#include <string_view>

#include "op_plan.hpp"

namespace ampx::vulkan {

OpPlan plan_node(const NodeView& v, const PlanTarget& t) {
  // 32-bit indexing in every shader.
  bool uses16 = false;
  for (size_t i = 0; i < v.num_inputs() + v.num_outputs(); ++i) {
    const ampx_tensor_desc& d = i < v.num_inputs() ? v.input(i) : v.output(i - v.num_inputs());
    i32(numel(dims_of(d)));
    uses16 = uses16 || plugin_support::is_16bit_float(d.dtype);
  }
  const std::string_view op = v.op_type();
  if (op == "Cast") {
    OpPlan p = plan_cast(v, t);
    p.uses_16bit = uses16;
    return p;
  }
  // Fused epilogues (docs/OPS.md): the GEMM and convolution shaders have
  // none yet, so such nodes are unsupported here and the host does not fuse.
  if ((op == "Gemm" || op == "MatMul" || op == "Conv2d") &&
      v.get_string("activation", "none") != "none")
    throw Unsupported("no fused activation epilogue in the Vulkan kernels");
  if (op == "MatMul" && v.num_inputs() > 2)
    throw Unsupported("no fused MatMul bias in the Vulkan kernels");
  const ampx_dtype dt = v.output(0).dtype;
  const Variant var = variant_for(dt, t);
  OpPlan p;
  if (op == "Gemm")
    p = plan_gemm(v, var, t);
  else if (op == "MatMul")
    p = plan_matmul(v, var, t);
  else if (op == "Conv2d")
    p = plan_conv2d(v, var, t);
  else if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Gelu" || op == "Clip")
    p = plan_unary(v, var);
  else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
    p = plan_binary(v, var);
  else if (op == "Softmax")
    p = plan_softmax(v, var);
  else if (op == "LayerNorm")
    p = plan_layernorm(v, var);
  else if (op == "BatchNorm")
    p = plan_batchnorm(v, var);
  else if (op == "MaxPool" || op == "AveragePool")
    p = plan_pool(v, var);
  else if (op == "GlobalAveragePool")
    p = plan_global_pool(v, var);
  else if (op == "ReduceMean" || op == "ReduceSum")
    p = plan_reduce(v, var);
  else if (op == "Reshape" || op == "Flatten" || op == "Dropout")
    p = plan_identity(v, var);
  else if (op == "Transpose")
    p = plan_transpose(v, var);
  else if (op == "Slice")
    p = plan_slice(v, var);
  else if (op == "Concat")
    p = plan_concat(v, var);
  else if (op == "Gather")
    p = plan_gather(v, var);
  else
    throw Unsupported("no Vulkan kernel for op " + std::string(op));
  p.variant = var;
  p.uses_16bit = uses16;
  return p;
}

}  // namespace ampx::vulkan
