#include <ampx/dist/communicator.hpp>
#include <ampx/dist/dist_error.hpp>

#include "impl.hpp"
#include "mpi_call.hpp"

#include <ampx/half.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ampx::dist {
namespace {

void require_16bit(DType dtype) {
  if (dtype != DType::kF16 && dtype != DType::kBF16) {
    throw std::invalid_argument("allreduce of 16-bit values: dtype must be f16 or bf16, not " +
                                std::string(dtype_name(dtype)));
  }
}

}  // namespace

Communicator::Communicator(MpiRuntime runtime, CommunicatorOptions) : impl_(std::make_unique<Impl>(std::move(runtime))) {
  int world_rank = -1;
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  // WORLD keeps the host's error handler (fatal by default), so a failed
  // dup may abort before this check: only the dup's own calls return.
  detail::check_mpi(MPI_Comm_dup(MPI_COMM_WORLD, &impl_->comm), "MPI_Comm_dup", world_rank,
                    world_size);
  detail::check_mpi(MPI_Comm_set_errhandler(impl_->comm, MPI_ERRORS_RETURN),
                    "MPI_Comm_set_errhandler", world_rank, world_size);
  detail::check_mpi(MPI_Comm_rank(impl_->comm, &impl_->rank), "MPI_Comm_rank", world_rank,
                    world_size);
  detail::check_mpi(MPI_Comm_size(impl_->comm, &impl_->size), "MPI_Comm_size", world_rank,
                    world_size);
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
  detail::for_each_piece(values.size(), [&](size_t offset, int count) {
    detail::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, values.data() + offset, count, MPI_FLOAT, MPI_SUM, impl_->comm),
        "MPI_Allreduce", impl_->rank, impl_->size);
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
  require_16bit(dtype);
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

bool Communicator::all_true(bool value) {
  int flag = value ? 1 : 0;
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, impl_->comm),
                    "MPI_Allreduce", impl_->rank, impl_->size);
  return flag != 0;
}

bool Communicator::all_equal(uint64_t value) {
  // One reduction gives the largest and (through ~) the smallest value.
  uint64_t bounds[2] = {value, ~value};
  detail::check_mpi(MPI_Allreduce(MPI_IN_PLACE, bounds, 2, MPI_UINT64_T, MPI_MAX, impl_->comm),
                    "MPI_Allreduce", impl_->rank, impl_->size);
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
  detail::for_each_piece(bytes.size(), [&](size_t offset, int count) {
    detail::check_mpi(MPI_Bcast(bytes.data() + offset, count, MPI_BYTE, root, impl_->comm),
                      "MPI_Bcast", impl_->rank, impl_->size);
  });
}

void Communicator::barrier() {
  detail::check_mpi(MPI_Barrier(impl_->comm), "MPI_Barrier", impl_->rank, impl_->size);
}

PendingAllreduce Communicator::start_allreduce_sum(std::span<float> values) {
  auto impl = std::make_unique<PendingAllreduce::Impl>(
      PendingAllreduce::Impl{impl_->runtime, {}, impl_->rank, impl_->size});
  detail::for_each_piece(values.size(), [&](size_t offset, int count) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int code = MPI_Iallreduce(MPI_IN_PLACE, values.data() + offset, count, MPI_FLOAT, MPI_SUM,
                                    impl_->comm, &request);
    if (code != MPI_SUCCESS) {
      PendingAllreduce started(std::move(impl));  // waits for the pieces already started
      detail::throw_mpi_error(code, "MPI_Iallreduce", impl_->rank, impl_->size);
    }
    impl->requests.push_back(request);
  });
  if (impl->requests.empty()) return PendingAllreduce();
  return PendingAllreduce(std::move(impl));
}

}  // namespace ampx::dist

namespace ampx::dist {

void Communicator::allreduce_max(std::span<float> values) {
  detail::for_each_piece(values.size(), [&](size_t offset, int count) {
    detail::check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, values.data() + offset, count, MPI_FLOAT, MPI_MAX, impl_->comm),
        "MPI_Allreduce", impl_->rank, impl_->size);
  });
}

PendingAllreduce Communicator::start_allreduce_sum(std::span<uint16_t> values, DType dtype) {
  allreduce_sum(values, dtype);
  return PendingAllreduce();
}

}  // namespace ampx::dist
