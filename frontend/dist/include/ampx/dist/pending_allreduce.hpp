// PendingAllreduce: a non-blocking all-reduce in flight (MPI_Iallreduce),
// owned RAII. wait() completes it; the destructor waits too, so a request
// is never leaked and the buffer is never written after its owner is gone.
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
  // destructor), then takes the other's reduction.
  PendingAllreduce& operator=(PendingAllreduce&&) noexcept;
  PendingAllreduce(const PendingAllreduce&) = delete;
  PendingAllreduce& operator=(const PendingAllreduce&) = delete;

  // Lets MPI advance the reduction; true once it is complete (then the
  // buffer holds the result and nothing is pending). Throws DistError.
  bool test();
  // Blocks until the reduction is complete: the buffer holds the sum of
  // every rank's buffer. Throws DistError naming MPI_Wait and the rank; the
  // request is released either way. Nothing pending: returns at once.
  void wait();
  bool pending() const;

  struct Impl;  // src/pending_allreduce.cpp; made by the Communicator
  explicit PendingAllreduce(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ampx::dist
