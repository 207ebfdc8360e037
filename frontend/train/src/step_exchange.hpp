// The MPI side of DataParallel::make_exchange (built only with ampx_dist).
#pragma once

#include <ampx/dist/communicator.hpp>
#include <ampx/train/data_parallel.hpp>

namespace ampx::train {

// The run's two communicators (DataParallel::Impl).
struct StepCommunicators {
  dist::Communicator& buckets;  // the gradient buckets, in bucket order
  dist::Communicator& sync;     // blocking reductions inside the step
};

std::unique_ptr<StepExchange> make_step_exchange(StepCommunicators comms,
                                                 std::span<const BucketedGradient> gradients,
                                                 std::vector<std::vector<size_t>> bucket_members,
                                                 std::optional<GuardRule> guard);

}  // namespace ampx::train
