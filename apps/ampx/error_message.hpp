// The one mapping from a failure to the line `ampx: error: ...` prints: what
// and where, never a C++ library's internals, always one line.
#pragma once

#include <exception>
#include <string>

namespace ampx::cli {

// The message for `e`: the standard library's own texts (std::bad_alloc,
// vector::_M_range_check, "cannot create std::vector larger than
// max_size()", ...) become plain words, and control characters (a newline
// or a terminal escape in a name taken from a model) are written as \xNN.
std::string error_message(const std::exception& e);

// Writes `ampx: error: TEXT` and a newline to stderr in one write: ranks of
// one mpirun job share its stderr, and a line written in pieces can come out
// cut by another rank's.
void print_error_line(const std::string& text);

}  // namespace ampx::cli
