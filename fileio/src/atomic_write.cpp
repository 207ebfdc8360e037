#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/regular_file.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <random>
#include <string>

namespace ampx::fileio {
namespace fs = std::filesystem;
namespace {

// A file descriptor closed on destruction.
struct Fd {
  int fd = -1;
  explicit Fd(int f) noexcept : fd(f) {}
  Fd(Fd&& other) noexcept : fd(other.release()) {}
  Fd& operator=(Fd&&) = delete;
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() noexcept {
    const int f = fd;
    fd = -1;
    return f;
  }
};

void write_all(int fd, std::string_view content, const fs::path& path) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_errno(path, "write failed", errno);
    done += static_cast<size_t>(n);
  }
}

// A device node or FIFO: written where it is, never replaced.
void write_in_place(const fs::path& path, std::string_view content) {
  Fd f{::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY)};
  if (f.fd < 0) fail_errno(path, "cannot open for writing", errno);
  write_all(f.fd, content, path);
  if (::close(f.release()) != 0) fail_errno(path, "write failed", errno);
}

// ".<name>.ampx-<16 hex digits>": unpredictable, and within NAME_MAX.
std::string temp_name(const fs::path& target) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".ampx-%016llx", static_cast<unsigned long long>(rng()));
  std::string name(1, '.');
  name.append(target.filename().string(), 0, 200);
  name.append(suffix);
  return name;
}

// A new temporary file next to `target`; never an existing file or link.
std::pair<Fd, fs::path> create_temp(const fs::path& target) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  for (int attempt = 0; attempt < 16; ++attempt) {
    fs::path tmp = dir / temp_name(target);
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return {Fd{fd}, std::move(tmp)};
    if (errno != EEXIST)
      fail_errno(target, "cannot create a temporary file in " + printable_path(dir), errno);
  }
  throw FileError(target, "cannot create a temporary file (16 names taken)");
}

void replace_regular(const fs::path& target, std::string_view content, const struct stat* old) {
  auto created = create_temp(target);
  Fd& f = created.first;
  const fs::path& tmp = created.second;  // a plain name: lambdas cannot capture bindings in C++20
  const auto discard = [&tmp](int err) {
    ::unlink(tmp.c_str());
    return err;
  };
  try {
    write_all(f.fd, content, target);
  } catch (...) {
    discard(0);
    throw;
  }
  if (old != nullptr) ::fchmod(f.fd, old->st_mode & 07777);
  if (::fsync(f.fd) != 0) fail_errno(target, "write failed", discard(errno));
  if (::close(f.release()) != 0) fail_errno(target, "write failed", discard(errno));
  if (::rename(tmp.c_str(), target.c_str()) != 0)
    fail_errno(target, "cannot replace", discard(errno));
  // The rename itself durable too (best effort: not every file system can).
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  Fd d{::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd >= 0) ::fsync(d.fd);
}

}  // namespace

void write_file_atomically(const fs::path& path, std::string_view content) {
  if (path.empty()) throw FileError(path, "empty file name");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {  // what the path names, through links
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_in_place(path, content);
    if (!S_ISREG(st.st_mode))
      throw FileError(
          path, std::string("is ") + file_kind(st.st_mode) + ": only a regular file is replaced");
    // A link to a regular file: the file is replaced, the link stays.
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    return replace_regular(ec ? path : real, content, &st);
  }
  const int err = errno;
  if (err != ENOENT) fail_errno(path, "cannot write", err);
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
    throw FileError(path, "is a symbolic link to nothing: not followed");
  replace_regular(path, content, nullptr);
}

}  // namespace ampx::fileio
