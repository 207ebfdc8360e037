// The reduction operators MPI does not have, created once per communicator
// (MPI_Op_create) and freed with it.
//
// - 16-bit sums ON THE WIRE (issue 41's --allreduce-dtype f16|bf16,
//   Horovod's fp16 compression): over MPI_UINT16_T, two bytes per element;
//   each hop widens both operands to f32 (exactly), adds them in f32 and
//   rounds the sum back to the 16-bit type, nearest even (the correctly
//   rounded 16-bit sum: where the f32 addition is inexact, the smaller
//   operand is below a quarter of the larger's 16-bit unit). A reduction of N
//   ranks thus rounds a partial sum once per hop that adds into it: up to
//   N-1 times in a ring or a chain, log2 N times in recursive doubling (the
//   algorithm is the MPI library's), where the blocking
//   Communicator::allreduce_sum(span<uint16_t>, dtype) rounds once. A sum
//   beyond the type's range is infinity, which the finite check sees.
// - f32 maximum in which NaN wins: MPI_MAX's NaN handling is unspecified
//   (Open MPI's `a > b ? a : b` keeps or drops a NaN by the order of the
//   operands); the overflow diagnostics' amax must see a NaN of any rank.
#pragma once

#include <mpi.h>

namespace ampx::dist::detail {

class ReduceOps {
 public:
  ReduceOps();  // MPI must be initialised; throws DistError
  ~ReduceOps();
  ReduceOps(const ReduceOps&) = delete;
  ReduceOps& operator=(const ReduceOps&) = delete;

  MPI_Op f16_sum() const { return f16_sum_; }
  MPI_Op bf16_sum() const { return bf16_sum_; }
  MPI_Op max_nan() const { return max_nan_; }

 private:
  void free_all();

  MPI_Op f16_sum_ = MPI_OP_NULL;
  MPI_Op bf16_sum_ = MPI_OP_NULL;
  MPI_Op max_nan_ = MPI_OP_NULL;
};

}  // namespace ampx::dist::detail
