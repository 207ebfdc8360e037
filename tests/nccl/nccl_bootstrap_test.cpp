// The NCCL communicator's bootstrap over MPI (DeviceCommunicator), under
// mpirun with 2 ranks, rank r on CUDA device r. Where NCCL cannot start
// (here: no CUDA device; on one GPU: rank 1's device does not exist), every
// rank must stop with one line naming itself, within the timeout: the
// unique id is made and broadcast, the failure agreed over MPI. With a GPU
// per rank NCCL starts, which the device tests cover: skipped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ampx/dist/dist_error.hpp>
#include <ampx/dist/mpi_runtime.hpp>
#include <ampx/nccl/device_communicator.hpp>
#include <ampx/nccl/nccl_loader.hpp>

#include <chrono>

namespace ampx::nccl {
namespace {

using ::testing::HasSubstr;

TEST(NcclBootstrap, EveryRankStopsInOneLineWhereNcclCannotStart) {
  std::string why;
  Module* module = nccl_module(why);
  ASSERT_NE(module, nullptr) << why;
  const std::chrono::milliseconds timeout(10000);
  dist::Communicator mpi(dist::MpiRuntime(), dist::CommunicatorOptions{.timeout = timeout});
  if (module->device_count() >= mpi.size()) GTEST_SKIP() << "a GPU per rank: NCCL starts";
  const auto t0 = std::chrono::steady_clock::now();
  try {
    DeviceCommunicator comm(*module, mpi, mpi.rank(), timeout);
    FAIL() << "NCCL started without a device for rank " << mpi.rank();
  } catch (const dist::DistError& e) {
    const std::string line = e.what();
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    EXPECT_THAT(line, HasSubstr("on rank " + std::to_string(mpi.rank()) + " of " +
                                std::to_string(mpi.size())));
    EXPECT_THAT(line, HasSubstr("AMPX_NCCL=off takes the host path"));
    if (mpi.rank() == 0) std::cout << "rank 0: " << line << "\n";
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3 * timeout);
  mpi.barrier();
}

}  // namespace
}  // namespace ampx::nccl
