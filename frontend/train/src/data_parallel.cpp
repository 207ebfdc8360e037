#include <ampx/train/data_parallel.hpp>

#include <algorithm>
#include <stdexcept>

#if AMPX_HAVE_DIST
#include "step_exchange.hpp"

#include <ampx/dist/communicator.hpp>
#include <ampx/dist/dist_error.hpp>
#endif
#if AMPX_HAVE_NCCL
#include "nccl_step_exchange.hpp"
#endif

namespace ampx::train {

std::string_view allreduce_dtype_name(AllreduceDtype d) {
  switch (d) {
    case AllreduceDtype::kF32:
      return "f32";
    case AllreduceDtype::kBF16:
      return "bf16";
    case AllreduceDtype::kF16:
      return "f16";
    case AllreduceDtype::kAuto:
      return "auto";
  }
  return "?";
}

AllreduceDtype parse_allreduce_dtype(std::string_view text) {
  for (AllreduceDtype d :
       {AllreduceDtype::kF32, AllreduceDtype::kBF16, AllreduceDtype::kF16, AllreduceDtype::kAuto})
    if (text == allreduce_dtype_name(d)) return d;
  throw std::invalid_argument("all-reduce dtype '" + std::string(text) +
                              "' is not one of f32, bf16, f16, auto");
}

void DataParallelOptions::validate() const {
  if (!(bucket_mb > 0) || bucket_mb > 1e6)
    throw std::invalid_argument("bucket size " + std::to_string(bucket_mb) +
                                " MiB is not in (0, 1e6]");
  if (comm_timeout.count() <= 0)
    throw std::invalid_argument("the communication timeout must be positive");
}

RowShare rank_share(int64_t rows, int ranks, int rank) {
  const int64_t base = rows / ranks, extra = rows % ranks;
  return {rank * base + std::min<int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

std::vector<std::vector<size_t>> plan_buckets(std::span<const BucketedGradient> gradients,
                                              uint64_t bucket_bytes) {
  std::vector<std::vector<size_t>> buckets;
  uint64_t filled = 0;
  DType wire = DType::kF32;
  int owner = -1;
  for (size_t k = gradients.size(); k-- > 0;) {
    const BucketedGradient& g = gradients[k];
    const uint64_t bytes = static_cast<uint64_t>(g.elements) * 4;
    // The first bucket (the last layers, whose gradients come first) is
    // small, as DDP's: its all-reduce starts early in the backward pass.
    const uint64_t capacity =
        buckets.size() == 1 ? std::min(bucket_bytes, kFirstBucketBytes) : bucket_bytes;
    if (buckets.empty() || g.wire != wire || g.owner != owner || filled + bytes > capacity) {
      // A gradient alone in a bucket stays there, however large.
      if (buckets.empty() || !buckets.back().empty()) buckets.emplace_back();
      filled = 0;
      wire = g.wire;
      owner = g.owner;
    }
    buckets.back().push_back(k);
    filled += bytes;
  }
  return buckets;
}

#if AMPX_HAVE_DIST

struct DataParallel::Impl {
  // Two communicators, so that the orders of their collectives are each
  // fixed by the step's data dependencies alone: the buckets start in
  // bucket order; the synchronized statistics and the small reductions
  // between steps follow the forward and backward order.
  dist::Communicator buckets;
  dist::Communicator sync;
  Impl(dist::CommunicatorOptions o) : buckets(dist::MpiRuntime(), o), sync(dist::MpiRuntime(), o) {}
#if AMPX_HAVE_NCCL
  // Gradients on one CUDA device: NCCL (nccl_step_exchange.hpp).
  NcclState nccl{sync, std::chrono::milliseconds(0), nullptr, {}};
#endif
};

DataParallel::DataParallel(DataParallelOptions options) : options_(std::move(options)) {
  options_.validate();
  impl_ = std::make_unique<Impl>(dist::CommunicatorOptions{.timeout = options_.comm_timeout});
#if AMPX_HAVE_NCCL
  impl_->nccl.timeout = options_.comm_timeout;
#endif
}

int DataParallel::rank() const {
  return impl_->sync.rank();
}
int DataParallel::size() const {
  return impl_->sync.size();
}
void DataParallel::sum(std::span<float> values) {
  impl_->sync.allreduce_sum(values);
}
void DataParallel::max(std::span<float> values) {
  impl_->sync.allreduce_max(values);
}

void DataParallel::require_agreement(std::string_view what, std::string_view text) {
  // FNV-1a over the text: ranks compare 64 bits, not the text.
  uint64_t h = 1469598103934665603ull;
  for (char c : text) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  if (!impl_->sync.all_equal(h))
    throw std::invalid_argument("the " + std::to_string(size()) + " ranks disagree on the " +
                                std::string(what) + " (rank " + std::to_string(rank()) + ": " +
                                std::string(text.substr(0, 120)) + ")");
}

std::unique_ptr<StepExchange> DataParallel::make_exchange(
    std::span<const BucketedGradient> gradients, std::optional<GuardRule> guard) {
  const auto bucket_bytes = static_cast<uint64_t>(options_.bucket_mb * 1024 * 1024);
  auto host = make_step_exchange({impl_->buckets, impl_->sync}, gradients,
                                 plan_buckets(gradients, bucket_bytes), guard);
#if AMPX_HAVE_NCCL
  // ZeRO-1's reduce to the owner and the guard's verdict are the host
  // path's alone.
  if (!guard)
    return make_nccl_step_exchange(impl_->nccl, std::move(host), gradients,
                                   plan_buckets(gradients, bucket_bytes));
#endif
  return host;
}

void DataParallel::allgather(std::span<std::byte> all, std::span<const uint64_t> counts) {
  impl_->sync.allgather_in_place(all, counts);
}

#else

struct DataParallel::Impl {};

DataParallel::DataParallel(DataParallelOptions options) : options_(std::move(options)) {
  options_.validate();
  throw std::runtime_error(
      "data-parallel training needs MPI, and this ampx was built without it (install "
      "libopenmpi-dev and build again)");
}
int DataParallel::rank() const {
  return 0;
}
int DataParallel::size() const {
  return 1;
}
void DataParallel::sum(std::span<float>) {}
void DataParallel::max(std::span<float>) {}
void DataParallel::require_agreement(std::string_view, std::string_view) {}
std::unique_ptr<StepExchange> DataParallel::make_exchange(std::span<const BucketedGradient>,
                                                          std::optional<GuardRule>) {
  return nullptr;
}
void DataParallel::allgather(std::span<std::byte>, std::span<const uint64_t>) {}

#endif

DataParallel::~DataParallel() = default;

}  // namespace ampx::train
