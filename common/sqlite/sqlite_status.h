// The mapping from SQLite result codes to absl::Status, shared by every
// SQLite user:
//
//   SQLITE_BUSY, SQLITE_LOCKED             -> UNAVAILABLE (retry later)
//   SQLITE_FULL, SQLITE_IOERR,
//   SQLITE_READONLY, SQLITE_CANTOPEN       -> UNAVAILABLE (storage unusable)
//   SQLITE_CONSTRAINT_PRIMARYKEY,
//   SQLITE_CONSTRAINT_UNIQUE,
//   SQLITE_CONSTRAINT_ROWID                -> ALREADY_EXISTS (duplicate key)
//   any other SQLITE_CONSTRAINT (NOT NULL,
//   CHECK, FOREIGN KEY, trigger, datatype) -> FAILED_PRECONDITION
//   everything else                        -> INTERNAL
//
// Messages carry SQLite's error text and code, never bound parameter values
// (SQLite's messages name columns and constraints, not values).

#ifndef SHAREDOS_COMMON_SQLITE_SQLITE_STATUS_H_
#define SHAREDOS_COMMON_SQLITE_SQLITE_STATUS_H_

#include <sqlite3.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::sqlite {

// Returns the canonical code for a SQLite result code (primary or extended).
// SQLITE_OK, SQLITE_ROW and SQLITE_DONE map to kOk.
absl::StatusCode SqliteCodeToStatusCode(int sqlite_code);

// Returns the error for a failed SQLite call: "<context>: <message>
// [SQLITE_<NAME> <extended code>]". The message is the connection's
// sqlite3_errmsg when `db` is non-null and still holds this error, else the
// generic sqlite3_errstr text. Returns OK for SQLITE_OK/ROW/DONE.
absl::Status SqliteError(int sqlite_code, absl::string_view context, sqlite3* db = nullptr);

}  // namespace sharedos::common::sqlite

#endif  // SHAREDOS_COMMON_SQLITE_SQLITE_STATUS_H_
