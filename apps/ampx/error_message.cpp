#include "error_message.hpp"

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string_view>

namespace ampx::cli {

std::string escape_control(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

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
  if (internal) return "internal error (" + escape_control(std::string(what)) + ")";
  return escape_control(std::string(what));
}

}  // namespace ampx::cli
