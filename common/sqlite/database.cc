#include "common/sqlite/database.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/sqlite/sqlite_status.h"
#include "common/status/status_macros.h"

namespace sharedos::common::sqlite {
namespace internal {

void ConnectionDeleter::operator()(sqlite3* db) const {
  // close_v2 defers the close while statements remain, so it cannot fail with
  // BUSY.
  sqlite3_close_v2(db);
}

void StatementDeleter::operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }

}  // namespace internal

namespace {

// Idle statements kept per SQL text, and distinct texts kept per Database.
constexpr size_t kMaxIdlePerSql = 4;
constexpr size_t kMaxCachedSql = 512;
// SQL quoted in error messages is cut here (it is code, never bound values).
constexpr size_t kMaxQuotedSql = 160;

std::string QuoteSql(absl::string_view sql) {
  sql = absl::StripAsciiWhitespace(sql);
  if (sql.size() <= kMaxQuotedSql) return absl::StrCat("`", sql, "`");
  return absl::StrCat("`", sql.substr(0, kMaxQuotedSql), "...`");
}

// Text and blobs with a null data pointer would bind NULL; empty values need a
// real pointer.
const char* NonNullData(absl::string_view value) {
  return value.data() != nullptr ? value.data() : "";
}

}  // namespace

// -----------------------------------------------------------------------------
// Statement

Statement::Statement(internal::StatementHandle stmt, internal::StatementCache::Entry* cache_entry,
                     std::weak_ptr<internal::StatementCache> cache)
    : stmt_(std::move(stmt)), cache_entry_(cache_entry), cache_(std::move(cache)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    ReturnToCache();
    stmt_ = std::move(other.stmt_);
    cache_entry_ = other.cache_entry_;
    cache_ = std::move(other.cache_);
    other.cache_entry_ = nullptr;
  }
  return *this;
}

Statement::~Statement() { ReturnToCache(); }

void Statement::ReturnToCache() {
  if (stmt_ == nullptr || cache_entry_ == nullptr) return;
  // The cache is alive as long as its Database; otherwise stmt_ is finalised
  // below.
  const std::shared_ptr<internal::StatementCache> cache = cache_.lock();
  if (cache != nullptr && cache_entry_->idle.size() < kMaxIdlePerSql) {
    sqlite3_reset(stmt_.get());
    sqlite3_clear_bindings(stmt_.get());
    cache_entry_->idle.push_back(std::move(stmt_));
  }
  stmt_.reset();
  cache_entry_ = nullptr;
}

absl::Status Statement::Error(int sqlite_code, absl::string_view operation) const {
  return SqliteError(sqlite_code, absl::StrCat(operation, " ", QuoteSql(sql())),
                     sqlite3_db_handle(stmt_.get()));
}

absl::Status Statement::BindInt64(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_.get(), index, value);
  if (rc != SQLITE_OK) return Error(rc, absl::StrCat("bind parameter ", index, " of"));
  return absl::OkStatus();
}

absl::Status Statement::BindDouble(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_.get(), index, value);
  if (rc != SQLITE_OK) return Error(rc, absl::StrCat("bind parameter ", index, " of"));
  return absl::OkStatus();
}

absl::Status Statement::BindText(int index, absl::string_view value) {
  const int rc = sqlite3_bind_text64(stmt_.get(), index, NonNullData(value), value.size(),
                                     SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK) return Error(rc, absl::StrCat("bind parameter ", index, " of"));
  return absl::OkStatus();
}

absl::Status Statement::BindBlob(int index, absl::string_view bytes) {
  const int rc =
      sqlite3_bind_blob64(stmt_.get(), index, NonNullData(bytes), bytes.size(), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) return Error(rc, absl::StrCat("bind parameter ", index, " of"));
  return absl::OkStatus();
}

absl::Status Statement::BindNull(int index) {
  const int rc = sqlite3_bind_null(stmt_.get(), index);
  if (rc != SQLITE_OK) return Error(rc, absl::StrCat("bind parameter ", index, " of"));
  return absl::OkStatus();
}

absl::StatusOr<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    sqlite3_reset(stmt_.get());  // Ready to re-bind and run again.
    return false;
  }
  absl::Status error = Error(rc, "step");  // Before reset replaces the message.
  sqlite3_reset(stmt_.get());
  return error;
}

absl::Status Statement::Reset() {
  // sqlite3_reset repeats the error of the last Step; that was reported
  // already.
  sqlite3_reset(stmt_.get());
  const int rc = sqlite3_clear_bindings(stmt_.get());
  if (rc != SQLITE_OK) return Error(rc, "clear bindings of");
  return absl::OkStatus();
}

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_.get()); }

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_.get(), column);
}

double Statement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_.get(), column);
}

absl::string_view Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), column);
  if (text == nullptr) return absl::string_view();
  // sqlite3_column_bytes must follow sqlite3_column_text (it measures the
  // conversion).
  return absl::string_view(reinterpret_cast<const char*>(text),
                           sqlite3_column_bytes(stmt_.get(), column));
}

absl::string_view Statement::ColumnBlob(int column) const {
  const void* blob = sqlite3_column_blob(stmt_.get(), column);
  if (blob == nullptr) return absl::string_view();
  return absl::string_view(static_cast<const char*>(blob),
                           sqlite3_column_bytes(stmt_.get(), column));
}

absl::string_view Statement::sql() const {
  const char* text = sqlite3_sql(stmt_.get());
  return text == nullptr ? absl::string_view() : absl::string_view(text);
}

// -----------------------------------------------------------------------------
// Database

Database::Database(internal::ConnectionHandle db, std::string path)
    : db_(std::move(db)),
      path_(std::move(path)),
      cache_(std::make_shared<internal::StatementCache>()) {}

