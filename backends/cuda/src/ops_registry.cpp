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

const OpEntry* find_op(std::string_view op) noexcept {
  static constexpr std::array<OpEntry, 49> kOps = {{
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
