#include <ampx/fileio/file_error.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ampx::fileio {

size_t utf8_char_size(std::string_view text, size_t at) {
  if (at >= text.size()) return 0;
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  // The second byte's range excludes overlong forms, surrogates and code
  // points past U+10FFFF (RFC 3629's table).
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (at + n > text.size()) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (byte(k) < 0x80 || byte(k) > 0xbf) return 0;
  return n;
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  size_t end = 0;
  while (end < text.size()) {
    const size_t n = std::max<size_t>(1, utf8_char_size(text, end));  // a bad byte is one
    if (end + n > max_bytes) break;
    end += n;
  }
  return text.substr(0, end);
}

std::string escape_control(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_char_size(text, i);
    if (n == 0 || c < 0x20 || c == 0x7f) {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
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
