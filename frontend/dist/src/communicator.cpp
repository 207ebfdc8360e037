#include <ampx/dist/communicator.hpp>
#include <ampx/dist/dist_error.hpp>

#include "impl.hpp"
#include "mpi_call.hpp"

#include <ampx/half.hpp>

#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ampx::dist {
namespace {

void require_16bit(DType dtype, const char* what) {
  if (dtype != DType::kF16 && dtype != DType::kBF16) {
    throw std::invalid_argument(std::string(what) + ": dtype must be f16 or bf16, not " +
                                std::string(dtype_name(dtype)));
  }
}

// One collective, every piece of it started non-blocking (`start(offset,
// count, &request)` returns MPI's code) and all completed by the polled
// wait, so that a blocking call honours the timeout and a lost rank too.
template <class Start>
void collective(detail::Liveness& live, const char* call, size_t n, Start&& start) {
  live.check_usable();
  std::vector<MPI_Request> requests;
  detail::for_each_piece(n, [&](size_t offset, int count) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int code = start(offset, count, &request);
    if (code != MPI_SUCCESS) {
      detail::wait_all_quietly(requests, live);  // the pieces already started
      detail::throw_mpi_error(code, call, live.rank, live.size);
    }
    requests.push_back(request);
  });
  detail::wait_all(requests, live, call);
}

// Starts an in-place reduction of `n` elements of `type` under `op`, in
// pieces, as one PendingAllreduce: MPI_Iallreduce to every rank, or, with a
// `root`, MPI_Ireduce to that rank alone (the others' buffers are only read).
struct Reduction {
  MPI_Datatype type;
  size_t element_bytes;
  MPI_Op op;
  std::optional<int> root;  // none: every rank
};

PendingAllreduce start_reduction(const MpiRuntime& runtime,
                                 const std::shared_ptr<detail::Liveness>& live, MPI_Comm comm,
                                 std::byte* data, size_t n, const Reduction& how) {
  live->check_usable();
  const char* call = how.root ? "MPI_Ireduce" : "MPI_Iallreduce";
  auto impl =
      std::make_unique<PendingAllreduce::Impl>(PendingAllreduce::Impl{runtime, live, {}, call});
  detail::for_each_piece(n, [&](size_t offset, int count) {
    MPI_Request request = MPI_REQUEST_NULL;
    std::byte* piece = data + offset * how.element_bytes;
    int code = MPI_SUCCESS;
    if (!how.root) {
      code = MPI_Iallreduce(MPI_IN_PLACE, piece, count, how.type, how.op, comm, &request);
    } else if (*how.root == live->rank) {
      code = MPI_Ireduce(MPI_IN_PLACE, piece, count, how.type, how.op, *how.root, comm, &request);
    } else {
      code = MPI_Ireduce(piece, nullptr, count, how.type, how.op, *how.root, comm, &request);
    }
    if (code != MPI_SUCCESS) {
      PendingAllreduce started(std::move(impl));  // waits for the pieces already started
      detail::throw_mpi_error(code, call, live->rank, live->size);
    }
    impl->requests.push_back(request);
  });
  if (impl->requests.empty()) return PendingAllreduce();
  return PendingAllreduce(std::move(impl));
}

}  // namespace

Communicator::Communicator(MpiRuntime runtime, CommunicatorOptions options)
    : impl_(std::make_unique<Impl>(std::move(runtime))) {
  if (options.timeout.count() <= 0) {
    throw std::invalid_argument("Communicator: the timeout must be positive, not " +
                                std::to_string(options.timeout.count()) + " ms");
  }
  detail::Liveness& live = *impl_->live;
  live.timeout = options.timeout;
  MPI_Comm_rank(MPI_COMM_WORLD, &live.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &live.size);
  // WORLD keeps the host's error handler (fatal by default), so a failed
  // dup may abort before this check: only the dup's own calls return. The
  // non-blocking dup: a rank that never comes is a timeout here too.
  MPI_Request request = MPI_REQUEST_NULL;
  detail::check_mpi(MPI_Comm_idup(MPI_COMM_WORLD, &impl_->comm, &request), "MPI_Comm_idup",
                    live.rank, live.size);
  detail::wait_all({&request, 1}, live, "MPI_Comm_idup");
  detail::check_mpi(MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN),
                    "MPI_Comm_set_errhandler", live.rank, live.size);
  detail::check_mpi(MPI_Comm_rank(impl_->comm, &impl_->rank), "MPI_Comm_rank", live.rank,
                    live.size);
  detail::check_mpi(MPI_Comm_size(impl_->comm, &impl_->size), "MPI_Comm_size", live.rank,
                    live.size);
  impl_->ops.emplace();
}

