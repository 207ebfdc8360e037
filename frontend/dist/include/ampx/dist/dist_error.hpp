// The one exception of frontend/dist: an MPI call that failed, or ranks
// that disagree. The message is one line naming the MPI call and the rank
// ("MPI_Allreduce failed on rank 1 of 2: MPI_ERR_TRUNCATE: message
// truncated"), so that the line a rank prints says which rank and which
// step of the protocol went wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace ampx::dist {

class DistError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ampx::dist
