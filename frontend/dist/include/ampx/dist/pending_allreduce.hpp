// PendingAllreduce: a non-blocking all-reduce in flight (MPI_Iallreduce),
// owned RAII. wait() completes it; the destructor waits too, so a request
// is never leaked and the buffer is never written after its owner is gone.
// Every wait is bounded by the communicator's timeout and ends early when a
// rank is reported lost (RankLost, CommTimeout: communicator.hpp).
// For the gradient buckets whose reduction overlaps the rest of the
// backward pass (issue 41, docs/DISTRIBUTED.md).
//
// Progress: Open MPI advances a non-blocking collective only inside MPI
// calls (it has no progress thread by default), so a long computation
// between start and wait() overlaps only the first round of the reduction.
// Call test() between pieces of local work (between backward nodes) to let
// it advance.
#pragma once

#include <memory>

namespace ampx::dist {

class PendingAllreduce {
 public:
  PendingAllreduce();  // nothing pending
  ~PendingAllreduce();
  PendingAllreduce(PendingAllreduce&&) noexcept;
  // Waits for what this one held first (errors swallowed as in the
  // destructor, the wait bounded by the timeout), then takes the other's
  // reduction.
  PendingAllreduce& operator=(PendingAllreduce&&) noexcept;
  PendingAllreduce(const PendingAllreduce&) = delete;
  PendingAllreduce& operator=(const PendingAllreduce&) = delete;

  // Lets MPI advance the reduction; true once it is complete (then the
  // buffer holds the result and nothing is pending). Never waits: it does
  // not time out, but rethrows the communicator's RankLost or CommTimeout
  // once another wait has seen one. Throws DistError.
  bool test();
  // Blocks until the reduction is complete: the buffer holds the sum of
  // every rank's buffer. Throws DistError naming the MPI call and the rank,
  // RankLost when a rank is reported gone, CommTimeout after the
  // communicator's timeout (counted from this call); nothing is pending
  // afterwards either way. Nothing pending: returns at once.
  void wait();
  bool pending() const;

  struct Impl;  // src/pending_allreduce.cpp; made by the Communicator
  explicit PendingAllreduce(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ampx::dist