Database::~Database() = default;

absl::StatusOr<std::unique_ptr<Database>> Database::Open(absl::string_view path) {
  return Open(path, Options());
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(absl::string_view path,
                                                         const Options& options) {
  const std::string path_string(path);
  int flags = SQLITE_OPEN_NOMUTEX;  // Callers serialise access (see class comment).
  if (options.read_only) {
    flags |= SQLITE_OPEN_READONLY;
  } else {
    flags |= SQLITE_OPEN_READWRITE;
    if (options.create) flags |= SQLITE_OPEN_CREATE;
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path_string.c_str(), &raw, flags, nullptr);
  // Even a failed open may allocate a handle, which must be closed.
  internal::ConnectionHandle db(raw);
  if (rc != SQLITE_OK) {
    return SqliteError(rc, absl::StrCat("open ", path_string), db.get());
  }
  sqlite3_extended_result_codes(db.get(), 1);

  std::unique_ptr<Database> database(new Database(std::move(db), path_string));
  const int64_t timeout_ms =
      std::min<int64_t>(std::max<int64_t>(absl::ToInt64Milliseconds(options.busy_timeout), 0),
                        std::numeric_limits<int>::max());
  sqlite3_busy_timeout(database->handle(), static_cast<int>(timeout_ms));

  const char* synchronous = "FULL";
  switch (options.synchronous) {
    case Synchronous::kOff:
      synchronous = "OFF";
      break;
    case Synchronous::kNormal:
      synchronous = "NORMAL";
      break;
    case Synchronous::kFull:
      synchronous = "FULL";
      break;
  }
  RETURN_IF_ERROR(
      database->Exec(absl::StrCat("PRAGMA synchronous=", synchronous,
                                  "; PRAGMA foreign_keys=", options.foreign_keys ? "ON" : "OFF")));

  // In-memory and temporary databases have no file name (and no WAL).
  const char* filename = sqlite3_db_filename(database->handle(), "main");
  const bool in_memory = filename == nullptr || *filename == '\0';
  if (options.wal && !options.read_only && !in_memory) {
    ASSIGN_OR_RETURN(Statement pragma, database->Prepare("PRAGMA journal_mode=WAL"));
    ASSIGN_OR_RETURN(const bool has_row, pragma.Step());
    const std::string mode = has_row ? absl::AsciiStrToLower(pragma.ColumnText(0)) : "";
    if (mode != "wal") {
      return absl::InternalError(absl::StrCat(
          "open ", path_string, ": could not enable WAL (journal_mode is \"", mode, "\")"));
    }
  }
  return database;
}

absl::Status Database::Exec(absl::string_view sql) {
  const std::string sql_string(sql);  // sqlite3_exec needs NUL-terminated text.
  char* raw_message = nullptr;
  const int rc = sqlite3_exec(db_.get(), sql_string.c_str(), nullptr, nullptr, &raw_message);
  // The message is also available from sqlite3_errmsg; free sqlite's copy.
  sqlite3_free(raw_message);
  if (rc != SQLITE_OK) {
    return SqliteError(rc, absl::StrCat("exec ", QuoteSql(sql)), db_.get());
  }
  return absl::OkStatus();
}

absl::StatusOr<internal::StatementHandle> Database::PrepareHandle(absl::string_view sql,
                                                                  unsigned int flags) {
  if (sql.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError("SQL text too long");
  }
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  const int rc =
      sqlite3_prepare_v3(db_.get(), sql.data(), static_cast<int>(sql.size()), flags, &raw, &tail);
  internal::StatementHandle stmt(raw);
  if (rc != SQLITE_OK) {
    return SqliteError(rc, absl::StrCat("prepare ", QuoteSql(sql)), db_.get());
  }
  if (stmt == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("prepare ", QuoteSql(sql), ": no SQL statement"));
  }
  const absl::string_view rest(tail, static_cast<size_t>(sql.data() + sql.size() - tail));
  if (!absl::StripAsciiWhitespace(rest).empty() && absl::StripAsciiWhitespace(rest) != ";") {
    return absl::InvalidArgumentError(
        absl::StrCat("prepare ", QuoteSql(sql), ": more than one SQL statement"));
  }
  return stmt;
}

absl::StatusOr<Statement> Database::Prepare(absl::string_view sql) {
  ASSIGN_OR_RETURN(internal::StatementHandle stmt, PrepareHandle(sql, 0));
  return Statement(std::move(stmt), nullptr, {});
}

absl::StatusOr<Statement> Database::Cached(absl::string_view sql) {
  auto it = cache_->entries.find(sql);
  if (it != cache_->entries.end() && !it->second->idle.empty()) {
    internal::StatementCache::Entry* entry = it->second.get();
    internal::StatementHandle stmt = std::move(entry->idle.back());
    entry->idle.pop_back();
    return Statement(std::move(stmt), entry, cache_);
  }
  ASSIGN_OR_RETURN(internal::StatementHandle stmt, PrepareHandle(sql, SQLITE_PREPARE_PERSISTENT));
  if (it == cache_->entries.end()) {
    if (cache_->entries.size() >= kMaxCachedSql) {
      return Statement(std::move(stmt), nullptr, {});  // Not cached.
    }
    it = cache_->entries
             .emplace(std::string(sql), std::make_unique<internal::StatementCache::Entry>())
             .first;
  }
  return Statement(std::move(stmt), it->second.get(), cache_);
}

int64_t Database::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_.get()); }

int64_t Database::Changes() const { return sqlite3_changes64(db_.get()); }

bool Database::InTransaction() const { return sqlite3_get_autocommit(db_.get()) == 0; }

}  // namespace sharedos::common::sqlite
