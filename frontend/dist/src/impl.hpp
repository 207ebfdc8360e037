// The MPI handles behind the public classes' pointers (pimpl: the public
// headers name no MPI type). Private to frontend/dist.
#pragma once

#include <ampx/dist/communicator.hpp>
#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/dist/pending_allreduce.hpp>

#include <mpi.h>

#include <vector>

namespace ampx::dist {

struct Communicator::Impl {
  MpiRuntime runtime;  // MPI outlives the communicator
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;

  explicit Impl(MpiRuntime rt) : runtime(std::move(rt)) {}
  ~Impl() {
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
};

struct PendingAllreduce::Impl {
  MpiRuntime runtime;                 // MPI outlives the request
  std::vector<MPI_Request> requests;  // one per piece of the buffer
  int rank = 0;                       // for the error message
  int size = 1;
};

}  // namespace ampx::dist
