// Attention (docs/OPS.md: ONNX's Attention on 4-D heads) on two oneDNN
// matmul primitives with the plugin's own f32 row loop between them.
//
//   1. S = scale · Q·Kᵀ: one batched matmul over [B·Hkv, g·S, E] x
//      [B·Hkv, E, T] (g = Hq/Hkv: the g query heads of a KV head are
//      adjacent in Q, so grouped-query attention is one batch entry per KV
//      head; Kᵀ through strides), scale as the output scale, f32 scores.
//   2. Per score row, in f32 (this file's loop, parallel over rows): the
//      softcap, the bias (float or bool mask with ONNX's -inf past a short
//      mask, causal and window frontiers, nonpad_kv_seqlen and its
//      bottom-right offset), the softmax (in f64 with softmax_f64), the
//      fully-masked-row guard (0, never NaN), NaN rows, and qk_output's
//      copies, exactly as the reference kernel's row (the same f32
//      expressions: only the two products' rounding differs from it).
//   3. Y = P·V: one batched matmul [B·Hkv, g·S, T] x [B·Hkv, T, Ev] into Y.
//
// In 16-bit both products take 16-bit operands and accumulate in f32: Q, K
// and V as they are, P rounded once to the node's dtype (what ONNX Runtime's
// and TensorRT's fused attention do); the scores, bias and softmax stay f32.
// The answer is measured by construction: the two matmul descriptors for
// the node's dtypes and shapes. Both jit (not ref:any, not gemm:ref):
// `native`. Otherwise the reference loop runs the node, f32 `native`,
// 16-bit `emulated` (AVX2 and below have no 16-bit matmul; an f16 matmul
// needs AVX512-FP16). Empty tensors and f64 stay on the loop too.
//
// Scores and the 16-bit probabilities live in the stream's scratchpad
// (Context::scratchpad, with the primitives' own scratchpads): the batch is
// processed in chunks of KV heads whose scores fit in 64 MiB, so a long
// sequence does not need B·Hq·S·T floats at once.
#pragma once

#include <memory>

#include "ampx/host_plugin.hpp"
#include "ampx/reference/kernels.hpp"
#include "context.hpp"

namespace ampx::onednn {

// The capability answer for an Attention node (above); cost hints at
// `fast_flops` on the primitives and `slow_flops` on the loop.
// reference_kernel is set when the loop runs it.
host_plugin::CapabilityAnswer answer_attention(const plugin_support::NodeView& v,
                                               const Context& ctx, double fast_flops,
                                               double slow_flops);

// The prepared kernel of an Attention node whose answer is the primitives
// (answer_attention() did not set reference_kernel), created under
// `threads`. oneDNN errors become StatusError(INTERNAL) naming the node.
std::unique_ptr<reference::CpuKernel> make_attention_kernel(std::shared_ptr<Context> ctx,
                                                            const plugin_support::NodeView& v,
                                                            int threads);

// The thread-count check's stand-in for the node's non-float inputs (a bool
// mask: all true; nonpad_kv_seqlen: T): the kernel's path (two matmuls of
// fixed shapes, then independent rows) does not depend on their values.
bool fill_attention_input(const plugin_support::NodeView& v, size_t slot, void* p);

}  // namespace ampx::onednn