Communicator::~Communicator() = default;
Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;

int Communicator::rank() const {
  return impl_->rank;
}

int Communicator::size() const {
  return impl_->size;
}

void Communicator::allreduce_sum(std::span<float> values) {
  collective(*impl_->live, "MPI_Iallreduce", values.size(),
             [&](size_t offset, int count, MPI_Request* r) {
               return MPI_Iallreduce(MPI_IN_PLACE, values.data() + offset, count, MPI_FLOAT,
                                     MPI_SUM, impl_->comm, r);
             });
}

void Communicator::allreduce_average(std::span<float> values) {
  allreduce_sum(values);
  // A division, not a product with 1/size: exact wherever the quotient is
  // representable (1/3 is not), and the same on every rank.
  const auto n = static_cast<float>(impl_->size);
  if (impl_->size > 1) {
    for (float& v : values) v /= n;
  }
}

void Communicator::allreduce_sum(std::span<uint16_t> values, DType dtype) {
  allreduce_16bit(values, dtype, /*average=*/false);
}

void Communicator::allreduce_average(std::span<uint16_t> values, DType dtype) {
  allreduce_16bit(values, dtype, /*average=*/true);
}

void Communicator::allreduce_16bit(std::span<uint16_t> values, DType dtype, bool average) {
  require_16bit(dtype, "allreduce of 16-bit values");
  const bool f16 = dtype == DType::kF16;
  std::vector<float> wide(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    wide[i] = f16 ? f16_bits_to_float(values[i]) : bf16_bits_to_float(values[i]);
  }
  if (average) {
    allreduce_average(std::span<float>(wide));  // divided in f32: one rounding to 16 bits
  } else {
    allreduce_sum(std::span<float>(wide));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = f16 ? float_to_f16_bits(wide[i]) : float_to_bf16_bits(wide[i]);
  }
}

void Communicator::allreduce_max(std::span<float> values) {
  collective(*impl_->live, "MPI_Iallreduce", values.size(),
             [&](size_t offset, int count, MPI_Request* r) {
               return MPI_Iallreduce(MPI_IN_PLACE, values.data() + offset, count, MPI_FLOAT,
                                     impl_->ops->max_nan(), impl_->comm, r);
             });
}

bool Communicator::all_true(bool value) {
  int flag = value ? 1 : 0;
  collective(*impl_->live, "MPI_Iallreduce", 1, [&](size_t, int, MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, impl_->comm, r);
  });
  return flag != 0;
}

bool Communicator::all_equal(uint64_t value) {
  // One reduction gives the largest and (through ~) the smallest value.
  uint64_t bounds[2] = {value, ~value};
  collective(*impl_->live, "MPI_Iallreduce", 1, [&](size_t, int, MPI_Request* r) {
    return MPI_Iallreduce(MPI_IN_PLACE, bounds, 2, MPI_UINT64_T, MPI_MAX, impl_->comm, r);
  });
  return bounds[0] == ~bounds[1];
}

void Communicator::broadcast(std::span<std::byte> bytes, int root) {
  if (root < 0 || root >= impl_->size) {
    throw std::invalid_argument("broadcast: root " + std::to_string(root) + " is not a rank of " +
                                std::to_string(impl_->size));
  }
  // MPI leaves different lengths undefined (a truncation error on some
  // ranks, a hang on others): every rank refuses them together instead.
  if (!all_equal(bytes.size())) {
    throw DistError("broadcast failed on rank " + std::to_string(impl_->rank) + " of " +
                    std::to_string(impl_->size) + ": the ranks' buffers differ in length (this " +
                    "rank's: " + std::to_string(bytes.size()) + " bytes)");
  }
  collective(*impl_->live, "MPI_Ibcast", bytes.size(),
             [&](size_t offset, int count, MPI_Request* r) {
               return MPI_Ibcast(bytes.data() + offset, count, MPI_BYTE, root, impl_->comm, r);
             });
}

