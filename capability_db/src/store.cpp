#include <ampx/capability/profile_json.hpp>
#include <ampx/capability/store.hpp>
#include <ampx/capability/utc_time.hpp>
#include <ampx/fileio/regular_file.hpp>

#include "sqlite.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

namespace ampx::capability {

namespace fs = std::filesystem;
using sqlite::SqliteError;
using sqlite::Statement;
using sqlite::Transaction;

namespace {

// One command opens the database read-only several times (device
// selection, cost models, tuned plans): a database that cannot be read is
// said once per process, not once per look.
void warn_not_read_once(const fs::path& path, const std::string& message) {
  static std::mutex mutex;
  static std::set<std::string> warned;
  std::error_code ec;  // an unresolvable path is keyed as given
  const std::lock_guard lock(mutex);
  if (warned.insert(fs::absolute(path, ec).lexically_normal().string()).second)
    spdlog::warn("{}", message);
}

// Version 1. `seq` keeps each list in the order the probe produced it; the
// support answer is stored by name so the file reads well in sqlite3.
constexpr const char* kSchemaV1Sql = R"sql(
CREATE TABLE devices(
  fingerprint TEXT PRIMARY KEY, device_id TEXT NOT NULL, plugin TEXT NOT NULL,
  plugin_version TEXT NOT NULL, device_name TEXT NOT NULL, driver_version TEXT NOT NULL,
  probed_at TEXT NOT NULL, quick INTEGER NOT NULL);
CREATE TABLE op_timings(
  fingerprint TEXT NOT NULL, seq INTEGER NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL,
  shape_class TEXT NOT NULL, flops REAL NOT NULL, bytes REAL NOT NULL, support TEXT NOT NULL,
  note TEXT NOT NULL, time_us REAL, PRIMARY KEY(fingerprint, seq));
CREATE TABLE cast_costs(
  fingerprint TEXT NOT NULL, seq INTEGER NOT NULL, from_dtype TEXT NOT NULL,
  to_dtype TEXT NOT NULL, ns_per_element REAL NOT NULL, PRIMARY KEY(fingerprint, seq));
CREATE TABLE copy_costs(
  fingerprint TEXT NOT NULL, seq INTEGER NOT NULL, direction TEXT NOT NULL,
  latency_us REAL NOT NULL, ns_per_byte REAL NOT NULL, PRIMARY KEY(fingerprint, seq));
)sql";

// Version 2 adds what real runs measured (in-context calibration) and the
// plans `ampx tune` kept. A version 1 file is migrated in place: these are
// new tables, so no row of version 1 changes.
constexpr const char* kSchemaV2Sql = R"sql(
CREATE TABLE node_timings(
  fingerprint TEXT NOT NULL, signature TEXT NOT NULL, op TEXT NOT NULL, dtype TEXT NOT NULL,
  samples INTEGER NOT NULL, median_us REAL NOT NULL, spread_us REAL NOT NULL,
  measured_at TEXT NOT NULL, PRIMARY KEY(fingerprint, signature));
CREATE TABLE tuned_plans(
  model_hash TEXT NOT NULL, devices TEXT NOT NULL, options TEXT NOT NULL,
  model_name TEXT NOT NULL, tuned_at TEXT NOT NULL, plan_json TEXT NOT NULL,
  PRIMARY KEY(model_hash, devices, options));
)sql";

constexpr int kBusyTimeoutMs = 15000;

// "20261129T101500Z": a file-name suffix.
std::string utc_stamp() {
  std::string s = utc_now_iso8601();
  std::erase_if(s, [](char c) { return c == '-' || c == ':'; });
  return s;
}

int64_t pragma_int(sqlite3* db, const char* pragma) {
  Statement s(db, std::string("PRAGMA ") + pragma);
  return s.step() ? s.integer(0) : 0;
}

std::string run_quick_check(sqlite3* db) {
  Statement s(db, "PRAGMA quick_check(1)");
  return s.step() ? s.text(0) : "no answer";
}

