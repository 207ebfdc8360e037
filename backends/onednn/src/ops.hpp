// Op builders: one oneDNN primitive descriptor per node of docs/OPS.md.
// Each throws NoPrimitive (or dnnl::error) when oneDNN cannot run the node
// as described; nodes are already validated against docs/OPS.md by then.
#pragma once

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

// ops_registry.cpp
// Ops run by plain loops (the reference kernels): Reshape, Flatten, Dropout
// (copies), Slice, Gather, and Cast involving a non-float dtype; the
// importer's ops without a oneDNN primitive (Erf, ArgMax, Split, Expand, Pad,
// Where, Equal, and Pow / Resize / ConvTranspose in forms oneDNN 2.6 lacks);
// integer Add, Sub, Mul, Div, Neg (oneDNN's s32 division rounds, ONNX
// truncates).
bool runs_as_loop(const NodeView& v);
// The builder for v's op; throws NoPrimitive for ops with none.
PrimitivePlan plan_primitive(const NodeView& v, const dnnl::engine& eng);

}  // namespace ampx::onednn
