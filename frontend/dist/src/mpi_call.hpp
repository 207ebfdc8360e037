// What every MPI call of the library shares: the error check that turns a
// return code into DistError, and the split of long buffers into pieces
// that fit MPI's int counts. Private to frontend/dist: <mpi.h> stays here.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <limits>

namespace ampx::dist::detail {

// One line: "CALL failed on rank R of N: MPI's error string". `rank` < 0
// when there is no communicator yet ("CALL failed: ...").
[[noreturn]] void throw_mpi_error(int code, const char* call, int rank, int size);

inline void check_mpi(int code, const char* call, int rank, int size) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, call, rank, size);
}

// The largest piece one call carries: MPI counts are int. 2^30 elements
// keeps every byte count of the library's types below 2^32 too.
inline constexpr size_t kMaxPiece = size_t{1} << 30;
static_assert(kMaxPiece <= static_cast<size_t>(std::numeric_limits<int>::max()));

// Calls f(offset, count) for consecutive pieces of [0, n); none when n is 0.
template <class F>
void for_each_piece(size_t n, F&& f) {
  for (size_t offset = 0; offset < n; offset += kMaxPiece) {
    f(offset, static_cast<int>(std::min(kMaxPiece, n - offset)));
  }
}

}  // namespace ampx::dist::detail
