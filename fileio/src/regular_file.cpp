#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ampx::fileio {

const char* file_kind(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "not a regular file";
  }
}

RegularFile::RegularFile(const std::filesystem::path& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused
  // below once fstat() has said what it is.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) {
    const int err = errno;
    if (err == ENOENT) throw FileError(path, "no such file");
    fail_errno(path, "cannot open", err);
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fail_errno(path, "cannot read its status", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    throw FileError(path, std::string("is ") + file_kind(st.st_mode) + ", not a regular file");
  }
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  size_ = static_cast<uint64_t>(st.st_size);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::read_at(uint64_t offset, void* out, uint64_t bytes) const {
  auto* p = static_cast<unsigned char*>(out);
  uint64_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno(path_, "read failed", errno);
    if (n == 0)
      throw FileError(path_, "ends after " + std::to_string(offset + done) + " bytes; " +
                                 std::to_string(bytes) + " bytes at offset " +
                                 std::to_string(offset) + " were expected");
    done += static_cast<uint64_t>(n);
  }
}

std::string read_regular_file(const std::filesystem::path& path, uint64_t max_bytes) {
  const RegularFile f(path);
  if (f.size() > max_bytes)
    throw FileError(path, "is " + std::to_string(f.size()) + " bytes, more than the " +
                              std::to_string(max_bytes) + " bytes ampx reads");
  std::string bytes(f.size(), '\0');
  f.read_at(0, bytes.data(), bytes.size());
  return bytes;
}

}  // namespace ampx::fileio
