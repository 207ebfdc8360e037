// UpdateGuard's arithmetic (docs/OPS.md), one definition for the guard
// (ops_guard.cpp) and the fused multi-tensor update (ops_multi_update.cpp),
// which checks the gradients in its own pass: the same blocks, the same
// partial sums in the same order, so the same norm bits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ampx::reference::detail {

// Sums run over fixed blocks of the concatenated gradients (each block
// within one tensor), each on one thread, and the blocks' sums are added in
// order: the norm never depends on the thread count.
inline constexpr int64_t kGuardBlock = 1 << 16;

struct BlockSum {
  double squares = 0;
  bool finite = true;
};

// One block: 8 interleaved f64 partial sums, then the tail; and the
// non-finite test on the exponent bits.
BlockSum block_sum(const float* x, int64_t n);

// The same sum built in pieces: add() the block's elements in order, each
// piece but the last a multiple of 8 long, then result().
class BlockSumAccumulator {
 public:
  void add(const float* x, int64_t n);
  BlockSum result() const;

 private:
  double acc_[8] = {};
  double tail_ = 0;
  uint32_t bad_ = 0;
};

// hyper' and stats from the blocks' sums (added in block order): the
// clipping factor folded into grad_scale, apply cleared on a non-finite
// gradient when `skip`. h and h_out may be one buffer.
void guard_finish(const float* h, size_t hyper_len, float clip_norm, bool skip, double squares,
                  bool finite, float* h_out, float* stats);

}  // namespace ampx::reference::detail
