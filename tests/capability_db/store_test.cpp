// The SQLite store: round trip, versioned schema, recovery from corrupted or
// other-version files (moved aside, warning, rebuilt), concurrent writers,
// unwritable paths.
#include "test_util.hpp"

#include <ampx/capability/profile_json.hpp>
#include <ampx/capability/store.hpp>

#include <gmock/gmock.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <fstream>
#include <random>
#include <regex>

namespace ampx::capability {
namespace {

namespace fs = std::filesystem;
using test::sample_profile;

using test::ScratchDir;
using ::testing::HasSubstr;

// Captures spdlog output for one test.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream text_;
};

// Files in `dir` whose name starts with `prefix`.
std::vector<fs::path> files_starting(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  return out;
}

void raw_exec(const fs::path& db, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

TEST(Store, RoundTripListAllAndReplace) {
  ScratchDir dir;
  const auto path = dir / "sub" / "caps.db";  // directory created on demand
  {
    auto store = Store::open(path);
    store.put(sample_profile("fp-a", 6));
    store.put(sample_profile("fp-b", 2));
  }
  auto store = Store::open(path);
  EXPECT_EQ(store.quick_check(), "ok");
  test::expect_same(*store.get("fp-a"), sample_profile("fp-a", 6));
  EXPECT_FALSE(store.get("fp-none"));
  const auto list = store.list();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].fingerprint, "fp-a");
  EXPECT_EQ(list[0].ops, 6);
  EXPECT_EQ(list[0].native, 2);
  EXPECT_EQ(list[0].emulated, 2);
  EXPECT_EQ(list[0].unsupported, 2);
  EXPECT_EQ(list[0].measured, 4);
  EXPECT_EQ(store.all().size(), 2u);

  // put() replaces that fingerprint's rows, and only those.
  auto smaller = sample_profile("fp-a", 1);
  smaller.device_id = "renamed:0";
  store.put(smaller);
  test::expect_same(*store.get("fp-a"), smaller);
  EXPECT_EQ(store.get("fp-b")->ops.size(), 2u);
  EXPECT_TRUE(store.remove("fp-b"));
  EXPECT_FALSE(store.remove("fp-b"));
  EXPECT_EQ(store.list().size(), 1u);
}

TEST(Store, MarksTheFileAsOursAndUsesWal) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  { Store::open(path).put(sample_profile("fp-a")); }
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
  auto pragma = [&](const char* sql) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(h, sql, -1, &s, nullptr);
    std::string v = sqlite3_step(s) == SQLITE_ROW
                        ? reinterpret_cast<const char*>(sqlite3_column_text(s, 0))
                        : "";
    sqlite3_finalize(s);
    return v;
  };
  EXPECT_EQ(pragma("PRAGMA application_id"), std::to_string(kStoreApplicationId));
  EXPECT_EQ(pragma("PRAGMA user_version"), std::to_string(kStoreSchemaVersion));
  EXPECT_EQ(pragma("PRAGMA journal_mode"), "wal");
  sqlite3_close(h);
}

TEST(Store, OtherSchemaVersionIsMovedAsideAndRebuilt) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  { Store::open(path).put(sample_profile("fp-a")); }
  raw_exec(path, "PRAGMA user_version = 7");
  LogCapture log;
  auto store = Store::open(path);
  EXPECT_TRUE(store.list().empty());
  const auto aside = files_starting(dir.path(), "caps.db.v7-");
  ASSERT_EQ(aside.size(), 1u);
  // Named by the UTC time it was moved, to the second (capability/utc_time.hpp).
  EXPECT_THAT(aside[0].filename().string(),
              ::testing::MatchesRegex("caps\\.db\\.v7-[0-9]{8}T[0-9]{6}Z"));
  EXPECT_THAT(log.text(), HasSubstr(path.string()));
  EXPECT_THAT(log.text(), HasSubstr(aside[0].string()));
  EXPECT_THAT(log.text(), HasSubstr("schema version 7"));
  // The old data is still there, untouched, for whoever wants it.
  raw_exec(aside[0], "SELECT * FROM devices");
  store.put(sample_profile("fp-b"));
  EXPECT_EQ(store.list().size(), 1u);
}

