#include "rank_watch.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <tuple>
#include <vector>

#if AMPX_DIST_HAVE_PMIX
#include <pmix.h>
#endif

namespace ampx::dist::detail {

#if AMPX_DIST_HAVE_PMIX

namespace {

// Terminated, normally or not: from PMIX_PROC_STATE_TERMINATED on, every
// state is a process that will not answer again.
bool gone(pmix_proc_state_t state) {
  return state >= PMIX_PROC_STATE_TERMINATED;
}

std::string lower(const char* text) {
  std::string s = text ? text : "terminated";
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// How likely a state is to be the first cause of a failure: lower first.
int severity(pmix_proc_state_t state) {
  if (state == PMIX_PROC_STATE_TERMINATED) return 3;
  if (state == PMIX_PROC_STATE_TERM_NON_ZERO) return 2;
  if (state == PMIX_PROC_STATE_TERM_WO_SYNC) return 1;
  return 0;  // signalled, aborted, killed, lost contact
}

struct Gone {
  int rank;
  pmix_proc_state_t state;
};

// The table's entries: Open MPI's server answers an array of pmix_info_t,
// each holding one pmix_proc_info_t; the standard's form is an array of
// pmix_proc_info_t directly. Both are read.
void scan(const pmix_data_array_t& array, std::vector<Gone>& out) {
  auto consider = [&](const pmix_proc_info_t& p) {
    if (gone(p.state)) out.push_back({static_cast<int>(p.proc.rank), p.state});
  };
  if (array.type == PMIX_PROC_INFO) {
    const auto* procs = static_cast<const pmix_proc_info_t*>(array.array);
    for (size_t i = 0; i < array.size; ++i) consider(procs[i]);
  } else if (array.type == PMIX_INFO) {
    const auto* infos = static_cast<const pmix_info_t*>(array.array);
    for (size_t i = 0; i < array.size; ++i) {
      if (infos[i].value.type == PMIX_PROC_INFO && infos[i].value.data.pinfo != nullptr) {
        consider(*infos[i].value.data.pinfo);
      }
    }
  }
}

// Owns what PMIx_Query_info returns.
struct QueryResults {
  pmix_info_t* info = nullptr;
  size_t count = 0;
  ~QueryResults() {
    if (info != nullptr) PMIX_INFO_FREE(info, count);
  }
};

}  // namespace

RankWatch::RankWatch() {
  pmix_proc_t self;
  PMIX_PROC_CONSTRUCT(&self);
  if (PMIx_Init(&self, nullptr, 0) != PMIX_SUCCESS) return;
  active_ = true;
  nspace_ = self.nspace;
}

RankWatch::~RankWatch() {
  if (active_) PMIx_Finalize(nullptr, 0);
}

std::optional<LostRank> RankWatch::find_lost() const {
  if (!active_) return std::nullopt;
  char key[] = PMIX_QUERY_PROC_TABLE;
  char* keys[] = {key, nullptr};
  pmix_info_t qualifier;
  PMIX_INFO_CONSTRUCT(&qualifier);
  PMIX_INFO_LOAD(&qualifier, PMIX_NSPACE, nspace_.c_str(), PMIX_STRING);
  pmix_query_t query;
  PMIX_QUERY_CONSTRUCT(&query);
  query.keys = keys;
  query.qualifiers = &qualifier;
  query.nqual = 1;
  QueryResults results;
  const pmix_status_t rc = PMIx_Query_info(&query, 1, &results.info, &results.count);
  PMIX_INFO_DESTRUCT(&qualifier);
  if (rc != PMIX_SUCCESS) return std::nullopt;
  std::vector<Gone> gone_ranks;
  for (size_t i = 0; i < results.count; ++i) {
    const pmix_info_t& r = results.info[i];
    if (std::strncmp(r.key, PMIX_QUERY_PROC_TABLE, PMIX_MAX_KEYLEN) == 0 &&
        r.value.type == PMIX_DATA_ARRAY && r.value.data.darray != nullptr) {
      scan(*r.value.data.darray, gone_ranks);
    }
  }
  if (gone_ranks.empty()) return std::nullopt;
  std::sort(gone_ranks.begin(), gone_ranks.end(), [](const Gone& a, const Gone& b) {
    return std::tuple(severity(a.state), a.rank) < std::tuple(severity(b.state), b.rank);
  });
  LostRank lost{gone_ranks[0].rank, lower(PMIx_Proc_state_string(gone_ranks[0].state)), {}};
  for (size_t i = 1; i < gone_ranks.size(); ++i) {
    if (!lost.others.empty()) lost.others += ", ";
    lost.others += "rank " + std::to_string(gone_ranks[i].rank) + ": " +
                   lower(PMIx_Proc_state_string(gone_ranks[i].state));
  }
  return lost;
}

#else  // no PMIx: the timeout alone

RankWatch::RankWatch() = default;
RankWatch::~RankWatch() = default;

std::optional<LostRank> RankWatch::find_lost() const {
  return std::nullopt;
}

#endif

}  // namespace ampx::dist::detail
