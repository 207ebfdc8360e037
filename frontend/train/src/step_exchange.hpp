// The MPI side of DataParallel::make_exchange (built only with ampx_dist).
#pragma once

#include <ampx/dist/communicator.hpp>
#include <ampx/train/data_parallel.hpp>

namespace ampx::train {

std::unique_ptr<StepExchange> make_step_exchange(dist::Communicator& buckets,
                                                 dist::Communicator& sync,
                                                 std::span<const BucketedGradient> gradients,
                                                 std::vector<std::vector<size_t>> bucket_members);

}  // namespace ampx::train
