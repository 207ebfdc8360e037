// fileio: every output replaced atomically and only when it is a regular
// file; device nodes and FIFOs written in place; inputs that are no regular
// file refused at once (never waited on); private hand-off directories.
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/file_error.hpp>
#include <ampx/fileio/private_temp_dir.hpp>
#include <ampx/fileio/regular_file.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using ampx::fileio::FileError;
using ampx::fileio::PrivateTempDir;
using ampx::fileio::read_regular_file;
using ampx::fileio::write_file_atomically;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every entry of the directory: no temporary may be left behind.
size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const FileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(AtomicWrite, CreatesAndReplacesKeepingThePermissions) {
  const PrivateTempDir dir;
  const fs::path f = dir.path() / "out.txt";
  write_file_atomically(f, "first");
  EXPECT_EQ(slurp(f), "first");
  ASSERT_EQ(::chmod(f.c_str(), 0640), 0);
  write_file_atomically(f, "second, longer");
  EXPECT_EQ(slurp(f), "second, longer");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(entries(dir.path()), 1u);  // no temporary left
}

TEST(AtomicWrite, ALinkToARegularFileStaysALink) {
  const PrivateTempDir dir;
  write_file_atomically(dir.path() / "real.txt", "old");
  fs::create_symlink(dir.path() / "real.txt", dir.path() / "link.txt");
  write_file_atomically(dir.path() / "link.txt", "new");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.txt"));
  EXPECT_EQ(slurp(dir.path() / "real.txt"), "new");
  fs::create_symlink(dir.path() / "nothing", dir.path() / "dangling");
  EXPECT_NE(error_of([&] {
              write_file_atomically(dir.path() / "dangling", "x");
            }).find("is a symbolic link to nothing"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "nothing"));
}

TEST(AtomicWrite, ADirectoryIsRefusedAndKept) {
  const PrivateTempDir dir;
  fs::create_directory(dir.path() / "d");
  const std::string e = error_of([&] { write_file_atomically(dir.path() / "d", "x"); });
  EXPECT_NE(e.find("is a directory: only a regular file is replaced"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_directory(dir.path() / "d"));
}

// A FIFO gets the bytes where it is (what `-o /dev/stdout` into a pipe
// does), and is still a FIFO afterwards.
TEST(AtomicWrite, AFifoIsWrittenInPlace) {
  const PrivateTempDir dir;
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return slurp(fifo); });
  write_file_atomically(fifo, "through the pipe");
  EXPECT_EQ(reader.get(), "through the pipe");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(entries(dir.path()), 1u);
}