void Communicator::barrier() {
  collective(*impl_->live, "MPI_Ibarrier", 1,
             [&](size_t, int, MPI_Request* r) { return MPI_Ibarrier(impl_->comm, r); });
}

void Communicator::allgather_in_place(std::span<std::byte> all, std::span<const uint64_t> counts) {
  if (counts.size() != static_cast<size_t>(impl_->size)) {
    throw std::invalid_argument("allgather: " + std::to_string(counts.size()) + " counts for " +
                                std::to_string(impl_->size) + " ranks");
  }
  uint64_t total = 0, hash = 0xcbf29ce484222325ull;
  std::vector<int> ints(counts.size()), displs(counts.size());
  for (size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > static_cast<uint64_t>(std::numeric_limits<int>::max()) ||
        total > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
      throw std::invalid_argument("allgather: a block or offset beyond 2^31 - 1 bytes");
    }
    ints[r] = static_cast<int>(counts[r]);
    displs[r] = static_cast<int>(total);
    total += counts[r];
    hash = (hash ^ counts[r]) * 0x100000001b3ull;
  }
  if (total != all.size()) {
    throw std::invalid_argument("allgather: the counts add up to " + std::to_string(total) +
                                " bytes, the buffer holds " + std::to_string(all.size()));
  }
  // As in broadcast(): ranks with other blocks all refuse together.
  if (!all_equal(hash)) {
    throw DistError("allgather failed on rank " + std::to_string(impl_->rank) + " of " +
                    std::to_string(impl_->size) + ": the ranks' block sizes differ");
  }
  collective(*impl_->live, "MPI_Iallgatherv", 1, [&](size_t, int, MPI_Request* r) {
    return MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_BYTE, all.data(), ints.data(), displs.data(),
                           MPI_BYTE, impl_->comm, r);
  });
}

PendingAllreduce Communicator::start_allreduce_sum(std::span<float> values) {
  return start_reduction(impl_->runtime, impl_->live, impl_->comm,
                         reinterpret_cast<std::byte*>(values.data()), values.size(),
                         {MPI_FLOAT, sizeof(float), MPI_SUM, std::nullopt});
}

PendingAllreduce Communicator::start_allreduce_sum(std::span<uint16_t> values, DType dtype) {
  require_16bit(dtype, "start_allreduce_sum of 16-bit values");
  const MPI_Op op = dtype == DType::kF16 ? impl_->ops->f16_sum() : impl_->ops->bf16_sum();
  return start_reduction(impl_->runtime, impl_->live, impl_->comm,
                         reinterpret_cast<std::byte*>(values.data()), values.size(),
                         {MPI_UINT16_T, sizeof(uint16_t), op, std::nullopt});
}

void Communicator::require_root(int root, const char* what) const {
  if (root < 0 || root >= impl_->size) {
    throw std::invalid_argument(std::string(what) + ": root " + std::to_string(root) +
                                " is not a rank of " + std::to_string(impl_->size));
  }
}

PendingAllreduce Communicator::start_reduce_sum(std::span<float> values, int root) {
  require_root(root, "start_reduce_sum");
  return start_reduction(impl_->runtime, impl_->live, impl_->comm,
                         reinterpret_cast<std::byte*>(values.data()), values.size(),
                         {MPI_FLOAT, sizeof(float), MPI_SUM, root});
}

PendingAllreduce Communicator::start_reduce_sum(std::span<uint16_t> values, DType dtype, int root) {
  require_16bit(dtype, "start_reduce_sum of 16-bit values");
  require_root(root, "start_reduce_sum");
  const MPI_Op op = dtype == DType::kF16 ? impl_->ops->f16_sum() : impl_->ops->bf16_sum();
  return start_reduction(impl_->runtime, impl_->live, impl_->comm,
                         reinterpret_cast<std::byte*>(values.data()), values.size(),
                         {MPI_UINT16_T, sizeof(uint16_t), op, root});
}

}  // namespace ampx::dist
