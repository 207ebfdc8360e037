// What every CUDA op implementation sees, and the registry that maps an op
// type to its factory and to its capability class.
//
// Nodes reach a factory only after the op set's validation (opset::validate) accepted them (arity,
// ranks, dims, attribute values, dtype rule: the same checks and messages as
// the oracle) and after answer() (capability.hpp) said they run here, so a
// factory reads attributes and shapes without re-checking them.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ampx/backend_api.h"
#include "ampx/plugin_support.hpp"
#include "device.hpp"
#include "kernels.hpp"

namespace ampx::cuda {

struct TensorInfo {
  ampx_dtype dtype = AMPX_DTYPE_INVALID;
  std::vector<int64_t> dims;
  int64_t numel = 0;
  uint64_t bytes = 0;
  int rank() const noexcept { return static_cast<int>(dims.size()); }
};

// A prepared op: launch() enqueues its work on the device's stream. Pointers
// are device pointers to exactly the described tensors, element-aligned, and
// no output overlaps an input (the plugin stages otherwise).
class CudaOp {
 public:
  virtual ~CudaOp() = default;
  virtual void launch(std::span<const void* const> in, std::span<void* const> out) = 0;
};

struct OpContext {
  const plugin_support::NodeView& v;
  std::vector<TensorInfo> in, out;
  DeviceContext& dev;
  const DeviceInfo& info;
  OpContext(const plugin_support::NodeView& view, DeviceContext& d, const DeviceInfo& i);
};

using OpFactory = std::unique_ptr<CudaOp> (*)(OpContext&);

// How the capability answer is made for an op (capability.cpp).
enum class OpClass {
  kContraction,   // MatMul, Gemm: cuBLASLt, tensor cores in 16-bit
  kConvolution,   // Conv2d, Conv2dGradWeight: cuDNN when usable, else the direct kernel
  kCompute,       // own elementwise / normalisation / pooling / reduction kernels
  kDataMovement,  // bit copies, any dtype
  kCast,
  kProbe,  // TensorStats: reads each input in its own dtype, computes nothing 16-bit
  // Own kernels for every integer dtype as well as f32/f16/bf16: the bit
  // ops (integers only, by the op set), CumProd.
  kIntegerCompute,
};

struct OpEntry {
  std::string_view op;
  OpClass cls;
  OpFactory make;
};
// NULL for an op type this plugin has no kernel for.
const OpEntry* find_op(std::string_view op) noexcept;

// Factories, one per op family (ops_*.cpp).
std::unique_ptr<CudaOp> make_gemm(OpContext&);
std::unique_ptr<CudaOp> make_matmul(OpContext&);
std::unique_ptr<CudaOp> make_conv2d(OpContext&);
std::unique_ptr<CudaOp> make_unary(OpContext&);
std::unique_ptr<CudaOp> make_binary(OpContext&);
std::unique_ptr<CudaOp> make_batchnorm(OpContext&);
std::unique_ptr<CudaOp> make_layernorm(OpContext&);
std::unique_ptr<CudaOp> make_softmax(OpContext&);
std::unique_ptr<CudaOp> make_pool(OpContext&);
std::unique_ptr<CudaOp> make_global_avgpool(OpContext&);
std::unique_ptr<CudaOp> make_reduce(OpContext&);
std::unique_ptr<CudaOp> make_copy(OpContext&);
std::unique_ptr<CudaOp> make_transpose(OpContext&);
std::unique_ptr<CudaOp> make_concat(OpContext&);
std::unique_ptr<CudaOp> make_slice(OpContext&);
std::unique_ptr<CudaOp> make_gather(OpContext&);
std::unique_ptr<CudaOp> make_cast(OpContext&);
// Training ops (ops_backward.cpp, ops_conv_grad.cpp, ops_train.cpp).
std::unique_ptr<CudaOp> make_elementwise_grad(OpContext&);
std::unique_ptr<CudaOp> make_softmax_grad(OpContext&);
std::unique_ptr<CudaOp> make_layernorm_grad(OpContext&);
std::unique_ptr<CudaOp> make_batchnorm_training(OpContext&);
std::unique_ptr<CudaOp> make_batchnorm_grad(OpContext&);
std::unique_ptr<CudaOp> make_pool_grad(OpContext&);
std::unique_ptr<CudaOp> make_conv2d_grad_weight(OpContext&);
std::unique_ptr<CudaOp> make_cross_entropy(OpContext&);
std::unique_ptr<CudaOp> make_sgd_update(OpContext&);
std::unique_ptr<CudaOp> make_adam_update(OpContext&);
std::unique_ptr<CudaOp> make_update_guard(OpContext&);
std::unique_ptr<CudaOp> make_tensor_stats(OpContext&);
// The later ONNX ops of issue 40 (ops_onnx.cpp; BitCast is make_copy).
std::unique_ptr<CudaOp> make_math_unary(OpContext&);
std::unique_ptr<CudaOp> make_bitwise(OpContext&);
std::unique_ptr<CudaOp> make_bitwise_not(OpContext&);
std::unique_ptr<CudaOp> make_cum_prod(OpContext&);
std::unique_ptr<CudaOp> make_rmsnorm(OpContext&);
std::unique_ptr<CudaOp> make_rotary_embedding(OpContext&);
std::unique_ptr<CudaOp> make_col2im(OpContext&);
std::unique_ptr<CudaOp> make_maxpool_indices(OpContext&);
// Importer ops (ops_attention.cpp, ops_sample_det.cpp).
std::unique_ptr<CudaOp> make_attention(OpContext&);
std::unique_ptr<CudaOp> make_linear_attention(OpContext&);
std::unique_ptr<CudaOp> make_grid_sample(OpContext&);
std::unique_ptr<CudaOp> make_det(OpContext&);
// Their kernels' parameters from the node and its inputs (also used by
// tests/cuda's host emulation of the kernels).
kern::AttentionParams attention_params(const plugin_support::NodeView& node,
                                       const std::vector<TensorInfo>& in);
kern::LinearAttentionParams linear_attention_params(const plugin_support::NodeView& node,
                                                    const std::vector<TensorInfo>& in);
kern::GridSampleParams grid_sample_params(const plugin_support::NodeView& node,
                                          const std::vector<TensorInfo>& in);

// Whether Conv2d `node` can go through cuDNN here (loaded, symmetric pads,
// dims within int); otherwise false and why. Shared by the answer and the
// factory so they never disagree.
bool cudnn_conv_usable(const plugin_support::NodeView& v, const CudnnLibrary& cudnn,
                       std::string* why);

// NumPy broadcasting of a and b into y (ops_elementwise.cpp): y's dims and
// each input's element strides over them, 0 where broadcast.
kern::Broadcast make_broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                               const std::vector<int64_t>& y);
// Row-major dense strides of dims, in elements.
std::vector<int64_t> dense_strides(const std::vector<int64_t>& dims);
// Checks a launch result: throws with the CUDA error text.
void check_kernel(cudaError_t e, const char* kernel);

}  // namespace ampx::cuda