// Table name -> column names, in order, of every table of `db`.
using TableColumns = std::map<std::string, std::vector<std::string>>;
TableColumns table_columns(sqlite3* db) {
  TableColumns out;
  Statement names(db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
  while (names.step()) {
    const std::string table = names.text(0);
    Statement cols(db, "SELECT name FROM pragma_table_info(?1)");
    cols.bind(1, table);
    auto& list = out[table];
    while (cols.step()) list.push_back(cols.text(0));
  }
  return out;
}

// The tables a schema version has, as SQLite itself reads the schema SQL
// (built once in memory: the column lists are written down only there).
TableColumns expected_tables(int64_t version) {
  const auto conn = sqlite::open_connection(":memory:", SQLITE_OPEN_READWRITE);
  sqlite::exec(conn.get(), kSchemaV1Sql);
  if (version >= 2) sqlite::exec(conn.get(), kSchemaV2Sql);
  return table_columns(conn.get());
}

// What is wrong with the tables of a file of our `version` (a table
// missing, or columns not those of the schema), "" when nothing: such a
// file passes quick_check, yet every later query would fail on it.
std::string schema_problem(sqlite3* db, int64_t version) {
  const TableColumns have = table_columns(db);
  for (const auto& [table, columns] : expected_tables(version)) {
    const auto it = have.find(table);
    if (it == have.end()) return fmt::format("table '{}' is missing", table);
    if (it->second != columns)
      return fmt::format("table '{}' has the columns ({}), not ({})", table,
                         fmt::join(it->second, ", "), fmt::join(columns, ", "));
  }
  return {};
}

// Errors that say nothing about the file's content: it is busy, the disk
// is full, or we may not read or write it. Not SQLITE_NOMEM: SQLite answers
// it for records whose corrupt sizes it cannot allocate (found by
// tests/fuzz), and reading a small database's header and schema does not
// run out of memory otherwise; a file moved aside is kept, not deleted.
bool is_environment_error(int primary_code) {
  switch (primary_code) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_FULL:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_INTERRUPT:
      return true;
    default:
      return false;
  }
}

// Why a file must be moved aside, and under which suffix.
struct Verdict {
  enum Kind { kOk, kFresh, kMigrate, kCorrupt, kOtherVersion } kind = kOk;
  std::string why;
  int64_t version = 0;
};

// Reads the header and checks the file without writing to it: a file that
// is not ours must be moved aside exactly as it was found.
Verdict inspect(sqlite3* db) {
  try {
    Transaction read(db, Transaction::Kind::kRead);
    const int64_t app_id = pragma_int(db, "application_id");
    const int64_t version = pragma_int(db, "user_version");
    Statement tables(db, "SELECT count(*) FROM sqlite_schema");
    const int64_t n_tables = tables.step() ? tables.integer(0) : 0;
    if (app_id == 0 && version == 0 && n_tables == 0) {
      // Empty, or only looks empty: a damaged first page fails the first
      // write (found by tests/fuzz).
      const std::string qc = run_quick_check(db);
      if (qc != "ok") return {Verdict::kCorrupt, "quick_check: " + qc, 0};
      return {Verdict::kFresh, "", 0};
    }
    if (app_id != kStoreApplicationId)
      return {Verdict::kCorrupt,
              fmt::format("application_id {:#x} is not an ampx capability database's", app_id),
              version};
    if (version >= 1 && version < kStoreSchemaVersion) {
      const std::string qc = run_quick_check(db);
      if (qc != "ok") return {Verdict::kCorrupt, "quick_check: " + qc, version};
      if (std::string why = schema_problem(db, version); !why.empty())
        return {Verdict::kCorrupt, why, version};
      read.commit();
      return {Verdict::kMigrate, "", version};
    }
    if (version != kStoreSchemaVersion)
      return {Verdict::kOtherVersion,
              fmt::format("schema version {} (this ampx uses {})", version, kStoreSchemaVersion),
              version};
    const std::string qc = run_quick_check(db);
    if (qc != "ok") return {Verdict::kCorrupt, "quick_check: " + qc, version};
    if (std::string why = schema_problem(db, version); !why.empty())
      return {Verdict::kCorrupt, why, version};
    read.commit();
    return {Verdict::kOk, "", version};
  } catch (const SqliteError& e) {
    // Only reading the header and the schema table, with fixed SQL: an
    // error is the file's (not a database, corrupt, "unsupported file
    // format", a schema SQLite cannot parse), unless it is the machine's.
    if (is_environment_error(e.primary_code())) throw;
    return {Verdict::kCorrupt, e.what(), 0};
  }
}

