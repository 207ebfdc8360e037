// ReduceSum and ReduceMean as the plugin's own vectorised loop, for the
// nodes whose oneDNN reduction is a reference implementation (oneDNN 2.6's
// jit reduction reduces trailing axes only; the rest is `ref:any`).
//
// Those are the bias gradients of a training step: dY [N, C, H, W] summed
// over N, H, W for a convolution's bias, dY [N, K] over N for a Gemm's.
// oneDNN's `ref:any` took about 5 ms a call for 32x64x16x16 -> 1x64x1x1 on
// the machine; this loop reads the same bytes once, in contiguous
// runs the compiler vectorises.
//
// The node's dims are merged into alternating runs of kept and reduced axes
// (size-1 axes dropped, neighbours of one kind merged), and one of two loops
// runs, by what the innermost run is:
//  - reduced (the channel pattern: N, H, W around C; any trailing reduction):
//    each output sums its contiguous rows with sum8(), 8 independent
//    partial sums as the reference kernels' sum_n, then adds the row sums
//    in row-major order;
//  - kept (the leading-axis pattern [N, K] -> [K]; any reduction of middle
//    axes): a block of adjacent outputs adds the reduced rows in row-major
//    order, one output per lane.
// Either way each output is computed by one thread in an order fixed by the
// shapes alone, so its bits never depend on the thread count (docs/OPS.md,
// "Determinism"; thread_check.hpp does not check loops), and in f32 they
// are the reference kernels' bits (the same order of the same additions).
// f16 and bf16 are widened to f32 as they are read and rounded once when
// stored, as the reference kernels do. The work is split over outputs (or
// blocks of them) on oneDNN's OpenMP pool, under the launch's thread count.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ampx/reference/kernels.hpp"
#include "context.hpp"

namespace ampx::onednn {

// Whether the loop runs this node: ReduceSum or ReduceMean over an f32, f16
// or bf16 tensor with at least one element, reducing something.
bool reduce_loop_fits(const plugin_support::NodeView& v);

// One run of merged axes: its length and its input stride (elements).
struct AxisRun {
  int64_t n, stride;
};

class ReduceLoopKernel final : public reference::CpuKernel {
 public:
  // `v` must fit (reduce_loop_fits) and be valid (reference::make_kernel
  // has accepted it). `threads`: the launch's count (small work: one).
  ReduceLoopKernel(std::shared_ptr<Context> ctx, const plugin_support::NodeView& v, int threads);
  void run(std::span<const void* const> in, std::span<void* const> out) override;
  std::string implementation() const override { return "loop: vectorised reduction"; }

 private:
  void run_inner_reduced(const void* x, void* y) const;
  void run_inner_kept(const void* x, void* y) const;
  std::shared_ptr<Context> ctx_;
  int threads_;
  ampx_dtype dt_;
  bool mean_;
  std::vector<AxisRun> kept_, reduced_;  // outer to inner
  bool inner_reduced_ = false;
  int64_t outputs_ = 1, count_ = 1;
};

}  // namespace ampx::onednn
