// Thin RAII over the SQLite C API for the store: a connection, a prepared
// statement, and a transaction that rolls back unless committed. Every
// failure throws SqliteError carrying SQLite's extended result code, so the
// store can tell "not a database" from "cannot write here".
#pragma once

#include <sqlite3.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ampx::capability::sqlite {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }
  int primary_code() const noexcept { return code_ & 0xff; }

 private:
  int code_;
};

struct ConnectionCloser {
  void operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
};
using ConnectionPtr = std::unique_ptr<sqlite3, ConnectionCloser>;

// Opens `path` with `flags` (SQLITE_OPEN_*). Throws SqliteError.
ConnectionPtr open_connection(const std::string& path, int flags);
// Runs one or more statements without results. Throws SqliteError.
void exec(sqlite3* db, const char* sql);
// Throws SqliteError "<context>: <sqlite message>" when rc is an error.
void check(sqlite3* db, int rc, std::string_view context);

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;

  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, double value);
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind_null(int index);

  // Advances: true when a row is available, false when done. Throws.
  bool step();
  // Steps until done (for writes).
  void run();
  // Back to the start with bindings cleared, to run again.
  void reset();

  std::string text(int column) const;
  double real(int column) const;
  int64_t integer(int column) const;
  bool is_null(int column) const;
  // An INTEGER or REAL value (real() reads text as 0).
  bool is_number(int column) const;

 private:
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
  };
  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
};

// Begins on construction, ROLLBACK on destruction unless commit() ran.
// Writers use BEGIN IMMEDIATE: the write lock is taken up front, so a
// concurrent writer waits on busy_timeout instead of failing later with
// SQLITE_BUSY when a read lock cannot be upgraded. Readers use a deferred
// BEGIN to see one consistent snapshot across several SELECTs.
class Transaction {
 public:
  enum class Kind { kRead, kWrite };
  Transaction(sqlite3* db, Kind kind);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace ampx::capability::sqlite