// A file of ours whose tables are not the schema's (one dropped, one with
// other columns) passes SQLite's quick_check, yet every later query would
// fail: it is moved aside like any corrupt file, and a fresh one works.
TEST(Store, MissingTablesOrWrongColumnsAreMovedAsideAndRebuilt) {
  const std::pair<std::string, std::string> cases[] = {
      {"DROP TABLE tuned_plans", "table 'tuned_plans' is missing"},
      {"DROP TABLE copy_costs; CREATE TABLE copy_costs(x INTEGER)",
       "table 'copy_costs' has the columns (x)"}};
  for (const auto& [damage, why] : cases) {
    ScratchDir dir;
    const auto path = dir / "caps.db";
    { Store::open(path).put(sample_profile("fp-a")); }
    raw_exec(path, damage);
    LogCapture log;
    auto store = Store::open(path);
    EXPECT_TRUE(store.list().empty()) << damage;
    EXPECT_EQ(files_starting(dir.path(), "caps.db.corrupt-").size(), 1u) << damage;
    EXPECT_THAT(log.text(), HasSubstr(why)) << log.text();
    store.put(sample_profile("fp-b"));
    EXPECT_EQ(store.list().size(), 1u);
  }
}

// Commands that only read open read-only: no file where there was none, and
// a file open() would move aside or migrate is left exactly as it is (with
// a warning) and reads as nothing; a good one reads as usual.
TEST(Store, ReadOnlyOpeningWritesNothing) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  EXPECT_FALSE(Store::open_read_only(path));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), {}), 0);
  { Store::open(path).put(sample_profile("fp-a")); }
  const auto before = files_starting(dir.path(), "caps.db");
  {
    const auto store = Store::open_read_only(path);
    ASSERT_TRUE(store);
    EXPECT_EQ(store->list().size(), 1u);
  }
  EXPECT_EQ(files_starting(dir.path(), "caps.db"), before);
  raw_exec(path, "PRAGMA user_version = 7");
  LogCapture log;
  EXPECT_FALSE(Store::open_read_only(path));
  EXPECT_THAT(log.text(), HasSubstr("schema version 7"));
  EXPECT_THAT(log.text(), HasSubstr("not read"));
  EXPECT_TRUE(files_starting(dir.path(), "caps.db.v7-").empty());  // not moved aside
}

TEST(Store, RandomBytesAreMovedAsideWithAWarning) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  {
    std::ofstream f(path, std::ios::binary);
    std::mt19937 gen(7);
    for (int i = 0; i < 8192; ++i) f.put(static_cast<char>(gen() & 0xff));
  }
  LogCapture log;
  auto store = Store::open(path);
  EXPECT_EQ(store.quick_check(), "ok");
  EXPECT_TRUE(store.list().empty());
  const auto aside = files_starting(dir.path(), "caps.db.corrupt-");
  ASSERT_EQ(aside.size(), 1u);
  EXPECT_EQ(fs::file_size(aside[0]), 8192u);
  EXPECT_THAT(log.text(), HasSubstr("warning"));
  EXPECT_THAT(log.text(), HasSubstr(aside[0].string()));
  EXPECT_TRUE(
      std::regex_search(aside[0].filename().string(), std::regex(R"(\.corrupt-\d{8}T\d{6}Z$)")));
}

TEST(Store, TruncatedDatabaseIsMovedAsideAndRebuilt) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  {
    auto store = Store::open(path);
    for (int i = 0; i < 20; ++i) store.put(sample_profile("fp-" + std::to_string(i), 60));
  }
  ASSERT_FALSE(fs::exists(path.string() + "-wal") && fs::file_size(path.string() + "-wal") > 0)
      << "closing the last connection checkpoints the WAL";
  const auto size = fs::file_size(path);
  ASSERT_GT(size, 8192u);
  fs::resize_file(path, size / 2);
  LogCapture log;
  auto store = Store::open(path);
  EXPECT_TRUE(store.list().empty());
  EXPECT_EQ(files_starting(dir.path(), "caps.db.corrupt-").size(), 1u);
  EXPECT_THAT(log.text(), HasSubstr("moved it aside"));
}

