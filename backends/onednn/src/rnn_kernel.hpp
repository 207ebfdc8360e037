// LSTM, GRU and RNN (docs/OPS.md: ONNX's semantics, layout 0) on oneDNN's
// RNN primitives where they fit, else on the reference loop.
//
// The primitive (lstm_forward with peepholes, gru_forward, lbr_gru_forward
// for linear_before_reset, vanilla_rnn_forward) fits a node whose
// activations are oneDNN's fixed ones (LSTM Sigmoid/Tanh/Tanh, GRU
// Sigmoid/Tanh, RNN one of Tanh/Relu/Sigmoid in both directions), without
// clip and input_forget, and whose sequence_lens (when given) are all
// seq_length: a constant one is checked at prepare; one known only at run
// time is checked per run, and a run with a shorter sequence goes to the
// reference loop. Every other node runs on the reference loop
// (LoopKernel): f32 `native` ("plain loop"), 16-bit `emulated`, as the
// plugin's other loops.
//
// ONNX → oneDNN, done once at prepare for constant inputs (weights usually
// are), else at every run:
//   - W [D, G·H, I] and R [D, G·H, H] are oneDNN's ldgoi layout; LSTM's
//     gates go from ONNX's i, o, f, c to oneDNN's i, f, c~, o (GRU's z, r, h
//     are oneDNN's u, r, o already), then one reorder to the layout the
//     primitive chose (`any`).
//   - B [D, 2·G·H] (Wb then Rb) becomes one f32 bias per gate, Wb + Rb;
//     lbr_gru has four: u, r, o (Wb_h only) and u' (Rb_h, added inside the
//     reset product). P [D, 3H] (i, o, f) becomes oneDNN's f32 peephole
//     weights (i, f, o).
//   - X [T, N, I] is tnc, initial_h/c [D, N, H] and Y_h/Y_c are ldnc with
//     l = 1, as they lie. Y [T, D, N, H] is dst_layer tnc itself for one
//     direction; bidirectional_concat writes [T, N, 2H], copied out to
//     [T, 2, N, H] after the primitive.
//
// The answer is measured: the primitive descriptor for the node's dtypes
// and shapes. oneDNN 2.6's CPU RNN is "ref:any" by name but is the
// gemm-based implementation (jit sgemm for the gate GEMMs, jit cell kernels
// from SSE4.1 on), its optimised path: `native`. bf16 needs AVX-512 (core)
// and f16 has no CPU RNN at all there: creating the descriptor fails, and
// such a node is `emulated` on the reference kernels (16-bit storage, f32
// compute), as every other 16-bit node oneDNN cannot run.
#pragma once

#include <memory>
#include <string_view>

#include "ampx/host_plugin.hpp"
#include "ampx/reference/kernels.hpp"
#include "context.hpp"

namespace ampx::onednn {

// LSTM, GRU, RNN.
bool is_recurrent_op(std::string_view op) noexcept;

// The capability answer for a recurrent node (see above); cost hints at
// `fast_flops` on the primitive and `slow_flops` on the loop.
// reference_kernel is set when the loop runs it.
host_plugin::CapabilityAnswer answer_recurrent(const plugin_support::NodeView& v,
                                               const Context& ctx, double fast_flops,
                                               double slow_flops);

// The threads a recurrent node's primitive runs with: one below 1 MFLOP per
// step and direction, else PrimitiveKernel::threads_for's count.
int recurrent_threads(const Context& ctx, const plugin_support::NodeView& v);

// The prepared kernel of a recurrent node whose answer is the primitive
// (answer_recurrent() did not set reference_kernel): the primitive is
// created now under `threads` (the launch's count), constant weights
// repacked and reordered now, and `loop` (the node's LoopKernel) runs the
// runs whose sequence_lens are shorter. oneDNN errors become
// StatusError(INTERNAL) naming the node.
std::unique_ptr<reference::CpuKernel> make_recurrent_kernel(
    std::shared_ptr<Context> ctx, const plugin_support::NodeView& v,
    std::unique_ptr<reference::CpuKernel> loop, int threads);
// The kernel of one the primitive does not fit: `loop`, every run.
// Either kernel counts its runs (Context::count_recurrent_run,
// debug_counters=1's note).
std::unique_ptr<reference::CpuKernel> make_recurrent_loop(
    std::shared_ptr<Context> ctx, std::unique_ptr<reference::CpuKernel> loop);

}  // namespace ampx::onednn
