#include "sqlite.hpp"

namespace ampx::capability::sqlite {

void check(sqlite3* db, int rc, std::string_view context) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  const int ext = db ? sqlite3_extended_errcode(db) : rc;
  std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  throw SqliteError(ext, std::string(context) + ": " + msg);
}

ConnectionPtr open_connection(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // sqlite3_open_v2 hands out a handle even on failure; own it either way.
  ConnectionPtr db(raw);
  if (rc != SQLITE_OK) {
    const std::string msg = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    const int ext = raw ? sqlite3_extended_errcode(raw) : rc;
    throw SqliteError(ext, msg);
  }
  sqlite3_extended_result_codes(db.get(), 1);
  return db;
}

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(sqlite3_extended_errcode(db), msg);
  }
}

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  stmt_.reset(raw);
  check(db, rc, "prepare");
}

Statement& Statement::bind(int index, std::string_view text) {
  check(db_,
        sqlite3_bind_text(stmt_.get(), index, text.data(), static_cast<int>(text.size()),
                          SQLITE_TRANSIENT),
        "bind");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check(db_, sqlite3_bind_double(stmt_.get(), index, value), "bind");
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  check(db_, sqlite3_bind_int64(stmt_.get(), index, value), "bind");
  return *this;
}

Statement& Statement::bind_null(int index) {
  check(db_, sqlite3_bind_null(stmt_.get(), index), "bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  check(db_, rc, "step");
  return false;
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

std::string Statement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_.get(), column);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(stmt_.get(), column)))
           : std::string();
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}

bool Statement::is_number(int column) const {
  const int t = sqlite3_column_type(stmt_.get(), column);
  return t == SQLITE_INTEGER || t == SQLITE_FLOAT;
}

int64_t Statement::integer(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

Transaction::Transaction(sqlite3* db, Kind kind) : db_(db) {
  exec(db_, kind == Kind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN");
}

Transaction::~Transaction() {
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, "COMMIT");
  done_ = true;
}

}  // namespace ampx::capability::sqlite
