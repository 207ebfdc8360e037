// What a node becomes on the device, before any Vulkan object exists: a list
// of dispatches, each naming a shader variant, its specialisation constants,
// its int32 parameters and which of the node's tensors it binds. Planning is
// pure (no device calls), so query_capability builds the same plan that
// kernel_prepare turns into pipelines: an op is answered `native` or
// `emulated` only if its plan exists.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ampx/plugin_support.hpp"
#include "physical_device.hpp"
#include "vk_error.hpp"

namespace ampx::vulkan {

using plugin_support::NodeView;

// Which precision variant of the shaders runs (common.glsl).
enum class Variant { kF32, kF16, kF16S };
const char* variant_suffix(Variant v) noexcept;  // "f32", "f16", "f16s"

// A tensor bound to a dispatch: input or output `index` of the node, or
// the node's scratch buffer (OpPlan::scratch_bytes), with the size of the
// shader's element (offsets are passed in elements).
struct TensorRef {
  bool output = false;
  uint32_t index = 0;
  uint32_t elem_bytes = 4;
  bool scratch = false;
};
inline TensorRef in_ref(uint32_t i, uint32_t elem) {
  return {false, i, elem};
}
inline TensorRef out_ref(uint32_t i, uint32_t elem) {
  return {true, i, elem};
}
inline TensorRef scratch_ref() {
  return {false, 0, 4, true};
}

struct Dispatch {
  std::string shader;              // embedded name, "gemm.f16"
  std::vector<uint32_t> spec;      // constant_id i = spec[i]
  std::vector<int32_t> params;     // binding 0
  std::vector<TensorRef> tensors;  // bindings 1..n
  // Workgroups in x, y, z. For 1-D kernels (`linear`), groups[0] is the
  // total and the launcher lays it out as x*y with pc.gx = the x width.
  std::array<uint64_t, 3> groups{1, 1, 1};
  bool linear = false;
  // Worst-case loop passes of one invocation, counted as llvmpipe counts
  // them (loop_passes()): plan_node() declines a plan whose dispatch would
  // pass PlanTarget::loop_budget, and refuses to plan a shader of
  // kDataLoopShaders (ops_registry.cpp) whose builder left this 0. Loops of
  // a fixed small count (rank loops, 64-wide shared-memory trees) may be
  // left out: the budget keeps a margin for them.
  uint64_t loop_iterations = 0;
};

struct OpPlan {
  std::vector<Dispatch> dispatches;
  // Bytes of a device buffer the node owns for its dispatches' partial
  // results (a multi-workgroup reduction's per-workgroup values, combined by
  // a later dispatch of the same node). Its contents do not outlive one
  // launch: nothing may read what an earlier launch left there.
  uint64_t scratch_bytes = 0;
  bool uses_16bit = false;  // a 16-bit tensor is involved
  Variant variant = Variant::kF32;
};

// Device facts a plan depends on.
struct PlanTarget {
  bool float16 = false;
  bool storage16 = false;
  bool storage8 = false;      // storageBuffer8BitAccess: bool, i8, u8 tensors
  bool blocked_gemm = false;  // PhysicalDevice::blocked_gemm
  bool float64 = false;       // shaderFloat64: Attention's softmax_f64, Det's f64 LU
  uint64_t loop_budget = 0;   // PhysicalDevice::loop_budget (0: none)
};

// The plan for a node already validated against docs/OPS.md
// (opset::validate). Throws Unsupported for what has no kernel here.
OpPlan plan_node(const NodeView& v, const PlanTarget& t);

// ---- helpers for the op builders (op_plan.cpp)
// The variant for float dtype `dt`; throws Unsupported (bf16, f16 without
// 16-bit storage).
Variant variant_for(ampx_dtype dt, const PlanTarget& t);
uint32_t elem_bytes(ampx_dtype dt);
// How a kernel that only moves, selects or compares elements (copy, where,
// equal) stores a tensor of dtype `dt`: floats in their precision variant,
// integers as raw 32-bit words (`words` per element: 2 for i64 and f64),
// bool/i8/u8 as bytes (needs 8-bit storage). Throws Unsupported (bf16, f16
// without 16-bit storage, bytes without 8-bit storage).
struct ElemStorage {
  std::string suffix;               // shader variant: "f32", "f16", "f16s", "u32", "u8"
  Variant variant = Variant::kF32;  // what the answer reports (kF32 unless f16)
  uint32_t words = 1;               // shader elements per tensor element
  uint32_t bytes = 4;               // bytes per shader element
};
ElemStorage elem_storage(ampx_dtype dt, const PlanTarget& t);
std::vector<int64_t> dims_of(const ampx_tensor_desc& t);
int64_t numel(const std::vector<int64_t>& d);
std::vector<int64_t> strides_of(const std::vector<int64_t>& d);  // row-major, elements
// dims viewed as [outer, len, inner] around `axis` (negative: from the end),
// the rows the softmax, argmax, cumsum and topk shaders walk.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
};
AxisSplit split_at_axis(const std::vector<int64_t>& d, int64_t axis);
int32_t i32(int64_t v);        // checked narrowing (throws Unsupported)
int32_t float_bits(double v);  // f32 bits as int32 for the params buffer
// The window parameters pool.comp and pool_grad.comp share: N*C, the input
// [H, W] `x` and output [OH, OW] `y` sizes, kernel, strides, pads and
// AveragePool's count_include_pad (0 for MaxPool).
std::vector<int32_t> pool_params(const NodeView& v, const std::vector<int64_t>& x,
                                 const std::vector<int64_t>& y, bool is_max);