// A character device (a private copy of /dev/null and /dev/full, made with
// mknod: as root only) stays a device; a full one gives the errno's text.
TEST(AtomicWrite, ADeviceNodeIsNeverReplaced) {
  if (::geteuid() != 0) GTEST_SKIP() << "mknod needs root";
  const PrivateTempDir dir;
  const fs::path null_dev = dir.path() / "null", full_dev = dir.path() / "full";
  ASSERT_EQ(::mknod(null_dev.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  ASSERT_EQ(::mknod(full_dev.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
  const int probe = ::open(null_dev.c_str(), O_WRONLY);
  if (probe < 0) GTEST_SKIP() << "device nodes cannot be opened here (a nodev mount)";
  ::close(probe);
  write_file_atomically(null_dev, "discarded");
  EXPECT_TRUE(fs::is_character_file(null_dev));
  const std::string e = error_of([&] { write_file_atomically(full_dev, "no room"); });
  EXPECT_NE(e.find("No space left on device"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_character_file(full_dev));
  EXPECT_EQ(entries(dir.path()), 2u);
}

TEST(AtomicWrite, AnUnwritableDirectoryNamesTheErrorAndLeavesNothing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory";
  const PrivateTempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0500), 0);
  const std::string e = error_of([&] { write_file_atomically(dir.path() / "f", "x"); });
  ::chmod(dir.path().c_str(), 0700);
  EXPECT_NE(e.find("Permission denied"), std::string::npos) << e;
  EXPECT_EQ(entries(dir.path()), 0u);
}

TEST(RegularFile, ReadsAWholeFileAndRangesOfIt) {
  const PrivateTempDir dir;
  write_file_atomically(dir.path() / "f", "0123456789");
  EXPECT_EQ(read_regular_file(dir.path() / "f"), "0123456789");
  const ampx::fileio::RegularFile f(dir.path() / "f");
  EXPECT_EQ(f.size(), 10u);
  char buf[4] = {};
  f.read_at(3, buf, 4);
  EXPECT_EQ(std::string(buf, 4), "3456");
  EXPECT_NE(error_of([&] { f.read_at(8, buf, 4); }).find("ends after 10 bytes"), std::string::npos);
  EXPECT_NE(error_of([&] {
              read_regular_file(dir.path() / "f", 9);
            }).find("is 10 bytes, more than the 9 bytes ampx reads"),
            std::string::npos);
}

// Refused at once, each named for what it is: a FIFO (which would block
// forever), a device that never ends, a directory, a missing file.
TEST(RegularFile, WhatIsNoRegularFileIsRefusedAtOnce) {
  const PrivateTempDir dir;
  const fs::path fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto fifo_error =
      std::async(std::launch::async, [&] { return error_of([&] { read_regular_file(fifo); }); });
  ASSERT_EQ(fifo_error.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "reading a FIFO blocked";
  EXPECT_NE(fifo_error.get().find("is a FIFO, not a regular file"), std::string::npos);
  EXPECT_NE(error_of([&] {
              read_regular_file("/dev/zero");
            }).find("/dev/zero: is a character device, not a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_regular_file(dir.path()); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_regular_file(dir.path() / "none"); }).find("none: no such file"),
            std::string::npos);
}

TEST(PrivateTempDir, IsOnlyForThisUserAndGoesAway) {
  fs::path where;
  {
    const PrivateTempDir dir;
    where = dir.path();
    struct stat st {};
    ASSERT_EQ(::stat(where.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    write_file_atomically(where / "handoff.json", "{}");
  }
  EXPECT_FALSE(fs::exists(where));
}

TEST(FileError, ControlCharactersInAPathAreEscaped) {
  const std::string e = error_of([] { read_regular_file("/nonexistent/a\nb\x1b[31mc"); });
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_EQ(e.find('\x1b'), std::string::npos) << e;
  EXPECT_NE(e.find("a\\x0ab\\x1b[31mc: no such file"), std::string::npos) << e;
}

// Issue 36: a message quoted half a UTF-8 character ('\316' for the first
// byte of 'Σ'); cuts keep whole characters and escaping names every byte
// that is not part of one.
TEST(FileError, MessagesHoldOnlyWholeUtf8Characters) {
  EXPECT_EQ(ampx::fileio::utf8_char_size("\xce\xa3", 0), 2u);      // Σ
  EXPECT_EQ(ampx::fileio::utf8_char_size("\xce", 0), 0u);          // its first half
  EXPECT_EQ(ampx::fileio::utf8_char_size("\xa3", 0), 0u);          // its second half
  EXPECT_EQ(ampx::fileio::utf8_char_size("\xed\xa0\x80", 0), 0u);  // a surrogate
  EXPECT_EQ(ampx::fileio::utf8_char_size("\xf0\x9f\x98\x80", 0), 4u);
  EXPECT_EQ(ampx::fileio::utf8_prefix("ab\xce\xa3", 3), "ab");
  EXPECT_EQ(ampx::fileio::utf8_prefix("ab\xce\xa3", 4), "ab\xce\xa3");
  EXPECT_EQ(ampx::fileio::utf8_prefix("ab", 20), "ab");
  EXPECT_EQ(ampx::fileio::escape_control("a\xce\xa3"
                                         "b"),
            "a\xce\xa3"
            "b");
  EXPECT_EQ(ampx::fileio::escape_control("a\xce"), "a\\xce");
  EXPECT_EQ(ampx::fileio::escape_control("\xa3\xce\xa3"), "\\xa3\xce\xa3");
}

}  // namespace
