#include <ampx/fileio/file_error.hpp>

#include <cstdio>
#include <cstring>

namespace ampx::fileio {

std::string escape_control(std::string_view text) {
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

std::string printable_path(const std::filesystem::path& path) {
  return escape_control(path.string());
}

FileError::FileError(const std::filesystem::path& path, const std::string& what)
    : std::runtime_error(printable_path(path) + ": " + what), reason_(what) {}

void fail_errno(const std::filesystem::path& path, const std::string& what, int err) {
  throw FileError(path, what + " (" + std::strerror(err) + ")");
}

}  // namespace ampx::fileio
