// The one error type of file I/O: a single line "PATH: what happened",
// with errno's text taken at the failing call (never after a later call has
// overwritten it).
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

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

// The path for messages: control characters and bytes that are not
// printable ASCII escaped as \xNN, so a hostile name cannot forge lines or
// terminal escapes.
std::string printable_path(const std::filesystem::path& path);

}  // namespace ampx::fileio
