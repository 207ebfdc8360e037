// Op builders: one oneDNN primitive descriptor per node of docs/OPS.md.
// Each throws NoPrimitive (or dnnl::error) when oneDNN cannot run the node
// as described; nodes are already validated against docs/OPS.md by then.
#pragma once

#include <string_view>

#include "dnnl_util.hpp"

namespace ampx::onednn {

using plugin_support::NodeView;

// ops_contraction.cpp
PrimitivePlan plan_conv2d(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_matmul(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_gemm(const NodeView& v, const dnnl::engine& eng);
// ops_elementwise.cpp: Relu, Sigmoid, Tanh, Gelu, Clip; Add, Sub, Mul, Div;
// Softmax
PrimitivePlan plan_eltwise(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_binary(const NodeView& v, const dnnl::engine& eng);
// Whether plan_binary() fits the node: oneDNN broadcasts only its second
// operand, so A may broadcast only where swapping the operands is exact (Add
// and Mul; Sub negated), and never both. The rest (a scalar over a tensor in
// Div) runs on the loop.
bool binary_has_primitive(const NodeView& v);
PrimitivePlan plan_softmax(const NodeView& v, const dnnl::engine& eng);
// ops_norm_pool.cpp
PrimitivePlan plan_batchnorm(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_layernorm(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_pool(const NodeView& v, const dnnl::engine& eng);  // Max/Average/GlobalAverage
PrimitivePlan plan_reduce(const NodeView& v, const dnnl::engine& eng);
// ops_layout.cpp: Transpose, Cast (between f32/f16/bf16), Concat
PrimitivePlan plan_transpose(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_cast(const NodeView& v, const dnnl::engine& eng);

// ops_onnx.cpp: the importer's ops with a oneDNN primitive
// Whether oneDNN has a primitive for this node of the importer's ops as
// described (Pow by a constant scalar, Resize in oneDNN's coordinate modes,
// ConvTranspose with output_padding within the end pads, ...).
bool onnx_op_has_primitive(const NodeView& v);
PrimitivePlan plan_onnx_eltwise(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_prelu(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_log_softmax(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_reduce_max(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_conv_transpose(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_resize(const NodeView& v, const dnnl::engine& eng);

// ops_onnx_later.cpp: the later ONNX ops (opset::is_reference_only) with a
// oneDNN primitive: Round, Abs, Softplus, Mish (eltwise), Sum, Mean (binary
// add with post-ops), ReduceProd, ReduceL2, ReduceSumSquare (reduction).
// Whether this node of those ops goes to a primitive at all (float dtypes,
// no empty tensor, Sum/Mean with input 0 or 1 of the output's shape); the
// rest of them, and every other reference-only op, runs as a loop.
bool later_op_has_primitive(const NodeView& v);
PrimitivePlan plan_later_op(const NodeView& v, const dnnl::engine& eng);

// ops_backward.cpp: the training ops that are one backward primitive each:
// ReluGrad, SigmoidGrad, TanhGrad, GeluGrad, ClipGrad (eltwise_backward),
// SoftmaxGrad (softmax_backward), Conv2dGradWeight
// (convolution_backward_weights), AveragePoolGrad (pooling_v2_backward). The
// others (MaxPoolGrad, BatchNormTraining, BatchNormGrad, LayerNormGrad) take
// several steps: train_kernels.hpp.
PrimitivePlan plan_eltwise_grad(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_softmax_grad(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_conv_grad_weight(const NodeView& v, const dnnl::engine& eng);
PrimitivePlan plan_avgpool_grad(const NodeView& v, const dnnl::engine& eng);

// The window geometry of MaxPoolGrad / AveragePoolGrad (X [N,C,H,W] dims
// `xd`, dY dims `yd`) in oneDNN's terms: ceil_mode as extra right padding,
// as plan_pool does. Throws NoPrimitive where oneDNN's averaging differs.
struct PoolGradGeometry {
  dims_t kernel, strides, pl, pr;
  dnnl::algorithm alg = dnnl::algorithm::pooling_max;
};
PoolGradGeometry pool_grad_geometry(const NodeView& v, const dims_t& xd, const dims_t& yd);
// forward_training pooling over x -> y, and the backward with it as a hint.
dnnl::pooling_v2_forward::primitive_desc pool_grad_forward_pd(const PoolGradGeometry& g,
                                                              const memory::desc& x,
                                                              const memory::desc& y,
                                                              const dnnl::engine& eng);
dnnl::pooling_v2_backward::primitive_desc pool_grad_backward_pd(
    const PoolGradGeometry& g, const dnnl::pooling_v2_forward::primitive_desc& hint,
    const memory::desc& dx, const memory::desc& dy, const dnnl::engine& eng);

// ops_registry.cpp
// Ops run by plain loops (the reference kernels): Reshape, Flatten, Dropout
// (copies), Slice, Gather, and Cast involving a non-float dtype; the
// importer's ops without a oneDNN primitive (Erf, ArgMax, Split, Expand, Pad,
// Where, Equal, and Pow / Resize / ConvTranspose in forms oneDNN 2.6 lacks);
// integer Add, Sub, Mul, Div, Neg (oneDNN's s32 division rounds, ONNX
// truncates); the training ops without a backward primitive
// (has_training_primitive); the later ONNX ops (opset::is_reference_only,
// not the recurrent ones) where later_op_has_primitive() says no; the
// Reduce ops over axes of size 1 only (oneDNN has no reduction that reduces
// nothing).
bool runs_as_loop(const NodeView& v);
// The training ops (opset::is_training_op) that run as oneDNN primitives.
bool has_training_primitive(std::string_view op);
// The builder for v's op; throws NoPrimitive for ops with none.
PrimitivePlan plan_primitive(const NodeView& v, const dnnl::engine& eng);

}  // namespace ampx::onednn
