// The one error type of file I/O: a single line "PATH: what happened",
// with errno's text taken at the failing call (never after a later call has
// overwritten it).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ampx::fileio {

class FileError : public std::runtime_error {
 public:
  FileError(const std::filesystem::path& path, const std::string& what);
  // What happened, without the path ("no such file").
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

// "PATH: <what> (<strerror(err)>)".
[[noreturn]] void fail_errno(const std::filesystem::path& path, const std::string& what, int err);

// `text` with every control character, and every byte that is not part of
// a whole UTF-8 character, written as \xNN, so that a hostile name (a path,
// or a node name from a model) cannot forge lines or send terminal escapes,
// and a message is always valid UTF-8.
std::string escape_control(std::string_view text);

// The bytes of the whole UTF-8 character at text[at] (1 to 4), or 0 when
// the bytes there do not start one (a stray continuation byte, half a
// character, an overlong or surrogate encoding).
size_t utf8_char_size(std::string_view text, size_t at);

// At most `max_bytes` of `text`, cut at a character boundary: a message
// that quotes the start of an input never holds half a character.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

// The path for messages: escape_control() of it.
std::string printable_path(const std::filesystem::path& path);

}  // namespace ampx::fileio
