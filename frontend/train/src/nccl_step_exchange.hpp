// The device path of DataParallel::make_exchange (built only with
// ampx_nccl): gradient buckets as device buffers, summed by ncclAllReduce
// on the CUDA device's stream (docs/DISTRIBUTED.md, "NCCL").
#pragma once

#include <ampx/dist/communicator.hpp>
#include <ampx/nccl/device_communicator.hpp>
#include <ampx/train/data_parallel.hpp>

#include <chrono>
#include <memory>
#include <string>

namespace ampx::train {

// One per DataParallel: the NCCL communicator, made by the first exchange
// that takes the device path and kept (bound to that CUDA device).
struct NcclState {
  dist::Communicator& sync;  // the decision and the bootstrap
  std::chrono::milliseconds timeout;
  std::unique_ptr<nccl::DeviceCommunicator> comm;
  std::string last_reason;  // the last host-path reason said (said once)
  // A stand-in for the loaded module (tests: NCCL's part on host memory);
  // nullptr: nccl_module()'s.
  nccl::Module* module = nullptr;
};

// Wraps `host` (the MPI exchange, which keeps the synchronized values and
// every value when the device path is not taken). The path is chosen when
// the executor sets the exchange, the same on every rank: the device path
// when every rank's gradients all live on one CUDA device with native
// handles and the NCCL module loads.
std::unique_ptr<StepExchange> make_nccl_step_exchange(
    NcclState& state, std::unique_ptr<StepExchange> host,
    std::span<const BucketedGradient> gradients, std::vector<std::vector<size_t>> bucket_members);

}  // namespace ampx::train
