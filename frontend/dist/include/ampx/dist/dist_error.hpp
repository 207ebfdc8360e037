// The exceptions of frontend/dist: an MPI call that failed, ranks that
// disagree, a rank lost, or ranks that did not answer in time. The message
// is always one line naming the call and the rank ("MPI_Allreduce failed on
// rank 1 of 2: MPI_ERR_TRUNCATE: message truncated"), so that the line a
// rank prints says which rank and which step of the protocol went wrong.
#pragma once

#include <stdexcept>
#include <string>

namespace ampx::dist {

class DistError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Another rank of the run is gone (killed, crashed, exited) while this one
// waited for it in a collective: "rank 1 of 3 was lost during
// MPI_Iallreduce on rank 0 (proc aborted by signal)". The communicator that
// threw it is unusable from then on (docs/DISTRIBUTED.md, Faults).
class RankLost : public DistError {
 public:
  RankLost(const std::string& message, int lost_rank) : DistError(message), lost_rank_(lost_rank) {}
  // The lost rank, in the communicator's (= MPI_COMM_WORLD's) numbering.
  int lost_rank() const { return lost_rank_; }

 private:
  int lost_rank_;
};

// No answer from the other ranks within the communicator's timeout, and no
// rank known lost: one stalled (stopped, swapping, deadlocked in a
// different collective) or lost where the launcher does not say which.
// "MPI_Iallreduce: no answer from the other ranks within 60 s on rank 0 of
// 2 (a rank lost or stalled)". The communicator is unusable from then on.
class CommTimeout : public DistError {
 public:
  using DistError::DistError;
};

}  // namespace ampx::dist
