#include <ampx/dist/dist_error.hpp>
#include <ampx/nccl/device_communicator.hpp>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <thread>

namespace ampx::nccl {
namespace {

using Clock = std::chrono::steady_clock;

std::string seconds(std::chrono::milliseconds t) {
  std::ostringstream out;
  out << static_cast<double>(t.count()) / 1000 << " s";
  return out.str();
}

}  // namespace

DeviceCommunicator::DeviceCommunicator(Module& module, dist::Communicator& mpi, int ordinal,
                                       std::chrono::milliseconds timeout)
    : ordinal_(ordinal), timeout_(timeout) {
  const std::string where =
      " on rank " + std::to_string(mpi.rank()) + " of " + std::to_string(mpi.size());
  // Rank 0's id for everyone; an id that rank 0 could not make is zeros
  // plus a flag, so that the others learn of it in the same collective.
  UniqueId id{};
  std::string error;
  if (mpi.rank() == 0) {
    try {
      id = module.unique_id();
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const bool id_ok = mpi.all_true(error.empty());
  if (!id_ok)
    throw dist::DistError(error.empty() ? "ncclGetUniqueId failed on rank 0" : error + where);
  mpi.broadcast(std::span<std::byte>(id), 0);
  try {
    comm_ = module.init_rank(mpi.size(), mpi.rank(), id, ordinal,
                             InitOptions{.timeout_ms = static_cast<int>(std::min<int64_t>(
                                             timeout.count(), 24LL * 3600 * 1000))});
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Every rank stops if one could not join (AMPX_NCCL=off: the host path).
  if (!mpi.all_true(error.empty())) {
    if (comm_) comm_->abort();  // joined, but its peers are gone: never destroy-wait
    comm_.reset();
    throw dist::DistError(error.empty() ? "NCCL could not start on another rank" + where +
                                              " (AMPX_NCCL=off takes the host path)"
                                        : error + where + " (AMPX_NCCL=off takes the host path)");
  }
}

DeviceCommunicator::~DeviceCommunicator() = default;

void DeviceCommunicator::fail(const std::string& message, bool timed_out) {
  aborted_ = true;
  comm_->abort();
  const std::string line = message + " on rank " + std::to_string(comm_->rank()) + " of " +
                           std::to_string(comm_->size());
  if (timed_out) throw dist::CommTimeout(line);
  throw dist::DistError(line);
}

bool DeviceCommunicator::test(Marker& marker, const std::string& what) {
  if (aborted_) throw dist::DistError(what + ": the NCCL communicator was aborted before");
  if (marker.reached()) return true;
  if (const std::string e = comm_->async_error(); !e.empty()) fail(what + " failed: " + e, false);
  return false;
}

void DeviceCommunicator::wait(Marker& marker, const std::string& what) {
  const auto deadline = Clock::now() + timeout_;
  while (!test(marker, what)) {
    if (Clock::now() > deadline)
      fail(what + " did not complete within " + seconds(timeout_) + " (a rank lost or stalled)",
           true);
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace ampx::nccl
