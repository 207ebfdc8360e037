#include <array>

#include "cuda_error.hpp"
#include "ops.hpp"

namespace ampx::cuda {

OpContext::OpContext(const plugin_support::NodeView& view, DeviceContext& d, const DeviceInfo& i)
    : v(view), dev(d), info(i) {
  auto fill = [](const ampx_tensor_desc& t) {
    TensorInfo ti;
    ti.dtype = t.dtype;
    ti.dims.assign(t.dims, t.dims + t.rank);
    ti.numel = plugin_support::element_count(t);
    ti.bytes = plugin_support::byte_size(t);
    return ti;
  };
  for (size_t k = 0; k < v.num_inputs(); ++k) in.push_back(fill(v.input(k)));
  for (size_t k = 0; k < v.num_outputs(); ++k) out.push_back(fill(v.output(k)));
}

// Entries of the later ONNX ops of issue 40 (the block at the end of kOps).
constexpr size_t kOnnxOps = 35;

const OpEntry* find_op(std::string_view op) noexcept {
  static constexpr std::array<OpEntry, 49 + kOnnxOps> kOps = {{
      {"MatMul", OpClass::kContraction, &make_matmul},
      {"Gemm", OpClass::kContraction, &make_gemm},
      {"Conv2d", OpClass::kConvolution, &make_conv2d},
      {"Relu", OpClass::kCompute, &make_unary},
      {"Sigmoid", OpClass::kCompute, &make_unary},
      {"Tanh", OpClass::kCompute, &make_unary},
      {"Gelu", OpClass::kCompute, &make_unary},
      {"Clip", OpClass::kCompute, &make_unary},
      {"Add", OpClass::kCompute, &make_binary},
      {"Sub", OpClass::kCompute, &make_binary},
      {"Mul", OpClass::kCompute, &make_binary},
      {"Div", OpClass::kCompute, &make_binary},
      {"BatchNorm", OpClass::kCompute, &make_batchnorm},
      {"LayerNorm", OpClass::kCompute, &make_layernorm},
      {"Softmax", OpClass::kCompute, &make_softmax},
      {"MaxPool", OpClass::kCompute, &make_pool},
      {"AveragePool", OpClass::kCompute, &make_pool},
      {"GlobalAveragePool", OpClass::kCompute, &make_global_avgpool},
      {"ReduceMean", OpClass::kCompute, &make_reduce},
      {"ReduceSum", OpClass::kCompute, &make_reduce},
      {"Reshape", OpClass::kDataMovement, &make_copy},
      {"Flatten", OpClass::kDataMovement, &make_copy},
      {"Dropout", OpClass::kDataMovement, &make_copy},
      {"Transpose", OpClass::kDataMovement, &make_transpose},
      {"Concat", OpClass::kDataMovement, &make_concat},
      {"Slice", OpClass::kDataMovement, &make_slice},
      {"Gather", OpClass::kDataMovement, &make_gather},
      // Training ops (docs/OPS.md). Not here yet: SliceGrad, GatherGrad,
      // DropoutTraining (answered "no CUDA kernel", run on the fallback).
      {"ReluGrad", OpClass::kCompute, &make_elementwise_grad},
      {"SigmoidGrad", OpClass::kCompute, &make_elementwise_grad},
      {"TanhGrad", OpClass::kCompute, &make_elementwise_grad},
      {"GeluGrad", OpClass::kCompute, &make_elementwise_grad},
      {"ClipGrad", OpClass::kCompute, &make_elementwise_grad},
      {"SoftmaxGrad", OpClass::kCompute, &make_softmax_grad},
      {"LayerNormGrad", OpClass::kCompute, &make_layernorm_grad},
      {"BatchNormTraining", OpClass::kCompute, &make_batchnorm_training},
      {"BatchNormGrad", OpClass::kCompute, &make_batchnorm_grad},
      {"Conv2dGradWeight", OpClass::kConvolution, &make_conv2d_grad_weight},
      {"MaxPoolGrad", OpClass::kCompute, &make_pool_grad},
      {"AveragePoolGrad", OpClass::kCompute, &make_pool_grad},
      {"SoftmaxCrossEntropy", OpClass::kCompute, &make_cross_entropy},
      {"SoftmaxCrossEntropyGrad", OpClass::kCompute, &make_cross_entropy},
      // f32 only: opset::validate refuses a 16-bit update before answer().
      {"SgdUpdate", OpClass::kCompute, &make_sgd_update},
      {"AdamUpdate", OpClass::kCompute, &make_adam_update},
      {"UpdateGuard", OpClass::kCompute, &make_update_guard},
      {"TensorStats", OpClass::kProbe, &make_tensor_stats},
      // The later ONNX ops of issue 40 (ops_onnx.cpp): kOnnxOps entries.
      {"Sin", OpClass::kCompute, &make_math_unary},
      {"Cos", OpClass::kCompute, &make_math_unary},
      {"Tan", OpClass::kCompute, &make_math_unary},
      {"Asin", OpClass::kCompute, &make_math_unary},
      {"Acos", OpClass::kCompute, &make_math_unary},
      {"Atan", OpClass::kCompute, &make_math_unary},
      {"Sinh", OpClass::kCompute, &make_math_unary},
      {"Cosh", OpClass::kCompute, &make_math_unary},
      {"Asinh", OpClass::kCompute, &make_math_unary},
      {"Acosh", OpClass::kCompute, &make_math_unary},
      {"Atanh", OpClass::kCompute, &make_math_unary},
      {"LeakyRelu", OpClass::kCompute, &make_math_unary},
      {"HardSigmoid", OpClass::kCompute, &make_math_unary},
      {"HardSwish", OpClass::kCompute, &make_math_unary},
      {"Erf", OpClass::kCompute, &make_math_unary},
      {"Sqrt", OpClass::kCompute, &make_math_unary},
      {"Reciprocal", OpClass::kCompute, &make_math_unary},
      {"Exp", OpClass::kCompute, &make_math_unary},
      {"Log", OpClass::kCompute, &make_math_unary},
      {"Floor", OpClass::kCompute, &make_math_unary},
      {"Ceil", OpClass::kCompute, &make_math_unary},
      {"Round", OpClass::kCompute, &make_math_unary},
      {"Softplus", OpClass::kCompute, &make_math_unary},
      {"Mish", OpClass::kCompute, &make_math_unary},
      {"BitShift", OpClass::kIntegerCompute, &make_bitwise},
      {"BitwiseAnd", OpClass::kIntegerCompute, &make_bitwise},
      {"BitwiseOr", OpClass::kIntegerCompute, &make_bitwise},
      {"BitwiseXor", OpClass::kIntegerCompute, &make_bitwise},
      {"BitwiseNot", OpClass::kIntegerCompute, &make_bitwise_not},
      {"BitCast", OpClass::kDataMovement, &make_copy},  // the bytes as they are
      {"CumProd", OpClass::kIntegerCompute, &make_cum_prod},
      {"RMSNorm", OpClass::kCompute, &make_rmsnorm},
      {"RotaryEmbedding", OpClass::kCompute, &make_rotary_embedding},
      {"Col2Im", OpClass::kCompute, &make_col2im},
      {"MaxPoolIndices", OpClass::kCompute, &make_maxpool_indices},
      // Importer ops: Attention, LinearAttention, GridSample, Det.
      {"Attention", OpClass::kCompute, &make_attention},
      {"LinearAttention", OpClass::kCompute, &make_linear_attention},
      {"GridSample", OpClass::kCompute, &make_grid_sample},
      {"Det", OpClass::kCompute, &make_det},
  }};
  static constexpr OpEntry kCast{"Cast", OpClass::kCast, &make_cast};
  if (op == kCast.op) return &kCast;
  for (const OpEntry& e : kOps)
    if (e.op == op) return &e;
  return nullptr;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

void check_kernel(cudaError_t e, const char* kernel) {
  if (e != cudaSuccess) throw_cuda(e, std::string("launch of kernel ") + kernel);
}

}  // namespace ampx::cuda
