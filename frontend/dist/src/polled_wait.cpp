#include "polled_wait.hpp"

#include "mpi_call.hpp"
#include "mpi_runtime_state.hpp"

#include <ampx/dist/dist_error.hpp>

#include <cstdio>
#include <string>
#include <thread>

namespace ampx::dist::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Polling: as MPI_Wait does, spin at first (a small reduction completes in
// microseconds), then yield the core (2 ranks may share one), then sleep a
// little (a long wait costs neither a core nor more than 0.2 ms of latency).
constexpr auto kSpin = std::chrono::milliseconds(1);
constexpr auto kYield = std::chrono::milliseconds(20);
constexpr auto kNap = std::chrono::microseconds(200);
// The launcher is asked about lost ranks once the wait has lasted this long,
// then at this interval: a round trip to the local PMIx server each time,
// never on a step that completes normally.
constexpr auto kFirstQuery = std::chrono::milliseconds(200);
constexpr auto kQueryEvery = std::chrono::milliseconds(500);

std::string seconds(std::chrono::milliseconds t) {
  char text[32];
  if (t.count() % 1000 == 0) {
    std::snprintf(text, sizeof text, "%lld s", static_cast<long long>(t.count() / 1000));
  } else {
    std::snprintf(text, sizeof text, "%.3g s", static_cast<double>(t.count()) / 1000.0);
  }
  return text;
}

[[noreturn]] void fail(Liveness& live, std::exception_ptr error) {
  live.failure = error;
  // MPI_Finalize would wait for the lost or stalled rank: the process must
  // end without it.
  mark_mpi_broken();
  std::rethrow_exception(error);
}

[[noreturn]] void fail_lost(Liveness& live, const LostRank& lost, const char* call) {
  fail(live, std::make_exception_ptr(RankLost(
                 "rank " + std::to_string(lost.rank) + " of " + std::to_string(live.size) +
                     " was lost during " + call + " on rank " + std::to_string(live.rank) + " (" +
                     lost.state + (lost.others.empty() ? "" : "; also gone: " + lost.others) + ")",
                 lost.rank)));
}

[[noreturn]] void fail_timeout(Liveness& live, const char* call) {
  fail(live, std::make_exception_ptr(
                 CommTimeout(std::string(call) + ": no answer from the other ranks within " +
                             seconds(live.timeout) + " on rank " + std::to_string(live.rank) +
                             " of " + std::to_string(live.size) + " (a rank lost or stalled)")));
}

}  // namespace

void Liveness::check_usable() const {
  if (failure) std::rethrow_exception(failure);
}

void wait_all(std::span<MPI_Request> requests, Liveness& live, const char* call) {
  live.check_usable();
  if (requests.empty()) return;
  const Clock::time_point start = Clock::now();
  Clock::time_point next_query = start + kFirstQuery;
  for (;;) {
    int done = 0;
    const int code =
        MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS) throw_mpi_error(code, call, live.rank, live.size);
    if (done) return;
    const Clock::time_point now = Clock::now();
    const auto waited = now - start;
    if (now >= next_query || waited >= live.timeout) {
      if (auto lost = live.watch.find_lost()) fail_lost(live, *lost, call);
      next_query = now + kQueryEvery;
    }
    if (waited >= live.timeout) fail_timeout(live, call);
    if (waited < kSpin) continue;
    if (waited < kYield) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kNap);
    }
  }
}

bool wait_all_quietly(std::span<MPI_Request> requests, Liveness& live) noexcept {
  try {
    wait_all(requests, live, "MPI_Waitall");
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace ampx::dist::detail
