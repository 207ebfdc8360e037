// RankWatch: asks the launcher which ranks of this job are gone, so that a
// rank waiting in a collective can name the one it waits for in vain.
//
// MPI itself says nothing when a peer dies: with Open MPI 4.1 and shared
// memory, a collective waiting for a SIGKILLed rank simply never completes.
// The launcher knows: mpirun's PMIx server keeps a state for every process
// (running, aborted by signal, exited). Open MPI 4.1.4's mpirun fails to
// send the PMIx event that would announce a death ("PMIX ERROR: BAD-PARAM
// in pmix_event_notification.c" on its stderr, nothing reaches the ranks),
// so this asks instead: a PMIx query of the job's process table
// (PMIX_QUERY_PROC_TABLE), made from the polled wait now and then, never on
// the hot path. PMIx calls are not MPI calls: any thread may make them.
//
// Built with PMIx where CMake finds it (AMPX_DIST_HAVE_PMIX); without it,
// or where PMIx_Init fails (a singleton, another launcher), the watch is
// inactive and a lost rank shows as the timeout alone.
#pragma once

#include <optional>
#include <string>

namespace ampx::dist::detail {

struct LostRank {
  int rank = -1;
  std::string state;   // the launcher's words: "proc aborted by signal"
  std::string others;  // the other ranks gone, "rank 0: proc terminated ...", or empty
};

class RankWatch {
 public:
  RankWatch();   // PMIx_Init (reference counted: MPI's own stays valid)
  ~RankWatch();  // PMIx_Finalize of that reference
  RankWatch(const RankWatch&) = delete;
  RankWatch& operator=(const RankWatch&) = delete;

  bool active() const { return active_; }
  // A rank of this job that the launcher says has terminated, if any. When
  // several have, the likeliest first cause is named: a rank that died (a
  // signal, an abort) before one that exited without MPI_Finalize, before
  // one that exited non-zero (a survivor that already gave up, as this
  // library's users do), before one that exited normally; the lowest rank
  // among equals. The others are listed. One round trip to the local PMIx
  // server; nothing when inactive or when the query fails.
  std::optional<LostRank> find_lost() const;

 private:
  bool active_ = false;
  std::string nspace_;  // this job's PMIx namespace
};

}  // namespace ampx::dist::detail
