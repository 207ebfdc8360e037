// `ampx probe` and `ampx db` end to end. Probes are restricted to one or two
// cheap ops (--ops) so the suite stays fast, under the sanitizers too.
#include "test_util.hpp"

#include <ampx/capability/profile_json.hpp>
#include <ampx/capability/store.hpp>

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

namespace ampx::capability {
namespace {

using nlohmann::json;
using test::ampx;
using test::ScratchDir;
using ::testing::HasSubstr;

const std::string kTestDir = std::string("--plugin-dir ") + AMPX_TEST_PLUGIN_DIR;

void expect_one_line_error(const test::CliResult& r, const std::string& text) {
  EXPECT_NE(r.code, 0);
  EXPECT_THAT(r.err, HasSubstr(text));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
}

TEST(ProbeCli, QuickProbeExportImportList) {
  ScratchDir dir;
  const std::string db_a = (dir / "a.db").string(), db_b = (dir / "b.db").string();
  const std::string json_file = (dir / "cpu.json").string();
  auto r = ampx(dir.path(), "probe --quick --device cpu_ref:0 --ops Relu,Add --db " + db_a);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("cpu_ref:0"));
  EXPECT_THAT(r.out, HasSubstr("stored"));

  {
    auto store = Store::open(db_a);
    const auto all = store.all();
    ASSERT_EQ(all.size(), 1u);
    const auto& p = all[0];
    EXPECT_EQ(p.device_id, "cpu_ref:0");
    EXPECT_TRUE(p.quick);
    ASSERT_EQ(p.ops.size(), 6u);  // 2 ops x 1 quick shape x 3 dtypes
    for (const auto& t : p.ops) {
      EXPECT_GT(t.time_us, 0) << t.op << " " << t.dtype;
      EXPECT_GT(t.bytes, 0);
    }
    EXPECT_EQ(p.casts.size(), 6u);
    for (const auto& c : p.casts) EXPECT_GT(c.ns_per_element, 0);
    ASSERT_EQ(p.copies.size(), 2u);
    EXPECT_GT(p.copies[0].ns_per_byte, 0);
  }

  r = ampx(dir.path(), "db export " + json_file + " --db " + db_a + " --device cpu_ref:0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(test::slurp(json_file))["schema"], "ampx.profile/1");
  r = ampx(dir.path(), "db import " + json_file + " --db " + db_b);
  ASSERT_EQ(r.code, 0) << r.err;
  r = ampx(dir.path(), "db list --format json --db " + db_b);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "ampx.db-list/1");
  ASSERT_EQ(j["devices"].size(), 1u);
  EXPECT_EQ(j["devices"][0]["device_id"], "cpu_ref:0");
  EXPECT_EQ(j["devices"][0]["ops"], 6);
  EXPECT_EQ(j["devices"][0]["measured"], 6);
}

TEST(ProbeCli, CrashingPluginIsReportedAndOthersStillProbed) {
  ScratchDir dir;
  const std::string db = (dir / "caps.db").string();
  const auto r = ampx(dir.path(),
                      kTestDir +
                          // The probe's own isolation under test: the pre-flight's
                          // smoke launch would skip the plugin first.
                          " --trust-plugins probe --quick --ops Relu --device test_native:0 "
                          "--device cpu_ref:0 --db " +
                          db,
                      "AMPX_TEST_NATIVE_CRASH_IN_LAUNCH=1");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("probe of test_native:0 crashed: SIGSEGV"));
  EXPECT_THAT(r.out, HasSubstr("crashed: SIGSEGV"));
  const auto list = Store::open(db).list();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].device_id, "cpu_ref:0");
}

TEST(ProbeCli, HangingPluginIsKilledAtTheTimeout) {
  ScratchDir dir;
  const std::string db = (dir / "caps.db").string();
  const auto r = ampx(dir.path(),
                      kTestDir +
                          " --trust-plugins probe --quick --ops Relu --timeout 3 --device "
                          "test_native:0 --format json --db " +
                          db,
                      "AMPX_TEST_NATIVE_HANG_IN_LAUNCH=1");
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("probe of test_native:0 timed out"));
  const auto j = json::parse(r.out);
  EXPECT_EQ(j["schema"], "ampx.probe/1");
  EXPECT_FALSE(j["devices"][0]["stored"].get<bool>());
  EXPECT_TRUE(Store::open(db).list().empty());
}

TEST(ProbeCli, ImportOfAnotherSchemaChangesNothing) {
  ScratchDir dir;
  const std::string db = (dir / "caps.db").string();
  { Store::open(db).put(test::sample_profile("fp-a")); }
  const auto bad = dir / "future.json";
  std::ofstream(bad) << R"({"schema": "ampx.profile/2", "devices": [{"fingerprint": "x"}]})";
  const auto r = ampx(dir.path(), "db import " + bad.string() + " --db " + db);
  expect_one_line_error(r, bad.string() + ": schema 'ampx.profile/2' is not supported");
  const auto list = Store::open(db).list();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].fingerprint, "fp-a");
}

// Names in the database are someone else's text: `db list` escapes their
// control characters, so a device name cannot forge lines or send terminal
// codes.
TEST(ProbeCli, ListEscapesControlCharactersInNames) {
  ScratchDir dir;
  auto p = test::sample_profile("fp-a");
  p.device_name = "evil\nfingerprint: forged\x1b[2J";
  save_profile_file(dir / "p.json", {p});
  const std::string db = (dir / "caps.db").string();
  ASSERT_EQ(ampx(dir.path(), "db import " + (dir / "p.json").string() + " --db " + db).code, 0);
  const auto r = ampx(dir.path(), "db list --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("evil\\x0afingerprint: forged\\x1b[2J"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
}

TEST(ProbeCli, UnwritableDatabasePathIsOneLine) {
  ScratchDir dir;
  std::ofstream(dir / "a-file") << "x";
  const std::string db = (dir / "a-file" / "caps.db").string();
  expect_one_line_error(ampx(dir.path(), "db list --db " + db), db);
  expect_one_line_error(ampx(dir.path(), "probe --quick --ops Relu --device cpu_ref:0 --db " + db),
                        db);
}

TEST(ProbeCli, UnknownDeviceIsAUsageError) {
  ScratchDir dir;
  const std::string db = (dir / "caps.db").string();
  auto r = ampx(dir.path(), "probe --device nope:0 --db " + db);
  expect_one_line_error(r, "unknown device 'nope:0'");
  EXPECT_EQ(r.code, 2);
  r = ampx(dir.path(), "db export " + (dir / "x.json").string() + " --device nope:0 --db " + db);
  expect_one_line_error(r, "--device 'nope:0': no profile");
  EXPECT_FALSE(std::filesystem::exists(dir / "x.json"));
}

// A misspelt op would measure nothing and store an empty profile over the
// device's: a usage error, before the database is touched.
TEST(ProbeCli, UnknownOpIsAUsageError) {
  ScratchDir dir;
  const std::string db = (dir / "caps.db").string();
  const auto r = ampx(dir.path(), "probe --quick --device cpu_ref:0 --ops Relu,Bogus --db " + db);
  expect_one_line_error(r, "--ops 'Bogus': not an op of the op set");
  EXPECT_EQ(r.code, 2);
  EXPECT_FALSE(std::filesystem::exists(db));
}

}  // namespace
}  // namespace ampx::capability
