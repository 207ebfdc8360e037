// Device selection and placement from the command line: device lists,
// fallback warnings, --no-fallback, --place, --exclude-plugin,
// AMPX_DEVICES, auto, and golden placement explanations for the built-in
// models on a plugin that lacks ops (test_native, AMPX_TEST_MISSING_OPS).
#include "cli_support.hpp"

#include <nlohmann/json.hpp>

#include <fstream>

using namespace ampx_cli_test;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

const std::string kMissing = kNative + " AMPX_TEST_MISSING_OPS=Relu,Softmax,LayerNorm,BatchNorm";

// Compares with tests/cli/golden/NAME; AMPX_UPDATE_GOLDEN=1 rewrites it.
void expect_golden(const std::string& name, const std::string& text) {
  const std::filesystem::path file =
      std::filesystem::path(AMPX_SOURCE_DIR) / "tests" / "cli" / "golden" / name;
  if (const char* u = std::getenv("AMPX_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(file) << text;
    return;
  }
  EXPECT_EQ(text, slurp(file)) << "golden " << file
                               << " differs (AMPX_UPDATE_GOLDEN=1 rewrites it after a review)";
}

}  // namespace

class PlacementGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PlacementGolden, ExplanationIsStable) {
  const auto r =
      ampx(kTestDir + " plan builtin:" + GetParam() + " --device test_native:0 --amp O2 --no-cost",
           kMissing);
  ASSERT_EQ(r.code, 0) << r.err;
  expect_golden("placement_" + GetParam() + ".txt", r.out);
  EXPECT_THAT(r.err, HasSubstr("warning: "));
  EXPECT_THAT(r.err, HasSubstr("fall back from their first-choice device"));
}

INSTANTIATE_TEST_SUITE_P(Builtin, PlacementGolden, ::testing::Values("cnn", "mlp", "encoder"));

TEST(PlacementCli, JsonHasDevicesReasonsAndCopies) {
  const auto r =
      ampx(kTestDir + " plan builtin:mlp --device test_native:0 --format json --no-cost", kMissing);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"], "test_native:0,cpu_ref:0");
  ASSERT_EQ(j["placement"]["devices"].size(), 2u);
  EXPECT_EQ(j["placement"]["devices"][1]["fallback_only"], true);
  int on_ref = 0;
  for (const auto& n : j["nodes"]) {
    if (n["op"] == "Relu") {
      EXPECT_EQ(n["device"], "cpu_ref:0");
      EXPECT_EQ(n["placement"], "fallback");
      EXPECT_EQ(n["placement_note"], "unsupported on test_native:0");
      ++on_ref;
    } else {
      EXPECT_EQ(n["placement"], "first-choice") << n["name"];
    }
  }
  EXPECT_EQ(j["summary"]["fallbacks"], on_ref);
  EXPECT_EQ(j["summary"]["copies"], j["placement"]["copies"].size());
  EXPECT_GT(j["summary"]["copy_bytes"].get<uint64_t>(), 0u);
}

TEST(PlacementCli, RunMatchesTheSingleDeviceRunAndCountsCopies) {
  const auto placed = ampx(kTestDir +
                               " run builtin:cnn --device test_native:0 --iters 1 "
                               "--warmup 0 --format json --no-cost",
                           kMissing);
  ASSERT_EQ(placed.code, 0) << placed.err;
  const auto j = nlohmann::json::parse(placed.out);
  EXPECT_EQ(j["summary"]["fallbacks"], 5);
  EXPECT_EQ(j["copies_per_run"]["copies"], j["summary"]["copies"]);
  EXPECT_EQ(j["copies_per_run"]["bytes"], j["summary"]["copy_bytes"]);
  EXPECT_EQ(j["kernels_per_device"].size(), 2u);
  for (const auto& o : j["outputs"]) EXPECT_EQ(o["max_rel_error"], 0.0) << "O0: bit for bit";
}

