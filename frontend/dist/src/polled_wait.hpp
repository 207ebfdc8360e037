// The one wait of frontend/dist: every collective (the blocking ones too)
// is started non-blocking and completed here, by MPI_Testall in a loop, so
// that no wait outlasts the communicator's timeout and a rank the launcher
// reports lost ends it early (issue 41's faults; docs/DISTRIBUTED.md).
#pragma once

#include "rank_watch.hpp"

#include <mpi.h>

#include <chrono>
#include <exception>
#include <span>

namespace ampx::dist::detail {

// Shared by a communicator and its pending reductions (which may outlive
// it).
struct Liveness {
  std::chrono::milliseconds timeout{60000};
  int rank = 0;
  int size = 1;
  RankWatch watch;
  // The first RankLost or CommTimeout: the requests it left behind can be
  // neither completed nor freed (MPI forbids freeing a non-blocking
  // collective's request), so every later call rethrows it at once.
  std::exception_ptr failure;

  // Rethrows `failure`, if any.
  void check_usable() const;
};

// Completes `requests` (a null request counts as complete), or throws:
// DistError for an MPI error, RankLost when the launcher reports a rank
// gone, CommTimeout once `live.timeout` has passed since the call. `call`
// names the MPI call that started them, for the message.
void wait_all(std::span<MPI_Request> requests, Liveness& live, const char* call);

// Completes a started collective without throwing (destructors): waits as
// wait_all does, and on failure abandons the requests. True if complete.
bool wait_all_quietly(std::span<MPI_Request> requests, Liveness& live) noexcept;

}  // namespace ampx::dist::detail
