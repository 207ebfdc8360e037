#include "mpi_call.hpp"

#include <ampx/dist/dist_error.hpp>

#include <algorithm>
#include <string>

namespace ampx::dist::detail {

void throw_mpi_error(int code, const char* call, int rank, int size) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  std::string reason;
  if (MPI_Error_string(code, text, &length) == MPI_SUCCESS) {
    reason.assign(text, static_cast<size_t>(std::max(length, 0)));
  } else {
    reason = "MPI error code " + std::to_string(code);
  }
  // The message stays one line whatever the MPI library's text holds.
  std::replace_if(
      reason.begin(), reason.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  std::string where =
      rank < 0 ? std::string() : " on rank " + std::to_string(rank) + " of " + std::to_string(size);
  throw DistError(std::string(call) + " failed" + where + ": " + reason);
}

}  // namespace ampx::dist::detail
