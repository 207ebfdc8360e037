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

// `text` with every control character written as \xNN, so that a hostile
// name (a path, or a node name from a model) cannot forge lines or send
// terminal escapes.
std::string escape_control(std::string_view text);

// The path for messages: escape_control() of it.
std::string printable_path(const std::filesystem::path& path);

}  // namespace ampx::fileio