// The passes a loop of `n` iterations whose body makes `body` passes of
// inner loops costs in llvmpipe's count: each iteration's back edge, the
// inner passes, and the exiting pass (n * (1 + body) + 1). Saturates.
uint64_t loop_passes(int64_t n, uint64_t body = 0);
// Iterations of `for (j = t; j < len; j += step)`: ceil(len / step).
int64_t strided_trips(int64_t len, int64_t step);
// A 1-D dispatch of `items` work items, `per_group` per workgroup.
Dispatch linear_dispatch(std::string shader, uint64_t items, uint64_t per_group = 256);

// Builders, one per op family (ops_*.cpp).
OpPlan plan_gemm(const NodeView& v, Variant var, const PlanTarget& t);
OpPlan plan_matmul(const NodeView& v, Variant var, const PlanTarget& t);
OpPlan plan_conv2d(const NodeView& v, Variant var, const PlanTarget& t);
OpPlan plan_conv_transpose(const NodeView& v, Variant var, const PlanTarget& t);
OpPlan plan_unary(const NodeView& v, Variant var);
OpPlan plan_binary(const NodeView& v, Variant var);    // Add, Sub, Mul, Div, Pow, PRelu, Mod
OpPlan plan_variadic(const NodeView& v, Variant var);  // Min, Max, Sum, Mean: 1..7 inputs
// i64/i32 Add, Sub, Mul, Div, Mod, Min, Max (1-2 inputs), Neg, Abs.
OpPlan plan_int_arith(const NodeView& v, const PlanTarget& t);
// Equal and the orderings (f32/f16, i64/i32 -> bool); And, Or, Not (bool).
OpPlan plan_equal(const NodeView& v, const PlanTarget& t);
OpPlan plan_where(const NodeView& v, const PlanTarget& t);  // bool cond, f32/f16/integer x, y
// BitShift, BitwiseAnd/Or/Xor/Not on i64/i32 words and i8/u8 bytes.
OpPlan plan_bitwise(const NodeView& v, const PlanTarget& t);
OpPlan plan_softmax(const NodeView& v, Variant var);  // Softmax, LogSoftmax
OpPlan plan_layernorm(const NodeView& v, Variant var);
OpPlan plan_batchnorm(const NodeView& v, Variant var);
OpPlan plan_pool(const NodeView& v, Variant var);
OpPlan plan_global_pool(const NodeView& v, Variant var, const PlanTarget& t);
// ReduceSum ... ReduceLogSumExp; in two passes past the loop budget.
OpPlan plan_reduce(const NodeView& v, Variant var, const PlanTarget& t);
OpPlan plan_argmax(const NodeView& v, Variant var);  // ArgMax, ArgMin: float in, i64 out
OpPlan plan_resize(const NodeView& v, Variant var);  // nearest, linear (ops_onnx.cpp)
OpPlan plan_cumsum(const NodeView& v, Variant var);  // CumSum, CumProd: floats (ops_onnx.cpp)
OpPlan plan_topk(const NodeView& v, Variant var);    // floats, rows <= 4096 (ops_onnx.cpp)
// The transformer ops (ops_attention.cpp).
OpPlan plan_rotary_embedding(const NodeView& v, Variant var);  // i64/i32 position_ids
// Heads of at most 512; bool masks need 8-bit storage, softmax_f64 shaderFloat64.
OpPlan plan_attention(const NodeView& v, Variant var, const PlanTarget& t);
OpPlan plan_linear_attention(const NodeView& v, Variant var);  // every update rule
// The vision ops (ops_vision.cpp).
OpPlan plan_maxpool_indices(const NodeView& v, Variant var);           // float in, i64 out
OpPlan plan_col2im(const NodeView& v, Variant var);                    // any spatial rank
OpPlan plan_grid_sample(const NodeView& v, Variant var);               // up to 6 spatial axes
OpPlan plan_det(const NodeView& v, Variant var, const PlanTarget& t);  // f64, M <= 64
// Data movement, in any dtype elem_storage() has (they set the variant).
OpPlan plan_identity(const NodeView& v, const PlanTarget& t);  // Reshape, Flatten, Dropout
OpPlan plan_transpose(const NodeView& v, const PlanTarget& t);
OpPlan plan_slice(const NodeView& v, const PlanTarget& t);
OpPlan plan_concat(const NodeView& v, const PlanTarget& t);
OpPlan plan_split(const NodeView& v, const PlanTarget& t);
OpPlan plan_expand(const NodeView& v, const PlanTarget& t);
OpPlan plan_pad(const NodeView& v, const PlanTarget& t);              // ops_onnx.cpp
OpPlan plan_gather_elements(const NodeView& v, const PlanTarget& t);  // ops_onnx.cpp
OpPlan plan_gather_nd(const NodeView& v, const PlanTarget& t);        // ops_onnx.cpp
OpPlan plan_scatter_nd(const NodeView& v, const PlanTarget& t);       // ops_onnx.cpp
OpPlan plan_gather(const NodeView& v, const PlanTarget& t);
OpPlan plan_cast(const NodeView& v, const PlanTarget& t);
OpPlan plan_bitcast(const NodeView& v, const PlanTarget& t);  // a raw copy of the bytes
// Training ops (ops_train.cpp); the updates are f32 only.
OpPlan plan_elementwise_grad(const NodeView& v, Variant var);  // Relu/Sigmoid/Tanh/Gelu/ClipGrad
OpPlan plan_softmax_grad(const NodeView& v, Variant var);
OpPlan plan_softmax_cross_entropy(const NodeView& v, Variant var);  // i64 labels
OpPlan plan_softmax_cross_entropy_grad(const NodeView& v, Variant var);
OpPlan plan_pool_grad(const NodeView& v, Variant var);  // MaxPoolGrad, AveragePoolGrad
OpPlan plan_conv2d_grad_weight(const NodeView& v, Variant var, const PlanTarget& t);
OpPlan plan_batchnorm_training(const NodeView& v, Variant var);
OpPlan plan_batchnorm_grad(const NodeView& v, Variant var);
OpPlan plan_layernorm_grad(const NodeView& v, Variant var);
OpPlan plan_slice_grad(const NodeView& v, Variant var);
OpPlan plan_gather_grad(const NodeView& v, Variant var);       // i32/i64 indices
OpPlan plan_dropout_training(const NodeView& v, Variant var);  // i64 seed
OpPlan plan_sgd_update(const NodeView& v, Variant var);
OpPlan plan_adam_update(const NodeView& v, Variant var);
OpPlan plan_update_guard(const NodeView& v, Variant var);          // any number of gradients
OpPlan plan_tensor_stats(const NodeView& v, const PlanTarget& t);  // each input its own dtype

}  // namespace ampx::vulkan
