// The process-wide MPI state's one internal switch, private to
// frontend/dist.
#pragma once

namespace ampx::dist::detail {

// A wait ended with a rank lost or a timeout: the last MpiRuntime will not
// call MPI_Finalize, which would wait for that rank (in Open MPI 4.1 a
// fence over every process of the job) and hang the exit it should allow.
void mark_mpi_broken();

}  // namespace ampx::dist::detail
