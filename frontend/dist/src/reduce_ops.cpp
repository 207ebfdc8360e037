#include "reduce_ops.hpp"

#include "mpi_call.hpp"

#include <ampx/half.hpp>

#include <cmath>

namespace ampx::dist::detail {
namespace {

// MPI's user function: inout[i] = in[i] op inout[i]. The datatype is
// MPI_UINT16_T (or MPI_FLOAT for the max); MPI never hands another to an
// operator it was not started with.
void add_f16(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[i] = float_to_f16_bits(f16_bits_to_float(a[i]) + f16_bits_to_float(b[i]));
  }
}

void add_bf16(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const uint16_t*>(in);
  auto* b = static_cast<uint16_t*>(inout);
  for (int i = 0; i < *len; ++i) {
    b[i] = float_to_bf16_bits(bf16_bits_to_float(a[i]) + bf16_bits_to_float(b[i]));
  }
}

void max_or_nan(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const float*>(in);
  auto* b = static_cast<float*>(inout);
  for (int i = 0; i < *len; ++i) {
    if (std::isnan(a[i]) || a[i] > b[i]) b[i] = a[i];
  }
}

}  // namespace

ReduceOps::ReduceOps() {
  // Commutative: a + b and b + a round alike, as do max(a, b) and max(b, a)
  // (NaN wins either way), so MPI may pick any order.
  try {
    check_mpi(MPI_Op_create(&add_f16, 1, &f16_sum_), "MPI_Op_create", -1, 0);
    check_mpi(MPI_Op_create(&add_bf16, 1, &bf16_sum_), "MPI_Op_create", -1, 0);
    check_mpi(MPI_Op_create(&max_or_nan, 1, &max_nan_), "MPI_Op_create", -1, 0);
  } catch (...) {
    free_all();  // no destructor runs for a constructor that throws
    throw;
  }
}

ReduceOps::~ReduceOps() {
  free_all();
}

void ReduceOps::free_all() {
  for (MPI_Op* op : {&f16_sum_, &bf16_sum_, &max_nan_}) {
    if (*op != MPI_OP_NULL) MPI_Op_free(op);
  }
}

}  // namespace ampx::dist::detail
