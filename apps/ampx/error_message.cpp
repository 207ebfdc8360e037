#include "error_message.hpp"

#include <ampx/fileio/file_error.hpp>

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ampx::cli {

std::string error_message(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr)
    return "out of memory (the model or a tensor is larger than this machine can hold)";
  const std::string_view what = e.what();
  // The standard library's texts name its own internals, not the input.
  const bool internal = what.find("_M_") != std::string_view::npos ||
                        what.find("std::") != std::string_view::npos ||
                        what.rfind("vector::", 0) == 0 || what.rfind("basic_string", 0) == 0;
  if (dynamic_cast<const std::length_error*>(&e) != nullptr && internal)
    return "a size too large to allocate (a corrupt or hostile input?)";
  // A bug of ampx's, not the input's: say so without the library's words.
  if (internal) return "internal error: an index out of range (a bug in ampx; please report it)";
  return fileio::escape_control(what);
}

void print_error_line(const std::string& text) {
  const std::string line = "ampx: error: " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace ampx::cli
