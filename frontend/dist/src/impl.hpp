// The MPI handles behind the public classes' pointers (pimpl: the public
// headers name no MPI type). Private to frontend/dist.
#pragma once

#include <ampx/dist/communicator.hpp>
#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/dist/pending_allreduce.hpp>

#include "polled_wait.hpp"
#include "reduce_ops.hpp"

#include <mpi.h>

#include <memory>
#include <optional>
#include <vector>

namespace ampx::dist {

struct Communicator::Impl {
  MpiRuntime runtime;  // MPI outlives the communicator (declared first: destroyed last)
  std::shared_ptr<detail::Liveness> live = std::make_shared<detail::Liveness>();
  std::optional<detail::ReduceOps> ops;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;

  explicit Impl(MpiRuntime rt) : runtime(std::move(rt)) {}
  ~Impl() {
    // After a lost rank or a timeout, requests on it are abandoned in
    // flight: the communicator is left to the process's exit.
    if (comm != MPI_COMM_NULL && !live->failure) MPI_Comm_free(&comm);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

struct PendingAllreduce::Impl {
  MpiRuntime runtime;                      // MPI outlives the request
  std::shared_ptr<detail::Liveness> live;  // the communicator's timeout and watch
  std::vector<MPI_Request> requests;       // one per piece of the buffer
  const char* call = "MPI_Iallreduce";     // for the error message
};

}  // namespace ampx::dist
