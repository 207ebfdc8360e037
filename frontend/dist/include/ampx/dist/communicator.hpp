// Communicator: the ranks of one data-parallel run and the collectives the
// training step needs (issue 41, docs/DISTRIBUTED.md).
//
// It owns a duplicate of MPI_COMM_WORLD (MPI_Comm_dup), so its traffic never
// matches a host's own messages, with MPI_ERRORS_RETURN set on it: a failed
// call throws DistError naming the call and the rank instead of aborting the
// job. Every collective must be called by every rank, in the same order,
// with buffers of the same length (MPI's rule; a mismatch is an error or a
// hang, except in broadcast(), which checks the lengths first).
//
// Faults: every collective, the blocking ones included, is started
// non-blocking and completed by a polled wait that ends with RankLost when
// the launcher reports a rank gone (Open MPI's mpirun with
// --enable-recovery; docs/DISTRIBUTED.md says what each launch gives), or
// with CommTimeout when CommunicatorOptions::timeout passes with no answer.
// After either, the communicator is unusable (every call rethrows it, its
// requests stay abandoned: MPI cannot free them) and the process should
// report the one line and exit; MPI_Finalize is then skipped (it would wait
// for the lost rank).
//
// Buffers longer than MPI's int count are sent in pieces. Reductions are
// over f32 (MPI's sum; this library's operators for max and for 16 bits on
// the wire), in an order the MPI library chooses (by rank count, length and
// transport; it is the same from run to run). The
// MPI standard advises, without requiring, that every rank gets the same
// result; the tests check that they do here (Open MPI, 2 ranks).
#pragma once

#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/dist/pending_allreduce.hpp>
#include <ampx/ir/dtype.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace ampx::dist {

struct CommunicatorOptions {
  // How long any collective may wait for the other ranks before it gives up
  // with CommTimeout (ampx train --comm-timeout, default 60 s). Counted from
  // the start of each wait (a blocking call, PendingAllreduce::wait()), not
  // from the start of a non-blocking reduction: the backward pass it
  // overlaps does not count. Must be positive.
  std::chrono::milliseconds timeout{60000};
};

class Communicator {
 public:
  // Collective over MPI_COMM_WORLD: every rank constructs it (its
  // duplication honours the timeout too). Throws DistError,
  // std::invalid_argument for a timeout that is not positive.
  explicit Communicator(MpiRuntime runtime = MpiRuntime(), CommunicatorOptions options = {});
  ~Communicator();  // MPI_Comm_free
  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;

  // In place: every rank's buffer becomes the element-wise sum (average:
  // the sum divided by size(), one f32 division) over all ranks.
  void allreduce_sum(std::span<float> values);
  void allreduce_average(std::span<float> values);

  // 16-bit buffers (`dtype` kF16 or kBF16, bit patterns as the tensors hold
  // them). Each value is widened to f32 (exactly), the f32 buffers are
  // all-reduced, and the result is rounded to the 16-bit type once (nearest
  // even). A reduction operator that added 16-bit values on the wire would
  // round at every hop, and N-1 roundings of a partial sum lose more than
  // the one here; the price is the bytes: 4 per element on the wire, as for
  // f32, plus an f32 copy of the buffer on the host. A sum beyond the
  // type's range becomes infinity, as the finite check expects. Throws
  // std::invalid_argument for another dtype.
  void allreduce_sum(std::span<uint16_t> values, DType dtype);
  void allreduce_average(std::span<uint16_t> values, DType dtype);

  // Element-wise maximum over the ranks, in place (the overflow
  // diagnostics' amax). A NaN on any rank makes that element NaN on every
  // rank (MPI_MAX leaves NaN to the order of the operands).
  void allreduce_max(std::span<float> values);

  // Logical AND over the ranks: true only if every rank passed true. The
  // update guard's finite flag, so every rank applies or skips a step
  // together.
  bool all_true(bool value);
  // True only if every rank passed the same value (a hash of the model,
  // the plan, the options, a data size): ranks that disagree are refused
  // before the first step.
  bool all_equal(uint64_t value);

  // `root`'s bytes into every rank's buffer. The lengths are checked first
  // (one small all-reduce): ranks with different lengths all throw
  // DistError. Throws std::invalid_argument for a root outside [0, size()).
  void broadcast(std::span<std::byte> bytes, int root);

  void barrier();

  // Every rank's block into every rank's buffer (MPI_Iallgatherv in place):
  // `all` holds the ranks' blocks one after the other, rank r's of
  // counts[r] bytes, this rank's already in its place. ZeRO-1's all-gather
  // of the updated weights, each rank's block the weights it owns. The
  // counts are checked first (one small all-reduce): ranks that disagree
  // all throw DistError. Throws std::invalid_argument for counts that do
  // not add up to all.size(), one per rank, each under 2^31 bytes.
  void allgather_in_place(std::span<std::byte> all, std::span<const uint64_t> counts);

  // Starts the sum of allreduce_sum() without waiting (MPI_Iallreduce). The
  // buffer must stay alive and untouched until the returned request is
  // complete (wait(), or its destruction). Throws DistError if the start
  // fails.
  PendingAllreduce start_allreduce_sum(std::span<float> values);

  // Starts a sum of 16-bit values (`dtype` kF16 or kBF16) with 16 bits ON
  // THE WIRE: 2 bytes per element (issue 41's --allreduce-dtype f16|bf16,
  // Horovod's fp16 compression), half the bytes of the blocking 16-bit
  // allreduce_sum above. A reduction operator of this library over a 2-byte
  // MPI datatype adds in f32 and rounds to the type (nearest even) at each
  // hop: a partial sum is rounded up to N-1 times over N ranks (a ring),
  // log2 N times in recursive doubling, against once for the blocking call,
  // so low bits of a sum of many ranks differ. A sum beyond the type's range
  // becomes infinity, which the finite check sees. The buffer must stay
  // alive and untouched until the request completes. Throws
  // std::invalid_argument for another dtype, DistError if the start fails.
  PendingAllreduce start_allreduce_sum(std::span<uint16_t> values, DType dtype);

  // The same sums delivered to `root` alone (MPI_Ireduce): ZeRO-1's
  // reduce-scatter, a gradient bucket summed into the rank that owns its
  // weights. On the root the buffer becomes the sum; on the other ranks it
  // is only read (and must stay untouched until the request completes).
  // Throws std::invalid_argument for a root outside [0, size()).
  PendingAllreduce start_reduce_sum(std::span<float> values, int root);
  PendingAllreduce start_reduce_sum(std::span<uint16_t> values, DType dtype, int root);

 private:
  void require_root(int root, const char* what) const;
  void allreduce_16bit(std::span<uint16_t> values, DType dtype, bool average);

  struct Impl;  // src/communicator.cpp
  std::unique_ptr<Impl> impl_;
};

}  // namespace ampx::dist