// Found by tests/fuzz: a header whose schema format number SQLite does not
// know ("unsupported file format", SQLITE_ERROR rather than SQLITE_CORRUPT)
// made open() throw; any error of the file's own is a reason to recover.
TEST(Store, UnsupportedFileFormatIsMovedAsideAndRebuilt) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  { Store::open(path).put(sample_profile("fp-1", 10)); }
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(44);  // the schema format number, big-endian; SQLite knows 1-4
    const char five[4] = {0, 0, 0, 5};
    f.write(five, 4);
  }
  LogCapture log;
  auto store = Store::open(path);
  EXPECT_TRUE(store.list().empty());
  EXPECT_EQ(files_starting(dir.path(), "caps.db.corrupt-").size(), 1u);
  EXPECT_THAT(log.text(), HasSubstr("unsupported file format"));
}

// /dev/null used to open as an empty database and fail at the first write
// with "disk I/O error"; a FIFO would block.
TEST(Store, DevicesAndFifosAreNotDatabases) {
  ScratchDir dir;
  const auto fifo = dir / "caps.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path& path : {fs::path("/dev/null"), fifo}) {
    for (const bool read_only : {false, true}) {
      try {
        if (read_only)
          (void)Store::open_read_only(path);
        else
          (void)Store::open(path);
        ADD_FAILURE() << path << " opened";
      } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("not a database file")) << path;
      }
    }
  }
}

TEST(Store, ForeignDatabaseIsNotTakenOver) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  raw_exec(path, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
  LogCapture log;
  auto store = Store::open(path);
  EXPECT_TRUE(store.list().empty());
  EXPECT_EQ(files_starting(dir.path(), "caps.db.corrupt-").size(), 1u);
  EXPECT_THAT(log.text(), HasSubstr("application_id"));
}

TEST(Store, UnwritablePathIsOneClearError) {
  ScratchDir dir;
  { std::ofstream(dir / "a-file") << "x"; }
  const auto path = dir / "a-file" / "caps.db";  // a regular file as directory
  try {
    Store::open(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

TEST(Store, ConcurrentWritersBothLand) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  constexpr int kPerWriter = 40;
  // Both children also race to create the file.
  std::vector<pid_t> pids;
  for (int w = 0; w < 2; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        auto store = Store::open(path);
        for (int i = 0; i < kPerWriter; ++i)
          store.put(sample_profile("w" + std::to_string(w) + "-" + std::to_string(i), 30));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        rc = 1;
      }
      std::_Exit(rc);  // no gtest teardown in the child
    }
    pids.push_back(pid);
  }
  for (const pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer failed";
  }
  auto store = Store::open(path);
  EXPECT_EQ(store.quick_check(), "ok");
  const auto list = store.list();
  ASSERT_EQ(list.size(), 2u * kPerWriter);
  for (const auto& r : list) EXPECT_EQ(r.ops, 30) << r.fingerprint;
  EXPECT_TRUE(files_starting(dir.path(), "caps.db.corrupt-").empty());
}

TEST(Store, TwoProcessesRecoveringTheSameFileKeepOneDatabase) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  std::ofstream(path, std::ios::binary) << std::string(4096, 'x');
  constexpr int kWriters = 4;
  std::vector<pid_t> pids;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        Store::open(path).put(sample_profile("w" + std::to_string(w)));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        rc = 1;
      }
      std::_Exit(rc);
    }
    pids.push_back(pid);
  }
  for (const pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  // Only the bad file was moved aside, once; every writer's rows are in the
  // one rebuilt database.
  EXPECT_EQ(files_starting(dir.path(), "caps.db.corrupt-").size(), 1u);
  EXPECT_EQ(Store::open(path).list().size(), static_cast<size_t>(kWriters));
}

