// RAII wrappers for a SQLite connection (Database) and its prepared statements
// (Statement). Every sqlite3* and sqlite3_stmt* is owned by a std::unique_ptr
// whose deleter is the only place that closes or finalises it.
//
// Errors follow common/sqlite/sqlite_status.h
// (BUSY/LOCKED/FULL/IOERR/READONLY/CANTOPEN -> UNAVAILABLE, duplicate keys ->
// ALREADY_EXISTS, other constraints -> FAILED_PRECONDITION, the rest INTERNAL);
// messages never contain bound values.

#ifndef SHAREDOS_COMMON_SQLITE_DATABASE_H_
#define SHAREDOS_COMMON_SQLITE_DATABASE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::common::sqlite {

namespace internal {

struct ConnectionDeleter {
  void operator()(sqlite3* db) const;
};
struct StatementDeleter {
  void operator()(sqlite3_stmt* stmt) const;
};
using ConnectionHandle = std::unique_ptr<sqlite3, ConnectionDeleter>;
using StatementHandle = std::unique_ptr<sqlite3_stmt, StatementDeleter>;

// Idle prepared statements of one Database, keyed by SQL text. Shared with the
// Statements checked out of it (weakly), so a Statement that outlives its
// Database simply finalises itself. Not thread-safe, like its Database.
struct StatementCache {
  struct Entry {
    std::vector<StatementHandle> idle;
  };
  absl::flat_hash_map<std::string, std::unique_ptr<Entry>> entries;
};

}  // namespace internal

// A prepared statement. Move-only; not thread-safe (like its Database).
// Parameter indexes are 1-based, column indexes 0-based. Column views stay
// valid until the next Step(), Reset() or destruction. A Statement obtained
// from Database::Cached() goes back to the cache (reset, bindings cleared) when
// destroyed.
class Statement {
 public:
  Statement(Statement&& other) noexcept = default;
  Statement& operator=(Statement&& other) noexcept;
  ~Statement();

  // Bind a parameter. Text and blobs are copied. An empty string or blob binds
  // an empty value, not NULL. Errors: INTERNAL for an index out of range
  // (SQLITE_RANGE).
  absl::Status BindInt64(int index, int64_t value);
  absl::Status BindDouble(int index, double value);
  absl::Status BindText(int index, absl::string_view value);
  absl::Status BindBlob(int index, absl::string_view bytes);
  absl::Status BindNull(int index);

  // Runs the statement to its next row: true when a row is available, false
  // when done. After done or an error the statement is reset with its bindings
  // kept, so it can be re-bound and run again (and holds no read snapshot).
  // Errors: see the mapping in the file comment.
  absl::StatusOr<bool> Step();

  // Resets the statement to its start and clears all bindings to NULL.
  absl::Status Reset();

  int ColumnCount() const;
  bool ColumnIsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  absl::string_view ColumnText(int column) const;
  absl::string_view ColumnBlob(int column) const;

  // The SQL text the statement was prepared from.
  absl::string_view sql() const;

  // The underlying handle, for SQLite APIs not wrapped here. Ownership stays
  // here: never finalise it.
  sqlite3_stmt* handle() const { return stmt_.get(); }

 private:
  friend class Database;
  Statement(internal::StatementHandle stmt, internal::StatementCache::Entry* cache_entry,
            std::weak_ptr<internal::StatementCache> cache);

  // Returns the statement to its cache entry, if it came from one that still
  // exists.
  void ReturnToCache();
  absl::Status Error(int sqlite_code, absl::string_view operation) const;

  internal::StatementHandle stmt_;
  internal::StatementCache::Entry* cache_entry_ = nullptr;  // Owned by *cache_.
  std::weak_ptr<internal::StatementCache> cache_;
};

// One SQLite connection. Not thread-safe: use one Database per thread or owner,
// or guard every call (including Statement use) with the caller's mutex.
// Statements may outlive it safely (the connection is released when the last
// one is finalised).
class Database {
 public:
  enum class Synchronous { kOff, kNormal, kFull };

  struct Options {
    // journal_mode=WAL (ignored for in-memory and read-only databases). When
    // false the journal mode stored in the file is left as it is.
    bool wal = true;
    // How long a statement waits for another connection's lock before
    // SQLITE_BUSY.
    absl::Duration busy_timeout = absl::Seconds(5);
    // PRAGMA synchronous. FULL makes every commit durable before it returns.
    Synchronous synchronous = Synchronous::kFull;
    // Create the file if it does not exist.
    bool create = true;
    // Open read-only: every write fails with UNAVAILABLE (SQLITE_READONLY).
    bool read_only = false;
    // PRAGMA foreign_keys.
    bool foreign_keys = true;
  };

  // Opens (or creates) the database at `path` (":memory:" for a private
  // in-memory one) and applies `options`. Errors: UNAVAILABLE when the file
  // cannot be opened (missing with create = false, unreadable directory,
  // locked), INTERNAL when a setting cannot be applied (e.g. WAL could not be
  // enabled).
  static absl::StatusOr<std::unique_ptr<Database>> Open(absl::string_view path);
  static absl::StatusOr<std::unique_ptr<Database>> Open(absl::string_view path,
                                                        const Options& options);

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more `;`-separated statements that return no rows needed by the
  // caller (DDL, PRAGMA, BEGIN/COMMIT). Never interpolate values into `sql`:
  // use Prepare and Bind.
  absl::Status Exec(absl::string_view sql);

  // Prepares exactly one statement. Errors: INVALID_ARGUMENT for empty SQL or
  // more than one statement; INTERNAL for a syntax error or unknown
  // table/column.
  absl::StatusOr<Statement> Prepare(absl::string_view sql);

  // Like Prepare, but reuses an idle statement prepared earlier from the same
  // text. The returned Statement is reset with all bindings NULL, and returns
  // to the cache when destroyed; two live Statements for the same text are
  // distinct. Meant for constant SQL: the cache keeps one entry per distinct
  // text (up to a fixed bound, beyond which statements are simply not cached).
  // Same errors as Prepare.
  absl::StatusOr<Statement> Cached(absl::string_view sql);

  // The rowid of the last successful INSERT on this connection.
  int64_t LastInsertRowId() const;
  // Rows changed by the last INSERT/UPDATE/DELETE on this connection.
  int64_t Changes() const;
  // Whether an explicit transaction is open (BEGIN without COMMIT/ROLLBACK).
  bool InTransaction() const;

  const std::string& path() const { return path_; }

  // The underlying connection, for SQLite APIs not wrapped here. Never close
  // it.
  sqlite3* handle() const { return db_.get(); }

 private:
  Database(internal::ConnectionHandle db, std::string path);
  absl::StatusOr<internal::StatementHandle> PrepareHandle(absl::string_view sql,
                                                          unsigned int flags);

  // Declared before cache_ so that cached statements are finalised first.
  internal::ConnectionHandle db_;
  std::string path_;
  std::shared_ptr<internal::StatementCache> cache_;
};

}  // namespace sharedos::common::sqlite

#endif  // SHAREDOS_COMMON_SQLITE_DATABASE_H_
