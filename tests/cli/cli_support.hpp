// Runs the ampx binary as a user does, for the CLI tests.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ampx_cli_test {

struct Result {
  int code = -1;
  std::string out, err;
};

// A fresh, empty directory for one test's files (this process's own).
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path d = std::filesystem::temp_directory_path() /
                                  ("ampx_cli_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// A version 1.0 .npy file.
inline void write_npy(const std::filesystem::path& p, const std::string& descr,
                      const std::vector<int64_t>& shape, const void* data, size_t bytes) {
  std::string dims;
  for (int64_t d : shape) dims += std::to_string(d) + ", ";
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::ofstream f(p, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t n = static_cast<uint16_t>(header.size());
  f.write(reinterpret_cast<const char*>(&n), 2);
  f << header;
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `env ampx args` through the shell with stdout and stderr captured apart.
inline Result ampx(const std::string& args, const std::string& env = "") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ampx_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  // A database of its own unless `env` names one (later assignments win):
  // stored tuned plans and calibration elsewhere must not change the plans.
  const std::string db = "AMPX_CAPABILITY_DB='" + (dir / "capabilities.db").string() + "' ";
  const std::string cmd = "env " + db + env + " AMPX_PLUGIN_PATH= '" AMPX_CLI_PATH "' " + args +
                          " > '" + (dir / "out").string() + "' 2> '" + (dir / "err").string() +
                          "' < /dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

inline const std::string kNative = "AMPX_TEST_NATIVE_OPS='*'";
// For a command that runs onednn:0: LeakSanitizer's tracer faults on the
// TLS of the OpenMP workers oneDNN leaves at exit (tests/onnx/CMakeLists.txt).
// Harmless outside the sanitizer builds.
inline const std::string kOnednnLsanEnv =
    "LSAN_OPTIONS='use_tls=0:suppressions=" AMPX_SOURCE_DIR "/tests/lsan_suppressions.txt'";
inline const std::string kTestDir = std::string("--plugin-dir ") + AMPX_TEST_PLUGIN_DIR;

inline void expect_one_line_error(const Result& r, int code, const std::string& text) {
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_THAT(r.err, ::testing::HasSubstr(text));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
}

}  // namespace ampx_cli_test
