// `ampx run`'s check against the O0 f32 run on cpu_ref:0: a plan over its
// tolerance says so on one line and exits 1 (its report and --save-outputs
// files written all the same), --no-check skips the reference, and the
// rank-1 HardSigmoid that oneDNN 2.6 left unwritten (tests/cli/data).
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

namespace ampx_cli_test {
namespace {

const std::string kData = std::string(AMPX_SOURCE_DIR) + "/tests/cli/data/";
// `run builtin:mlp` on the liar (tests/test_plugins/misbehaving): every node
// `native`, its Relu off by one; unfused, so that the Relu nodes stay its
// own. The liar alone is copied to a directory of its own: the hostile
// plugins beside it would warn (and one hangs the pre-flight for 20 s).
struct LiarDir {
  std::filesystem::path dir;
  LiarDir()
      : dir(std::filesystem::path(testing::TempDir()) /
            ("ampx_run_check_plugin_dir_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(
        std::filesystem::path(AMPX_HOSTILE_PLUGIN_DIR) / "libampx_backend_liar.so",
        dir / "libampx_backend_liar.so", std::filesystem::copy_options::overwrite_existing);
  }
  ~LiarDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

std::string liar_run() {
  static const LiarDir liar;
  // --trust-plugins: the pre-flight's smoke launch would skip the liar
  // (PreflightTest.HostileZoo); trusted, its wrong results reach the run's
  // own check, the last line of defence this test is about.
  return "--trust-plugins --plugin-dir " + liar.dir.string() +
         " run builtin:mlp --device liar:0 --no-fuse --iters 1 --warmup 0";
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto d = std::filesystem::path(testing::TempDir()) /
                 ("ampx_run_check_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  return d;
}

// The document validates against docs/schemas/ampx.run-1.schema.json
// (Python's jsonschema, as the report's).
void expect_schema_valid(const std::string& document, const std::string& name) {
  const auto file = std::filesystem::path(testing::TempDir()) /
                    ("ampx_run_check_" + name + "_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << document;
  const std::string cmd = "/usr/bin/python3 -m jsonschema -i '" + file.string() + "' '" +
                          AMPX_SOURCE_DIR + "/docs/schemas/ampx.run-1.schema.json' 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "schema validation failed: " << cmd;
  std::filesystem::remove(file);
}

// The float32 values of a .npy file (little-endian '<f4'): its last bytes.
std::vector<float> npy_floats(const std::filesystem::path& file, size_t n) {
  const std::string bytes = slurp(file);
  EXPECT_GE(bytes.size(), n * 4) << file;
  std::vector<float> v(n);
  if (bytes.size() >= n * 4) std::memcpy(v.data(), bytes.data() + bytes.size() - n * 4, n * 4);
  return v;
}

TEST(RunCheck, OverToleranceIsOneLineAndExitOne) {
  const auto dir = temp_dir("liar");
  const auto r = ampx(liar_run() + " --save-outputs " + dir.string());
  expect_one_line_error(r, 1, "the check against cpu_ref:0 O0 f32 failed: output 'fc4'");
  EXPECT_THAT(r.err, HasSubstr("over the tolerance 1.0e-04 of a plan computing in f32"));
  // The report is whole, and the outputs are saved: the evidence.
  EXPECT_THAT(r.out, HasSubstr("OVER TOLERANCE"));
  EXPECT_THAT(r.out, HasSubstr("memory: planned peak"));
  EXPECT_TRUE(std::filesystem::exists(dir / "fc4.npy"));
  std::filesystem::remove_all(dir);

  const auto j = ampx(liar_run() + " --format json");
  EXPECT_EQ(j.code, 1);
  EXPECT_EQ(std::count(j.err.begin(), j.err.end(), '\n'), 1) << j.err;
  expect_schema_valid(j.out, "failed");
  const auto doc = json::parse(j.out);
  EXPECT_EQ(doc["check"]["status"], "failed");
  EXPECT_EQ(doc["check"]["tolerance_dtype"], "f32");
  EXPECT_DOUBLE_EQ(doc["check"]["tolerance"].get<double>(), 1e-4);
  EXPECT_EQ(doc["reference"], "cpu_ref:0 O0 f32");
  EXPECT_EQ(doc["outputs"][0]["passed"], false);
  EXPECT_GT(doc["outputs"][0]["max_rel_error"].get<double>(), 1e-4);
}

TEST(RunCheck, NoCheckSkipsTheReference) {
  const auto r = ampx(liar_run() + " --no-check");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("outputs (not checked: --no-check)"));
  EXPECT_THAT(r.out, Not(HasSubstr("max relative error")));
  const auto j = ampx(liar_run() + " --no-check --format json");
  ASSERT_EQ(j.code, 0) << j.err;
  expect_schema_valid(j.out, "skipped");
  const auto doc = json::parse(j.out);
  EXPECT_EQ(doc["check"]["status"], "skipped");
  EXPECT_TRUE(doc["reference"].is_null());
  EXPECT_FALSE(doc["outputs"][0].contains("max_rel_error"));
  // Without cpu_ref only --no-check runs.
  EXPECT_EQ(ampx("--exclude-plugin cpu_ref " + liar_run() + " --no-check").code, 0);
  expect_one_line_error(ampx("--exclude-plugin cpu_ref " + liar_run()), 1,
                        "the reference device cpu_ref:0 is not available");
}

TEST(RunCheck, PassingRunsSayTheirTolerance) {
  const auto r = ampx("run builtin:mlp --amp O0 --iters 1 --warmup 0 --format json");
  ASSERT_EQ(r.code, 0) << r.err;
  expect_schema_valid(r.out, "passed");
  const auto doc = json::parse(r.out);
  EXPECT_EQ(doc["check"]["status"], "passed");
  EXPECT_EQ(doc["outputs"][0]["passed"], true);
  // A plan with f16 nodes is held to the f16 whole-model tolerance.
  const auto h = ampx(kTestDir +
                          " run builtin:mlp --amp O2 --device test_native:0 --iters 1 "
                          "--warmup 0 --format json",
                      kNative);
  ASSERT_EQ(h.code, 0) << h.err;
  const auto hd = json::parse(h.out);
  EXPECT_EQ(hd["check"]["tolerance_dtype"], "f16");
  EXPECT_DOUBLE_EQ(hd["check"]["tolerance"].get<double>(), 1e-2);
  EXPECT_EQ(hd["check"]["status"], "passed");
}

// An integer output is compared element by element: exact from an f32
// plan; from an f16 one up to a tenth of its elements may differ (near ties
// an f16 ArgMax reads as equal: tests/cli/data/make_data.py).
TEST(RunCheck, IntegerOutputsCountTheElementsThatDiffer) {
  const std::string model = "run " + kData + "argmax.onnx --iters 1 --warmup 0 --input x=" + kData;
  const auto f32 = ampx(model + "argmax_ties3.npy --format json");
  ASSERT_EQ(f32.code, 0) << f32.err;
  auto doc = json::parse(f32.out);
  EXPECT_EQ(doc["outputs"][0]["mismatches"], 0);
  EXPECT_EQ(doc["outputs"][0]["allowed_mismatches"], 0);
  const std::string f16 = " --amp O2 --capability-blind --format json";
  const auto two = ampx(model + "argmax_ties2.npy" + f16);
  ASSERT_EQ(two.code, 0) << two.err;
  doc = json::parse(two.out);
  EXPECT_EQ(doc["check"]["tolerance_dtype"], "f16");
  EXPECT_EQ(doc["outputs"][0]["mismatches"], 2);
  EXPECT_EQ(doc["outputs"][0]["allowed_mismatches"], 2);
  const auto three = ampx(model + "argmax_ties3.npy" + f16);
  expect_one_line_error(three, 1, "output 'y' (3 of its elements differ, 2 may)");
  expect_schema_valid(three.out, "integer");
}

// ONNX's test_hardsigmoid_example on a rank-1 input: oneDNN 2.6's reference
// eltwise (the one with HardSigmoid's clip post-op) wrote nothing there.
TEST(RunCheck, HardSigmoidOnARank1InputOnOnednn) {
  if (!std::filesystem::exists(std::filesystem::path(AMPX_PLUGIN_BUILD_DIR) /
                               "libampx_backend_onednn.so"))
    GTEST_SKIP() << "the oneDNN plugin is not built";
  const auto dir = temp_dir("hardsigmoid");
  const auto r =
      ampx("run " + kData + "hardsigmoid_1d.onnx --amp O0 --device onednn:0 --input x=" + kData +
               "hardsigmoid_1d_x.npy --iters 2 --warmup 1 --save-outputs " + dir.string(),
           kOnednnLsanEnv);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("max relative error 0.000e+00"));
  const std::vector<float> y = npy_floats(dir / "y.npy", 3);
  EXPECT_NEAR(y[0], 0.1f, 1e-6f);
  EXPECT_NEAR(y[1], 0.6f, 1e-6f);
  EXPECT_NEAR(y[2], 1.0f, 1e-6f);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ampx_cli_test
