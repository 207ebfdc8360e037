// One NCCL communicator of a data-parallel job, on this rank's CUDA device,
// bootstrapped over the job's MPI communicator (rank 0's ncclGetUniqueId,
// broadcast), with the MPI side's fault rules: every wait polls and is
// bounded by the timeout, NCCL's asynchronous errors are seen while
// waiting, and a wait that ends badly aborts the communicator (its kernels
// on the stream stop, so the device can be synchronized afterwards) and
// throws one line naming this rank.
#pragma once

#include <ampx/dist/communicator.hpp>
#include <ampx/nccl/nccl_module.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace ampx::nccl {

class DeviceCommunicator {
 public:
  // Collective over `mpi` (every rank calls it, each with its own device).
  // Throws dist::DistError on every rank when NCCL fails on any of them
  // (the rank it failed on names NCCL's error, e.g. two ranks on one GPU:
  // "Duplicate GPU detected"), within `timeout`.
  DeviceCommunicator(Module& module, dist::Communicator& mpi, int ordinal,
                     std::chrono::milliseconds timeout);
  ~DeviceCommunicator();
  DeviceCommunicator(const DeviceCommunicator&) = delete;
  DeviceCommunicator& operator=(const DeviceCommunicator&) = delete;

  int ordinal() const { return ordinal_; }
  int rank() const { return comm_->rank(); }
  int size() const { return comm_->size(); }
  Comm& comm() { return *comm_; }

  // Waits until `marker` is reached. Throws dist::CommTimeout after the
  // timeout, dist::DistError on an NCCL error; both abort the communicator
  // first. `what` names the collective in the message.
  void wait(Marker& marker, const std::string& what);
  // True when reached (no wait); throws as wait() on an NCCL error.
  bool test(Marker& marker, const std::string& what);
  bool aborted() const { return aborted_; }

 private:
  [[noreturn]] void fail(const std::string& message, bool timed_out);

  std::unique_ptr<Comm> comm_;
  int ordinal_;
  std::chrono::milliseconds timeout_;
  bool aborted_ = false;
};

}  // namespace ampx::nccl