TEST(Store, DefaultPathFollowsEnvironment) {
  const std::string saved_db =
      std::getenv("AMPX_CAPABILITY_DB") ? std::getenv("AMPX_CAPABILITY_DB") : "";
  const char* xdg_env = std::getenv("XDG_CACHE_HOME");
  const std::string saved_xdg = xdg_env ? xdg_env : "";
  ::setenv("AMPX_CAPABILITY_DB", "/x/y.db", 1);
  EXPECT_EQ(default_db_path(), fs::path("/x/y.db"));
  EXPECT_EQ(resolve_db_path(std::string("/cli.db")), fs::path("/cli.db"));
  ::unsetenv("AMPX_CAPABILITY_DB");
  ::setenv("XDG_CACHE_HOME", "/cache", 1);
  EXPECT_EQ(default_db_path(), fs::path("/cache/ampx/capabilities.db"));
  ::unsetenv("XDG_CACHE_HOME");
  if (const char* home = std::getenv("HOME")) {
    EXPECT_EQ(default_db_path(), fs::path(home) / ".cache/ampx/capabilities.db");
  }
  if (!saved_db.empty()) ::setenv("AMPX_CAPABILITY_DB", saved_db.c_str(), 1);
  if (xdg_env) ::setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
}

TEST(Store, LoadProfileForPrefersFileThenDatabase) {
  ScratchDir dir;
  const auto db = dir / "caps.db";
  EXPECT_FALSE(load_profile_for("fp-a", std::nullopt, db.string()));
  EXPECT_FALSE(fs::exists(db)) << "reading does not create the database";
  auto a = sample_profile("fp-a");
  a.device_id = "cpu_ref:0";
  { Store::open(db).put(a); }
  EXPECT_EQ(load_profile_for("fp-a", std::nullopt, db.string())->fingerprint, "fp-a");
  EXPECT_EQ(load_profile_for("cpu_ref:0", std::nullopt, db.string())->fingerprint, "fp-a");
  auto b = sample_profile("fp-b");
  b.device_id = "cpu_ref:0";
  const auto file = dir / "p.json";
  save_profile_file(file, {b});
  EXPECT_EQ(load_profile_for("cpu_ref:0", file.string(), db.string())->fingerprint, "fp-b");
  EXPECT_FALSE(load_profile_for("fp-a", file.string(), db.string()));
}

// A version 1 database (before in-context calibration) is migrated in
// place: its profiles stay, the new tables appear, nothing is moved aside.
TEST(Store, VersionOneIsMigratedInPlaceKeepingItsRows) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  { Store::open(path).put(sample_profile("fp-a")); }
  raw_exec(path, "DROP TABLE node_timings; DROP TABLE tuned_plans; PRAGMA user_version = 1");
  auto store = Store::open(path);
  ASSERT_EQ(store.list().size(), 1u);
  EXPECT_EQ(store.get("fp-a")->ops.size(), sample_profile("fp-a").ops.size());
  EXPECT_TRUE(files_starting(dir.path(), "caps.db.v1-").empty());
  NodeTiming t{std::string(kSignatureVersion) + "|Relu|f32[4]|f32[4]|",
               "Relu",
               "f32",
               3,
               2.5,
               0.1,
               "2026-12-01T00:00:00Z"};
  store.put_node_timings("fp-a", {t});
  const auto rows = store.node_timings("fp-a");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].signature, t.signature);
  EXPECT_DOUBLE_EQ(rows[0].median_us, 2.5);
  EXPECT_EQ(rows[0].samples, 3);
  // Removing the device removes its measurements.
  EXPECT_TRUE(store.remove("fp-a"));
  EXPECT_TRUE(store.node_timings("fp-a").empty());
}

