// Helpers shared by the capability database tests: a scratch directory per
// test, a sample profile, and running the ampx binary.
#pragma once

#include <ampx/capability/profile.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ampx::capability::test {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A fresh directory named after the running test, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("ampx_capdb_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

inline DeviceProfile sample_profile(const std::string& fingerprint, int n_ops = 4) {
  DeviceProfile p;
  p.fingerprint = fingerprint;
  p.device_id = "test_native:0";
  p.plugin = "test_native";
  p.plugin_version = "1.0.0";
  p.device_name = "test CPU";
  p.driver_version = "1.0.0";
  p.probed_at = "2026-11-29T10:00:00Z";
  p.quick = true;
  const char* dtypes[] = {"f32", "f16", "bf16"};
  for (int i = 0; i < n_ops; ++i) {
    OpTiming t;
    t.op = i % 2 ? "Relu" : "Conv2d";
    t.dtype = dtypes[i % 3];
    t.shape_class = "class " + std::to_string(i);
    t.flops = 1000.0 * (i + 1);
    t.bytes = 64.0 * (i + 1);
    t.support = i % 3 == 0 ? AMPX_SUPPORT_NATIVE
                           : (i % 3 == 1 ? AMPX_SUPPORT_EMULATED : AMPX_SUPPORT_UNSUPPORTED);
    t.note = i % 3 == 1 ? "16-bit storage, f32 compute" : "";
    t.time_us = t.support == AMPX_SUPPORT_UNSUPPORTED ? -1 : 12.5 * (i + 1);
    p.ops.push_back(t);
  }
  p.casts = {{"f32", "f16", 0.25}, {"f16", "f32", 0.5}};
  p.copies = {{"h2d", 3.0, 0.1}, {"d2h", 4.0, 0.2}};
  return p;
}

inline void expect_same(const DeviceProfile& a, const DeviceProfile& b) {
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.device_id, b.device_id);
  EXPECT_EQ(a.plugin, b.plugin);
  EXPECT_EQ(a.plugin_version, b.plugin_version);
  EXPECT_EQ(a.device_name, b.device_name);
  EXPECT_EQ(a.driver_version, b.driver_version);
  EXPECT_EQ(a.probed_at, b.probed_at);
  EXPECT_EQ(a.quick, b.quick);
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    EXPECT_EQ(a.ops[i].op, b.ops[i].op);
    EXPECT_EQ(a.ops[i].dtype, b.ops[i].dtype);
    EXPECT_EQ(a.ops[i].shape_class, b.ops[i].shape_class);
    EXPECT_DOUBLE_EQ(a.ops[i].flops, b.ops[i].flops);
    EXPECT_DOUBLE_EQ(a.ops[i].bytes, b.ops[i].bytes);
    EXPECT_EQ(a.ops[i].support, b.ops[i].support);
    EXPECT_EQ(a.ops[i].note, b.ops[i].note);
    EXPECT_DOUBLE_EQ(a.ops[i].time_us, b.ops[i].time_us);
  }
  ASSERT_EQ(a.casts.size(), b.casts.size());
  for (size_t i = 0; i < a.casts.size(); ++i) {
    EXPECT_EQ(a.casts[i].from, b.casts[i].from);
    EXPECT_EQ(a.casts[i].to, b.casts[i].to);
    EXPECT_DOUBLE_EQ(a.casts[i].ns_per_element, b.casts[i].ns_per_element);
  }
  ASSERT_EQ(a.copies.size(), b.copies.size());
  for (size_t i = 0; i < a.copies.size(); ++i) {
    EXPECT_EQ(a.copies[i].direction, b.copies[i].direction);
    EXPECT_DOUBLE_EQ(a.copies[i].latency_us, b.copies[i].latency_us);
    EXPECT_DOUBLE_EQ(a.copies[i].ns_per_byte, b.copies[i].ns_per_byte);
  }
}

struct CliResult {
  int code = -1;
  std::string out, err;
};

// Runs `env <env> ampx <args>` through the shell, stdout and stderr apart.
inline CliResult ampx(const std::filesystem::path& scratch, const std::string& args,
                      const std::string& env = "") {
  const std::string cmd = "env " + env + " AMPX_PLUGIN_PATH= '" AMPX_CLI_PATH "' " + args + " > '" +
                          (scratch / "cli.out").string() + "' 2> '" +
                          (scratch / "cli.err").string() + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(scratch / "cli.out");
  r.err = slurp(scratch / "cli.err");
  return r;
}

}  // namespace ampx::capability::test