// Identity of the file at `path` (0/0 if none): two processes that find the
// same bad file must not both move it, or the second would move aside the
// fresh database the first has just built.
std::pair<dev_t, ino_t> file_identity(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {0, 0};
  return {st.st_dev, st.st_ino};
}

// Renames the database (and a WAL file that belongs to it: left behind, it
// would be replayed into the new database) to `aside`, unless the file at
// `path` is no longer the one that was inspected.
void move_aside(const fs::path& path, const std::string& why, const std::string& suffix,
                std::pair<dev_t, ino_t> inspected) {
  if (file_identity(path) != inspected) {
    spdlog::debug("capability database '{}' was replaced meanwhile; not moving it", path.string());
    return;
  }
  fs::path aside = path.string() + suffix + utc_stamp();
  for (int n = 1; fs::exists(aside); ++n)
    aside = path.string() + suffix + utc_stamp() + "-" + std::to_string(n);
  std::error_code ec;
  fs::rename(path, aside, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)  // another process moved it already
    throw std::runtime_error(
        fmt::format("capability database '{}' is unusable ({}) and cannot "
                    "be moved aside to '{}': {}",
                    path.string(), why, aside.string(), ec.message()));
  fs::rename(path.string() + "-wal", aside.string() + "-wal", ec);
  fs::remove(path.string() + "-shm", ec);
  spdlog::warn("capability database '{}': {}; moved it aside to '{}' and started an empty one",
               path.string(), why, aside.string());
}

void create_schema(sqlite3* db) {
  Transaction tx(db, Transaction::Kind::kWrite);
  // Another process may have initialised it between our inspection and our
  // write lock: then there is nothing to do.
  if (pragma_int(db, "user_version") == 0) {
    sqlite::exec(db, kSchemaV1Sql);
    sqlite::exec(db, kSchemaV2Sql);
    sqlite::exec(db, fmt::format("PRAGMA application_id = {}", kStoreApplicationId).c_str());
    sqlite::exec(db, fmt::format("PRAGMA user_version = {}", kStoreSchemaVersion).c_str());
  }
  tx.commit();
}

// An older schema of ours, brought up to date in one transaction (a failure
// leaves it as it was). Re-checked under the write lock: another process
// may have migrated it meanwhile.
void migrate_schema(sqlite3* db, const fs::path& path) {
  Transaction tx(db, Transaction::Kind::kWrite);
  const int64_t version = pragma_int(db, "user_version");
  if (version == 1) sqlite::exec(db, kSchemaV2Sql);
  if (version < kStoreSchemaVersion) {
    sqlite::exec(db, fmt::format("PRAGMA user_version = {}", kStoreSchemaVersion).c_str());
    spdlog::info("capability database '{}': schema version {} migrated to {}", path.string(),
                 version, kStoreSchemaVersion);
  }
  tx.commit();
}

// Holds an exclusive flock on `<db>.lock` while a process checks the file
// and, if it must, moves it aside and creates the new one. Without it, two
// processes that find the same bad file can interleave so that the second
// renames the fresh database the first has just opened (its identity check
// and its rename are two steps). SQLite's own locks cannot do this: they
// live in the file being replaced. A lock file that cannot be created (a
// read-only directory) means no one can recover there either, so opening
// goes on without it.
class RecoveryLock {
 public:
  explicit RecoveryLock(const fs::path& db_path) {
    const std::string lock_path = db_path.string() + ".lock";
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      spdlog::debug("capability database: no lock file '{}' ({}); opening without it", lock_path,
                    std::strerror(errno));
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  RecoveryLock(const RecoveryLock&) = delete;
  RecoveryLock& operator=(const RecoveryLock&) = delete;
  ~RecoveryLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
  }

