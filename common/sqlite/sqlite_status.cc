#include "common/sqlite/sqlite_status.h"

#include <sqlite3.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::sqlite {
namespace {

absl::string_view PrimaryCodeName(int primary_code) {
  switch (primary_code) {
    case SQLITE_OK:
      return "SQLITE_OK";
    case SQLITE_ERROR:
      return "SQLITE_ERROR";
    case SQLITE_INTERNAL:
      return "SQLITE_INTERNAL";
    case SQLITE_PERM:
      return "SQLITE_PERM";
    case SQLITE_ABORT:
      return "SQLITE_ABORT";
    case SQLITE_BUSY:
      return "SQLITE_BUSY";
    case SQLITE_LOCKED:
      return "SQLITE_LOCKED";
    case SQLITE_NOMEM:
      return "SQLITE_NOMEM";
    case SQLITE_READONLY:
      return "SQLITE_READONLY";
    case SQLITE_INTERRUPT:
      return "SQLITE_INTERRUPT";
    case SQLITE_IOERR:
      return "SQLITE_IOERR";
    case SQLITE_CORRUPT:
      return "SQLITE_CORRUPT";
    case SQLITE_NOTFOUND:
      return "SQLITE_NOTFOUND";
    case SQLITE_FULL:
      return "SQLITE_FULL";
    case SQLITE_CANTOPEN:
      return "SQLITE_CANTOPEN";
    case SQLITE_PROTOCOL:
      return "SQLITE_PROTOCOL";
    case SQLITE_EMPTY:
      return "SQLITE_EMPTY";
    case SQLITE_SCHEMA:
      return "SQLITE_SCHEMA";
    case SQLITE_TOOBIG:
      return "SQLITE_TOOBIG";
    case SQLITE_CONSTRAINT:
      return "SQLITE_CONSTRAINT";
    case SQLITE_MISMATCH:
      return "SQLITE_MISMATCH";
    case SQLITE_MISUSE:
      return "SQLITE_MISUSE";
    case SQLITE_NOLFS:
      return "SQLITE_NOLFS";
    case SQLITE_AUTH:
      return "SQLITE_AUTH";
    case SQLITE_FORMAT:
      return "SQLITE_FORMAT";
    case SQLITE_RANGE:
      return "SQLITE_RANGE";
    case SQLITE_NOTADB:
      return "SQLITE_NOTADB";
    case SQLITE_NOTICE:
      return "SQLITE_NOTICE";
    case SQLITE_WARNING:
      return "SQLITE_WARNING";
    case SQLITE_ROW:
      return "SQLITE_ROW";
    case SQLITE_DONE:
      return "SQLITE_DONE";
    default:
      return "SQLITE_UNKNOWN";
  }
}

}  // namespace

absl::StatusCode SqliteCodeToStatusCode(int sqlite_code) {
  switch (sqlite_code & 0xFF) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return absl::StatusCode::kOk;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CONSTRAINT:
      switch (sqlite_code) {
        case SQLITE_CONSTRAINT_PRIMARYKEY:
        case SQLITE_CONSTRAINT_UNIQUE:
        case SQLITE_CONSTRAINT_ROWID:
          return absl::StatusCode::kAlreadyExists;
        default:
          return absl::StatusCode::kFailedPrecondition;
      }
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status SqliteError(int sqlite_code, absl::string_view context, sqlite3* db) {
  const absl::StatusCode code = SqliteCodeToStatusCode(sqlite_code);
  if (code == absl::StatusCode::kOk) return absl::OkStatus();
  const char* message = (db != nullptr && sqlite3_extended_errcode(db) == sqlite_code)
                            ? sqlite3_errmsg(db)
                            : sqlite3_errstr(sqlite_code);
  return absl::Status(
      code, absl::StrCat(context, ": ", message, " [", PrimaryCodeName(sqlite_code & 0xFF), " ",
                         sqlite_code, "]"));
}

}  // namespace sharedos::common::sqlite
