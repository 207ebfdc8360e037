// `ampx devices`' per-op native dtypes (the JSON's `native`, the text
// `--ops`): what the planner's capability question answers, checked on
// plugins whose answers are known by construction (cpu_ref's policy, the
// test_native plugin as configured) and as invariants on the others.
#include <ampx/opset/catalogue.hpp>

#include "cli_support.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using nlohmann::json;

namespace ampx_cli_test {
namespace {

// Only cpu_ref and the test plugins: answers that do not depend on the machine.
const std::string kOnlyRefAndTest = "AMPX_DISABLE_PLUGINS=onednn,vulkan,cuda";

const json& device(const json& listing, const std::string& id) {
  for (const auto& d : listing["devices"])
    if (d["id"] == id) return d;
  static const json none;
  ADD_FAILURE() << id << " not listed: " << listing.dump();
  return none;
}

// Every listed dtype is f32, f16 or bf16, each once, in that order; every op
// is an op of the set.
void expect_well_formed(const json& d) {
  ASSERT_TRUE(d.contains("native")) << d.dump();
  EXPECT_FALSE(d["native"].empty()) << d["id"];
  const std::vector<std::string> order{"f32", "f16", "bf16"};
  for (const auto& [op, dtypes] : d["native"].items()) {
    EXPECT_NE(ampx::opset::find_op(op), nullptr) << op;
    size_t next = 0;
    for (const auto& dt : dtypes) {
      const auto at = std::find(order.begin() + static_cast<long>(next), order.end(), dt);
      ASSERT_NE(at, order.end()) << d["id"] << " " << op << ": " << dtypes.dump();
      next = static_cast<size_t>(at - order.begin()) + 1;
    }
  }
}

TEST(CliDevicesNative, EveryDeviceListsItsNativeDtypesPerOp) {
  const auto r = ampx("devices --format json", kOnednnLsanEnv);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "ampx.devices/1");  // a field added, none changed
  json first_ops;
  for (const auto& d : j["devices"]) {
    expect_well_formed(d);
    // The same representative cases are asked of every device.
    json ops = json::array();
    for (const auto& [op, dtypes] : d["native"].items()) ops.push_back(op);
    if (first_ops.is_null()) first_ops = ops;
    EXPECT_EQ(ops, first_ops) << d["id"];
    // The CPU plugins run every op of the set in f32 natively.
    if (d["plugin"] == "cpu_ref" || d["plugin"] == "onednn")
      for (const auto& [op, dtypes] : d["native"].items())
        EXPECT_TRUE(std::find(dtypes.begin(), dtypes.end(), "f32") != dtypes.end())
            << d["id"] << " " << op;
  }
  // The probe's quick catalogue reaches the compute ops, not only data movement.
  EXPECT_TRUE(first_ops.is_array() &&
              std::find(first_ops.begin(), first_ops.end(), "Conv2d") != first_ops.end());
}

// cpu_ref's policy (backends/cpu_ref/plugin.cpp): 16-bit is native only for
// data movement (exact in every dtype), emulated for the rest.
TEST(CliDevicesNative, CpuRefIsNativeIn16BitForDataMovementOnly) {
  const auto r = ampx("devices --format json", kOnlyRefAndTest);
  ASSERT_EQ(r.code, 0) << r.err;
  const json listing = json::parse(r.out);
  const json& d = device(listing, "cpu_ref:0");
  expect_well_formed(d);
  for (const auto& [op, dtypes] : d["native"].items()) {
    const json want = ampx::opset::is_data_movement(op) ? json{"f32", "f16", "bf16"} : json{"f32"};
    EXPECT_EQ(dtypes, want) << op;
  }
}

// test_native answers as its environment says: native f16 for the ops listed,
// emulated bf16, nothing at all for a missing op.
TEST(CliDevicesNative, FollowsThePluginsAnswers) {
  const auto r = ampx(kTestDir + " devices --format json",
                      kOnlyRefAndTest +
                          " AMPX_TEST_NATIVE_OPS=Conv2d,Relu AMPX_TEST_NATIVE_DTYPES=f16"
                          " AMPX_TEST_MISSING_OPS=Softmax");
  ASSERT_EQ(r.code, 0) << r.err;
  const json listing = json::parse(r.out);
  const json& d = device(listing, "test_native:0");
  expect_well_formed(d);
  const auto& native = d["native"];
  EXPECT_EQ(native["Conv2d"], (json{"f32", "f16"}));
  EXPECT_EQ(native["Relu"], (json{"f32", "f16"}));
  EXPECT_EQ(native["Softmax"], json::array());
  EXPECT_EQ(native["MatMul"], json{"f32"});
}

// `--ops`: the same answers as a table, op x device.
TEST(CliDevicesNative, OpsTableIsStable) {
  const auto r =
      ampx(kTestDir + " devices --ops",
           kOnlyRefAndTest + " AMPX_TEST_NATIVE_OPS=Conv2d AMPX_TEST_NATIVE_DTYPES=bf16");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::filesystem::path file =
      std::filesystem::path(AMPX_SOURCE_DIR) / "tests" / "cli" / "golden" / "devices_ops.txt";
  if (const char* u = std::getenv("AMPX_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(file) << r.out;
    return;
  }
  EXPECT_EQ(r.out, slurp(file)) << "golden " << file
                                << " differs (AMPX_UPDATE_GOLDEN=1 rewrites it after a review)";
}

// A plugin whose capability query fails (loaded in-process with
// --trust-plugins; the pre-flight would skip it) gets `native_error`, its one
// line, and the other devices are listed as before.
TEST(CliDevicesNative, AFailingQueryIsNamedAndTheOthersListed) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ampx_cli_native_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const char* file = "libampx_backend_hostile_throw_query.so";
  std::filesystem::copy_file(std::filesystem::path(AMPX_HOSTILE_PLUGIN_DIR) / file, dir / file,
                             std::filesystem::copy_options::overwrite_existing);
  const std::string env =
      kOnlyRefAndTest + " AMPX_PREFLIGHT_CACHE='" + (dir / "cache.json").string() + "'";
  const std::string args = "--plugin-dir " + dir.string() + " --trust-plugins devices ";
  const auto r = ampx(args + "--format json", env);
  const auto table = ampx(args + "--ops", env);
  std::filesystem::remove_all(dir);
  ASSERT_EQ(r.code, 0) << r.err;
  const json listing = json::parse(r.out);
  const json& hostile = device(listing, "hostile_throw_query:0");
  EXPECT_FALSE(hostile.contains("native"));
  EXPECT_THAT(hostile.value("native_error", ""),
              ::testing::HasSubstr("query_capability(Conv2d 'probe', device 0): threw"));
  expect_well_formed(device(listing, "cpu_ref:0"));
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::HasSubstr("hostile_throw_query:0: hostile_throw_query: "
                                              "query_capability"));
}

}  // namespace
}  // namespace ampx_cli_test
