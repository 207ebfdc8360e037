// A directory only this user can enter (mkdtemp, mode 0700) for files
// handed between processes, removed with its contents on destruction: no
// predictable name in a shared /tmp for another user to plant a link at.
#pragma once

#include <filesystem>

namespace ampx::fileio {

class PrivateTempDir {
 public:
  // Throws FileError when no directory can be made.
  PrivateTempDir();
  PrivateTempDir(const PrivateTempDir&) = delete;
  PrivateTempDir& operator=(const PrivateTempDir&) = delete;
  ~PrivateTempDir();
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace ampx::fileio