 private:
  int fd_ = -1;
};

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw std::runtime_error(fmt::format("capability database '{}': {}", path.string(), what));
}

}  // namespace

struct Store::Db {
  sqlite::ConnectionPtr conn;
  sqlite3* get() const noexcept { return conn.get(); }
};

fs::path default_db_path() {
  if (const char* p = std::getenv("AMPX_CAPABILITY_DB"); p && *p) return p;
  // XDG: a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
    return fs::path(x) / "ampx" / "capabilities.db";
  if (const char* h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "ampx" / "capabilities.db";
  throw std::runtime_error(
      "no place for the capability database: give --db or set AMPX_CAPABILITY_DB");
}

fs::path resolve_db_path(const std::optional<std::string>& cli_path) {
  if (cli_path && !cli_path->empty()) return *cli_path;
  return default_db_path();
}

Store::Store(fs::path path, std::unique_ptr<Db> db) : path_(std::move(path)), db_(std::move(db)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

namespace {

// A directory, device or FIFO is never a database: SQLite would read
// /dev/null as an empty one and fail at the first write, or block on a FIFO.
void refuse_non_regular(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    fail(path, fmt::format("is {}, not a database file", fileio::file_kind(st.st_mode)));
}

}  // namespace

Store Store::open(const fs::path& path) {
  if (path.empty()) throw std::runtime_error("capability database: empty path");
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(path, fmt::format("cannot create directory '{}': {}", dir.string(), ec.message()));
  refuse_non_regular(path);

  // Twice at most: once as found, once after moving a bad file aside.
  const RecoveryLock lock(path);
  for (int attempt = 0; attempt < 2; ++attempt) {
    Verdict v;
    std::pair<dev_t, ino_t> inspected{0, 0};
    try {
      // Before opening: if the file is replaced between here and a move,
      // the identities differ and the move is skipped.
      inspected = file_identity(path);
      auto db = std::make_unique<Db>();
      db->conn = sqlite::open_connection(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
      sqlite3_busy_timeout(db->get(), kBusyTimeoutMs);
      v = inspect(db->get());
      // A header write version this SQLite does not know opens the file
      // read-only although we may write it: not a database we can use
      // (found by tests/fuzz; it failed every later write).
      if (v.kind != Verdict::kCorrupt && v.kind != Verdict::kOtherVersion &&
          sqlite3_db_readonly(db->get(), "main") == 1 && ::access(path.c_str(), W_OK) == 0)
        v = {Verdict::kCorrupt, "SQLite opens it only read-only (a file format it cannot write)",
             v.version};
      if (v.kind == Verdict::kOk || v.kind == Verdict::kFresh || v.kind == Verdict::kMigrate) {
        // WAL: readers never block the writer and a crash mid-write leaves
        // the last committed state. Persistent, so a no-op after the first.
        // A file that passed inspection but cannot take the first writes
        // (a schema 1 that already has a newer table, a damage the checks
        // did not see) is not ours to fix.
        try {
          sqlite::exec(db->get(), "PRAGMA journal_mode=WAL");
          if (v.kind == Verdict::kFresh) create_schema(db->get());
          if (v.kind == Verdict::kMigrate) migrate_schema(db->get(), path);
        } catch (const SqliteError& e) {
          if (is_environment_error(e.primary_code())) throw;
          v = {Verdict::kCorrupt,
               v.kind == Verdict::kMigrate
                   ? fmt::format("schema version {} cannot be migrated: {}", v.version, e.what())
                   : fmt::format("cannot be written: {}", e.what()),
               v.version};
        }
        if (v.kind != Verdict::kCorrupt) return Store(path, std::move(db));
      }
    } catch (const SqliteError& e) {
      fail(path, e.what());
    }
    // Connection closed (db went out of scope) before the file is moved.
    move_aside(path, v.why,
               v.kind == Verdict::kOtherVersion ? fmt::format(".v{}-", v.version) : ".corrupt-",
               inspected);
  }
  fail(path, "still unusable after moving the old file aside");
}

namespace {

// "file:" URI of `path` for sqlite3_open_v2 with SQLITE_OPEN_URI: the
// characters a URI gives a meaning to are %-escaped.
std::string file_uri(const fs::path& path) {
  std::string uri = "file:";
  for (const unsigned char c : fs::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#' || c < 0x20 || c >= 0x7f)
      uri += fmt::format("%{:02X}", c);
    else
      uri += static_cast<char>(c);
  }
  return uri;
}

// A read-only connection that has passed inspect(), or the verdict why not.
std::pair<sqlite::ConnectionPtr, Verdict> inspect_read_only(const fs::path& path, bool immutable) {
  const int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  auto conn = sqlite::open_connection(file_uri(path) + (immutable ? "?immutable=1" : ""), flags);
  sqlite3_busy_timeout(conn.get(), kBusyTimeoutMs);
  Verdict v = inspect(conn.get());
  return {std::move(conn), std::move(v)};
}

}  // namespace

std::optional<Store> Store::open_read_only(const fs::path& path) {
  if (path.empty()) return std::nullopt;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  // A path that cannot name a file (a parent that is a file, no permission
  // to look) is an error; one that names nothing yet is just empty.
  if (ec && ec != std::errc::no_such_file_or_directory) fail(path, ec.message());
  if (!fs::exists(st)) return std::nullopt;
  refuse_non_regular(path);
  Verdict v;
  auto db = std::make_unique<Db>();
  // With no WAL file (no writer at work, everything checkpointed: the state
  // every writer leaves at close) the file is read as immutable, so SQLite
  // makes no -wal and -shm files; with one, the reader joins the WAL the
  // writer made. A writer that starts and checkpoints during an immutable
  // read (rare: checkpoints run at a writer's close or past 1000 pages) can
  // make that read fail, a warning below, or see part of the new state:
  // this store holds planning hints, which a command that writes re-checks.
  const bool immutable = !fs::exists(path.string() + "-wal", ec);
  try {
    try {
      std::tie(db->conn, v) = inspect_read_only(path, immutable);
    } catch (const SqliteError& e) {
      // A WAL database in a directory this user cannot write: SQLite cannot
      // make its shared-memory file; read the file as it is instead.
      if (e.primary_code() != SQLITE_CANTOPEN && e.primary_code() != SQLITE_READONLY) throw;
      std::tie(db->conn, v) = inspect_read_only(path, true);
    }
  } catch (const SqliteError& e) {
    warn_not_read_once(
        path, fmt::format("capability database '{}': {}; not read", path.string(), e.what()));
    return std::nullopt;
  }
  if (v.kind == Verdict::kOk) return Store(path, std::move(db));
  if (v.kind != Verdict::kFresh)
    warn_not_read_once(
        path, fmt::format(
                  "capability database '{}': {}; not read (a command that writes to it, such as "
                  "ampx probe, {} it)",
                  path.string(),
                  v.kind == Verdict::kMigrate ? fmt::format("schema version {}", v.version) : v.why,
                  v.kind == Verdict::kMigrate ? "migrates" : "moves it aside and rebuilds"));
  return std::nullopt;
}

namespace {

// One profile's rows; the caller holds the write transaction.
void write_profile(sqlite3* db, const DeviceProfile& p) {
  for (const char* table : {"devices", "op_timings", "cast_costs", "copy_costs"})
    Statement(db, fmt::format("DELETE FROM {} WHERE fingerprint = ?1", table))
        .bind(1, p.fingerprint)
        .run();
  Statement(db, "INSERT INTO devices VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
      .bind(1, p.fingerprint)
      .bind(2, p.device_id)
      .bind(3, p.plugin)
      .bind(4, p.plugin_version)
      .bind(5, p.device_name)
      .bind(6, p.driver_version)
      .bind(7, p.probed_at)
      .bind(8, p.quick ? 1 : 0)
      .run();
  Statement op(db, "INSERT INTO op_timings VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const OpTiming& t = p.ops[i];
    op.reset();
    op.bind(1, p.fingerprint)
        .bind(2, static_cast<int64_t>(i))
        .bind(3, t.op)
        .bind(4, t.dtype)
        .bind(5, t.shape_class)
        .bind(6, t.flops)
        .bind(7, t.bytes)
        .bind(8, support_name(t.support))
        .bind(9, t.note);
    if (t.time_us < 0)
      op.bind_null(10);
    else
      op.bind(10, t.time_us);
    op.run();
  }
  Statement cast(db, "INSERT INTO cast_costs VALUES(?1, ?2, ?3, ?4, ?5)");
  for (size_t i = 0; i < p.casts.size(); ++i) {
    cast.reset();
    cast.bind(1, p.fingerprint)
        .bind(2, static_cast<int64_t>(i))
        .bind(3, p.casts[i].from)
        .bind(4, p.casts[i].to)
        .bind(5, p.casts[i].ns_per_element)
        .run();
  }
  Statement copy(db, "INSERT INTO copy_costs VALUES(?1, ?2, ?3, ?4, ?5)");
  for (size_t i = 0; i < p.copies.size(); ++i) {
    copy.reset();
    copy.bind(1, p.fingerprint)
        .bind(2, static_cast<int64_t>(i))
        .bind(3, p.copies[i].direction)
        .bind(4, p.copies[i].latency_us)
        .bind(5, p.copies[i].ns_per_byte)
        .run();
  }
}

}  // namespace

void Store::put(const DeviceProfile& p) {
  put_all({p});
}

void Store::put_all(const std::vector<DeviceProfile>& profiles) {
  for (const auto& p : profiles)
    if (p.fingerprint.empty()) fail(path_, "cannot store a profile without a fingerprint");
  sqlite3* db = db_->get();
  std::string current;
  try {
    Transaction tx(db, Transaction::Kind::kWrite);
    for (const auto& p : profiles) {
      current = p.fingerprint;
      write_profile(db, p);
    }
    tx.commit();
  } catch (const SqliteError& e) {
    fail(path_, fmt::format("storing {}: {}", current, e.what()));
  }
}

namespace {

// Reads one device's rows; the caller holds a read transaction.
std::optional<DeviceProfile> read_profile(sqlite3* db, const std::string& fingerprint) {
  Statement d(db,
              "SELECT device_id, plugin, plugin_version, device_name, driver_version, probed_at, "
              "quick FROM devices WHERE fingerprint = ?1");
  d.bind(1, fingerprint);
  if (!d.step()) return std::nullopt;
  DeviceProfile p;
  p.fingerprint = fingerprint;
  p.device_id = d.text(0);
  p.plugin = d.text(1);
  p.plugin_version = d.text(2);
  p.device_name = d.text(3);
  p.driver_version = d.text(4);
  p.probed_at = d.text(5);
  p.quick = d.integer(6) != 0;
  Statement o(db,
              "SELECT op, dtype, shape_class, flops, bytes, support, note, time_us FROM "
              "op_timings WHERE fingerprint = ?1 ORDER BY seq");
  o.bind(1, fingerprint);
  while (o.step()) {
    OpTiming t;
    t.op = o.text(0);
    t.dtype = o.text(1);
    t.shape_class = o.text(2);
    t.flops = o.real(3);
    t.bytes = o.real(4);
    t.support = support_from_name(o.text(5));
    t.note = o.text(6);
    t.time_us = o.is_null(7) ? -1 : o.real(7);
    p.ops.push_back(std::move(t));
  }
  Statement c(db,
              "SELECT from_dtype, to_dtype, ns_per_element FROM cast_costs WHERE fingerprint = "
              "?1 ORDER BY seq");
  c.bind(1, fingerprint);
  while (c.step()) p.casts.push_back({c.text(0), c.text(1), c.real(2)});
  Statement k(db,
              "SELECT direction, latency_us, ns_per_byte FROM copy_costs WHERE fingerprint = ?1 "
              "ORDER BY seq");
  k.bind(1, fingerprint);
  while (k.step()) p.copies.push_back({k.text(0), k.real(1), k.real(2)});
  return p;
}

}  // namespace

std::optional<DeviceProfile> Store::get(const std::string& fingerprint) const {
  try {
    Transaction tx(db_->get(), Transaction::Kind::kRead);
    auto p = read_profile(db_->get(), fingerprint);
    tx.commit();
    return p;
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  } catch (const std::invalid_argument& e) {  // a support name we never write
    fail(path_, e.what());
  }
}

std::vector<ProfileSummary> Store::list() const {
  std::vector<ProfileSummary> out;
  try {
    Statement s(db_->get(),
                "SELECT d.fingerprint, d.device_id, d.device_name, d.plugin, d.plugin_version, "
                "d.probed_at, d.quick, count(o.seq), sum(o.support = 'native'), "
                "sum(o.support = 'emulated'), sum(o.support = 'unsupported'), "
                "sum(o.time_us IS NOT NULL) FROM devices d LEFT JOIN op_timings o "
                "ON o.fingerprint = d.fingerprint GROUP BY d.fingerprint ORDER BY d.fingerprint");
    while (s.step()) {
      ProfileSummary r;
      r.fingerprint = s.text(0);
      r.device_id = s.text(1);
      r.device_name = s.text(2);
      r.plugin = s.text(3);
      r.plugin_version = s.text(4);
      r.probed_at = s.text(5);
      r.quick = s.integer(6) != 0;
      r.ops = static_cast<int>(s.integer(7));
      r.native = static_cast<int>(s.integer(8));
      r.emulated = static_cast<int>(s.integer(9));
      r.unsupported = static_cast<int>(s.integer(10));
      r.measured = static_cast<int>(s.integer(11));
      out.push_back(std::move(r));
    }
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  }
  return out;
}

std::vector<DeviceProfile> Store::all() const {
  std::vector<DeviceProfile> out;
  try {
    Transaction tx(db_->get(), Transaction::Kind::kRead);
    std::vector<std::string> fps;
    Statement s(db_->get(), "SELECT fingerprint FROM devices ORDER BY fingerprint");
    while (s.step()) fps.push_back(s.text(0));
    for (const auto& fp : fps)
      if (auto p = read_profile(db_->get(), fp)) out.push_back(std::move(*p));
    tx.commit();
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  } catch (const std::invalid_argument& e) {
    fail(path_, e.what());
  }
  return out;
}

bool Store::remove(const std::string& fingerprint) {
  sqlite3* db = db_->get();
  try {
    Transaction tx(db, Transaction::Kind::kWrite);
    Statement d(db, "DELETE FROM devices WHERE fingerprint = ?1");
    d.bind(1, fingerprint).run();
    const bool existed = sqlite3_changes(db) > 0;
    for (const char* table : {"op_timings", "cast_costs", "copy_costs", "node_timings"})
      Statement(db, fmt::format("DELETE FROM {} WHERE fingerprint = ?1", table))
          .bind(1, fingerprint)
          .run();
    tx.commit();
    return existed;
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  }
}

void Store::put_node_timings(const std::string& fingerprint, const std::vector<NodeTiming>& rows) {
  if (fingerprint.empty()) fail(path_, "cannot store node timings without a fingerprint");
  sqlite3* db = db_->get();
  try {
    Transaction tx(db, Transaction::Kind::kWrite);
    Statement put(db, "INSERT OR REPLACE INTO node_timings VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    for (const NodeTiming& t : rows) {
      put.reset();
      put.bind(1, fingerprint)
          .bind(2, t.signature)
          .bind(3, t.op)
          .bind(4, t.dtype)
          .bind(5, static_cast<int64_t>(t.samples))
          .bind(6, t.median_us)
          .bind(7, t.spread_us)
          .bind(8, t.measured_at)
          .run();
    }
    tx.commit();
  } catch (const SqliteError& e) {
    fail(path_, fmt::format("storing node timings of {}: {}", fingerprint, e.what()));
  }
}

std::vector<NodeTiming> Store::node_timings(const std::string& fingerprint) const {
  std::vector<NodeTiming> out;
  try {
    Statement s(db_->get(),
                "SELECT signature, op, dtype, samples, median_us, spread_us, measured_at FROM "
                "node_timings WHERE fingerprint = ?1 ORDER BY signature");
    s.bind(1, fingerprint);
    while (s.step()) {
      NodeTiming t;
      t.signature = s.text(0);
      t.op = s.text(1);
      t.dtype = s.text(2);
      t.samples = static_cast<int>(s.integer(3));
      // A NULL or text where a number belongs reads as NaN: dropped later.
      t.median_us = s.is_number(4) ? s.real(4) : std::nan("");
      t.spread_us = s.is_number(5) ? s.real(5) : std::nan("");
      t.measured_at = s.text(6);
      out.push_back(std::move(t));
    }
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  }
  return out;
}

void Store::put_tuned_plan(const TunedPlanRecord& r) {
  sqlite3* db = db_->get();
  try {
    Transaction tx(db, Transaction::Kind::kWrite);
    Statement(db, "INSERT OR REPLACE INTO tuned_plans VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
        .bind(1, r.model_hash)
        .bind(2, r.devices)
        .bind(3, r.options)
        .bind(4, r.model_name)
        .bind(5, r.tuned_at)
        .bind(6, r.plan_json)
        .run();
    tx.commit();
  } catch (const SqliteError& e) {
    fail(path_, fmt::format("storing the tuned plan of {}: {}", r.model_name, e.what()));
  }
}

namespace {
TunedPlanRecord read_tuned(const Statement& s) {
  return {s.text(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(5)};
}
constexpr const char* kTunedColumns =
    "SELECT model_hash, devices, options, model_name, tuned_at, plan_json FROM tuned_plans ";
}  // namespace

std::optional<TunedPlanRecord> Store::tuned_plan(const std::string& model_hash,
                                                 const std::string& devices,
                                                 const std::string& options) const {
  try {
    Statement s(db_->get(), std::string(kTunedColumns) +
                                "WHERE model_hash = ?1 AND devices = ?2 AND options = ?3");
    s.bind(1, model_hash).bind(2, devices).bind(3, options);
    if (s.step()) return read_tuned(s);
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  }
  return std::nullopt;
}

bool Store::has_tuned_plan_for(const std::string& devices, const std::string& options) const {
  try {
    Statement s(db_->get(),
                "SELECT 1 FROM tuned_plans WHERE devices = ?1 AND options = ?2 LIMIT 1");
    s.bind(1, devices).bind(2, options);
    return s.step();
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  }
  return false;
}

std::vector<TunedPlanRecord> Store::tuned_plans_named(const std::string& model_name) const {
  std::vector<TunedPlanRecord> out;
  try {
    Statement s(db_->get(), std::string(kTunedColumns) + "WHERE model_name = ?1 ORDER BY tuned_at");
    s.bind(1, model_name);
    while (s.step()) out.push_back(read_tuned(s));
  } catch (const SqliteError& e) {
    fail(path_, e.what());
  }
  return out;
}

std::string Store::quick_check() const {
  try {
    return run_quick_check(db_->get());
  } catch (const SqliteError& e) {
    return e.what();
  }
}

std::optional<DeviceProfile> load_profile_for(const std::string& key,
                                              const std::optional<std::string>& profile_file,
                                              const std::string& db_path) {
  if (profile_file) return select_profile(load_profile_file(*profile_file), key);
  if (db_path.empty()) return std::nullopt;
  const std::optional<Store> store = Store::open_read_only(db_path);
  if (!store) return std::nullopt;
  if (auto p = store->get(key)) return p;
  return select_profile(store->all(), key);
}

}  // namespace ampx::capability