// Found by tests/fuzz: a file that says version 1 but already has a table
// of version 2 made open() fail ("table node_timings already exists") on
// every command; it is moved aside like any file that is not ours.
TEST(Store, VersionOneThatCannotBeMigratedIsMovedAside) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  { Store::open(path).put(sample_profile("fp-a")); }
  raw_exec(path, "DROP TABLE tuned_plans; PRAGMA user_version = 1");
  LogCapture log;
  auto store = Store::open(path);
  EXPECT_TRUE(store.list().empty());
  EXPECT_EQ(files_starting(dir.path(), "caps.db.corrupt-").size(), 1u);
  EXPECT_THAT(log.text(), HasSubstr("schema version 1 cannot be migrated"));
}

// Every database the fuzzer once broke open() with (tests/fuzz/regressions:
// an unsupported file format, a schema 1 that cannot be migrated, records
// whose corrupt sizes SQLite answers with "out of memory", a header write
// version that makes SQLite open it read-only, an empty-looking file with
// a damaged first page) now opens to a usable
// database, here in the ordinary suites too.
TEST(Store, EveryKeptFuzzFindingOpensToAUsableDatabase) {
  const fs::path kept = fs::path(AMPX_FUZZ_REGRESSIONS_DIR) / "store";
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kept)) {
    ScratchDir dir;
    const auto path = dir / "caps.db";
    fs::copy_file(entry.path(), path);
    LogCapture log;
    (void)Store::open_read_only(path);
    Store store = Store::open(path);
    store.put(sample_profile("fp-new"));
    EXPECT_EQ(store.get("fp-new")->ops.size(), sample_profile("fp-new").ops.size()) << entry.path();
    EXPECT_EQ(store.quick_check(), "ok") << entry.path();
    ++files;
  }
  EXPECT_GE(files, 5);
}

// A corrupt or stale calibration row is dropped with a warning, never fatal.
TEST(Store, CorruptNodeTimingRowsAreDroppedWithAWarning) {
  ScratchDir dir;
  const auto path = dir / "caps.db";
  const std::string good = std::string(kSignatureVersion) + "|Relu|f32[4]|f32[4]|";
  {
    auto store = Store::open(path);
    store.put_node_timings("fp-a", {{good, "Relu", "f32", 5, 1.5, 0.1, "t"},
                                    {good + "x", "Relu", "f32", 5, 1.0, 0.1, "t"},
                                    {"s0|Relu|f32[4]|f32[4]|", "Relu", "f32", 5, 1.0, 0.1, "t"}});
  }
  raw_exec(
      path,
      ("UPDATE node_timings SET median_us = 'fast' WHERE signature = '" + good + "x'").c_str());
  auto store = Store::open(path);
  LogCapture log;
  const Calibration cal(store.node_timings("fp-a"), "dev:0");
  EXPECT_EQ(cal.size(), 1u);
  ASSERT_NE(cal.find(good), nullptr);
  EXPECT_DOUBLE_EQ(cal.find(good)->median_us, 1.5);
  EXPECT_THAT(log.text(), HasSubstr("dropped 2"));
  EXPECT_THAT(log.text(), HasSubstr("dev:0"));
}

TEST(Store, TunedPlansAreFoundByTheirWholeKeyOnly) {
  ScratchDir dir;
  auto store = Store::open(dir / "caps.db");
  store.put_tuned_plan({"h1", "fp-a", "amp=O2", "m.onnx", "t1", "{}"});
  store.put_tuned_plan({"h1", "fp-a", "amp=O1", "m.onnx", "t2", "{}"});
  EXPECT_TRUE(store.tuned_plan("h1", "fp-a", "amp=O2"));
  EXPECT_FALSE(store.tuned_plan("h2", "fp-a", "amp=O2"));
  EXPECT_FALSE(store.tuned_plan("h1", "fp-b", "amp=O2"));
  EXPECT_EQ(store.tuned_plans_named("m.onnx").size(), 2u);
  // Tuning again replaces the row.
  store.put_tuned_plan({"h1", "fp-a", "amp=O2", "m.onnx", "t3", "{\"x\":1}"});
  EXPECT_EQ(store.tuned_plan("h1", "fp-a", "amp=O2")->tuned_at, "t3");
}

}  // namespace
}  // namespace ampx::capability