TEST(PlacementCli, NoFallbackListsEveryNodeTheDevicesCannotRun) {
  const auto r =
      ampx(kTestDir + " plan builtin:cnn --device test_native:0 --no-fallback", kMissing);
  expect_one_line_error(r, 1,
                        "5 nodes cannot run on test_native:0 (no fallback): 'bn1' (BatchNorm");
  EXPECT_THAT(r.err, HasSubstr("'relu3' (Relu f32)"));
  // Without missing ops it plans on the one device.
  const auto ok =
      ampx(kTestDir + " plan builtin:cnn --device test_native:0 --no-fallback", kNative);
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(PlacementCli, UnknownDevicesAndBadListsAreOneLineUsageErrors) {
  expect_one_line_error(ampx("plan builtin:mlp --device nosuch:0,cpu_ref:0"), 2,
                        "--device 'nosuch:0,cpu_ref:0': unknown device 'nosuch:0' (available:");
  expect_one_line_error(ampx("plan builtin:mlp --device cpu_ref:0,,cpu_ref:0"), 2, "empty entry");
  expect_one_line_error(ampx("plan builtin:mlp --device cpu_ref:0,cpu_ref:0"), 2, "listed twice");
  expect_one_line_error(ampx("plan builtin:mlp", "AMPX_DEVICES=gpu:3"), 2,
                        "AMPX_DEVICES 'gpu:3': unknown device 'gpu:3'");
  expect_one_line_error(ampx("run builtin:mlp --place fc1", ""), 2, "expected PATTERN=DEVICE");
  expect_one_line_error(ampx("plan builtin:mlp --place fc1=vulkan:9"), 2,
                        "'vulkan:9' is not one of the devices");
  expect_one_line_error(ampx("plan builtin:mlp --place nothing*=cpu_ref:0"), 2,
                        "--place 'nothing*' matches no node");
}

TEST(PlacementCli, PlaceAndEnvironmentDefaults) {
  const auto r = ampx(kTestDir + " plan builtin:mlp --place 'fc2*=cpu_ref:0' --format json",
                      kNative + " AMPX_DEVICES=test_native:0");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"], "test_native:0,cpu_ref:0");
  EXPECT_EQ(j["summary"]["pinned"], 1);
  for (const auto& n : j["nodes"])
    if (n["name"] == "fc2") {
      EXPECT_EQ(n["device"], "cpu_ref:0");
      EXPECT_EQ(n["placement"], "override");
    }
}

TEST(PlacementCli, ExcludedPluginsAreNotLoaded) {
  const auto r = ampx(kTestDir + " --exclude-plugin test_native devices", kNative);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("test_native:0")));
  const auto env = ampx(kTestDir + " devices", kNative + " AMPX_DISABLE_PLUGINS=test_native");
  EXPECT_THAT(env.out, Not(HasSubstr("test_native:0")));
  expect_one_line_error(
      ampx(kTestDir + " --exclude-plugin test_native plan builtin:mlp --device test_native:0"), 2,
      "unknown device 'test_native:0'");
}

TEST(PlacementCli, AutoPrintsWhyItChoseTheOrder) {
  const auto r = ampx(kTestDir + " plan builtin:mlp --device auto", kNative);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--device auto: 1. "));
  EXPECT_THAT(r.out, HasSubstr("test_native:0"));
  EXPECT_THAT(r.out, HasSubstr("cpu_ref:0"));
}

TEST(PlacementCli, ReportShowsPlacementPerDeviceAndMatchesTheSchema) {
  const auto r = ampx(kTestDir +
                          " report builtin:cnn --device cpu_ref:0 --no-run "
                          "--placement test_native:0 --format json --no-cost",
                      kMissing);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ampx_placement_report_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "report.json") << r.out;
  const std::string cmd = "/usr/bin/python3 -m jsonschema -i '" + (dir / "report.json").string() +
                          "' '" + AMPX_SOURCE_DIR + "/docs/schemas/ampx.report-1.schema.json' 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << "schema validation failed";
  const auto j = nlohmann::json::parse(r.out);
  const auto& p = j["models"][0]["placements"];
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0]["devices"], nlohmann::json({"test_native:0", "cpu_ref:0"}));
  const auto& o2 = p[0]["levels"][2];
  EXPECT_EQ(o2["level"], "O2");
  EXPECT_EQ(o2["fallbacks"], 5);
  EXPECT_EQ(o2["nodes_per_device"]["test_native:0"], 7);
  EXPECT_EQ(o2["nodes_per_device"]["cpu_ref:0"], 5);
  EXPECT_EQ(o2["copies"], 6);

  const auto md = ampx(kTestDir +
                           " report builtin:cnn --device cpu_ref:0 --no-run --placement "
                           "test_native:0 --format md --no-cost",
                       kMissing);
  EXPECT_THAT(md.out, HasSubstr("### Placement across test_native:0"));
  expect_one_line_error(ampx("report builtin:cnn --placement nosuch:0 --no-run"), 2,
                        "--placement 'nosuch:0': unknown device 'nosuch:0'");
}
