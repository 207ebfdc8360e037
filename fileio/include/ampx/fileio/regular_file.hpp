// Reading an input file: only a regular file is read (a FIFO would block
// forever, a device such as /dev/zero never ends, a directory is no file),
// each refused with a message that says what the path is, and the size is
// bounded so that a huge file is refused before it is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ampx::fileio {

// 4 GiB: more than any model, .npy or profile ampx reads whole.
inline constexpr uint64_t kMaxReadBytes = uint64_t{4} << 30;

// An open regular file, closed on destruction.
class RegularFile {
 public:
  // Throws FileError: "PATH: no such file", "PATH: is a FIFO, not a
  // regular file", "PATH: cannot open (Permission denied)", ...
  explicit RegularFile(const std::filesystem::path& path);
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  int fd() const noexcept { return fd_; }
  uint64_t size() const noexcept { return size_; }
  const std::filesystem::path& path() const noexcept { return path_; }
  // Exactly `bytes` bytes at `offset` into `out`; throws FileError when the
  // file is shorter or the read fails.
  void read_at(uint64_t offset, void* out, uint64_t bytes) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// The whole file; throws FileError past max_bytes.
std::string read_regular_file(const std::filesystem::path& path,
                              uint64_t max_bytes = kMaxReadBytes);

// "a FIFO", "a directory", "a character device", ... for st_mode.
const char* file_kind(unsigned mode);

}  // namespace ampx::fileio
