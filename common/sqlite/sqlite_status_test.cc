#include "common/sqlite/sqlite_status.h"

#include <sqlite3.h>

#include "absl/status/status.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::sqlite {
namespace {

struct Mapping {
  int sqlite_code;
  absl::StatusCode expected;
};

TEST(SqliteCodeToStatusCodeTest, MapsEveryDocumentedCode) {
  const Mapping mappings[] = {
      {SQLITE_OK, absl::StatusCode::kOk},
      {SQLITE_ROW, absl::StatusCode::kOk},
      {SQLITE_DONE, absl::StatusCode::kOk},
      {SQLITE_BUSY, absl::StatusCode::kUnavailable},
      {SQLITE_BUSY_SNAPSHOT, absl::StatusCode::kUnavailable},
      {SQLITE_LOCKED, absl::StatusCode::kUnavailable},
      {SQLITE_LOCKED_SHAREDCACHE, absl::StatusCode::kUnavailable},
      {SQLITE_FULL, absl::StatusCode::kUnavailable},
      {SQLITE_IOERR, absl::StatusCode::kUnavailable},
      {SQLITE_IOERR_FSYNC, absl::StatusCode::kUnavailable},
      {SQLITE_READONLY, absl::StatusCode::kUnavailable},
      {SQLITE_READONLY_DBMOVED, absl::StatusCode::kUnavailable},
      {SQLITE_CANTOPEN, absl::StatusCode::kUnavailable},
      {SQLITE_CONSTRAINT_PRIMARYKEY, absl::StatusCode::kAlreadyExists},
      {SQLITE_CONSTRAINT_UNIQUE, absl::StatusCode::kAlreadyExists},
      {SQLITE_CONSTRAINT_ROWID, absl::StatusCode::kAlreadyExists},
      {SQLITE_CONSTRAINT, absl::StatusCode::kFailedPrecondition},
      {SQLITE_CONSTRAINT_NOTNULL, absl::StatusCode::kFailedPrecondition},
      {SQLITE_CONSTRAINT_CHECK, absl::StatusCode::kFailedPrecondition},
      {SQLITE_CONSTRAINT_FOREIGNKEY, absl::StatusCode::kFailedPrecondition},
      {SQLITE_CONSTRAINT_TRIGGER, absl::StatusCode::kFailedPrecondition},
      {SQLITE_CONSTRAINT_DATATYPE, absl::StatusCode::kFailedPrecondition},
      {SQLITE_ERROR, absl::StatusCode::kInternal},
      {SQLITE_CORRUPT, absl::StatusCode::kInternal},
      {SQLITE_MISUSE, absl::StatusCode::kInternal},
      {SQLITE_RANGE, absl::StatusCode::kInternal},
      {SQLITE_NOMEM, absl::StatusCode::kInternal},
      {SQLITE_NOTADB, absl::StatusCode::kInternal},
  };
  for (const Mapping& mapping : mappings) {
    EXPECT_EQ(SqliteCodeToStatusCode(mapping.sqlite_code), mapping.expected) << mapping.sqlite_code;
  }
}

TEST(SqliteErrorTest, UsesTheGenericTextWithoutAConnection) {
  EXPECT_THAT(
      SqliteError(SQLITE_BUSY, "step `BEGIN`"),
      StatusIs(absl::StatusCode::kUnavailable, "step `BEGIN`: database is locked [SQLITE_BUSY 5]"));
  EXPECT_THAT(SqliteError(SQLITE_CONSTRAINT_UNIQUE, "insert"),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "insert: constraint failed [SQLITE_CONSTRAINT 2067]"));
  EXPECT_THAT(SqliteError(SQLITE_DONE, "step"), IsOk());
}

}  // namespace
}  // namespace sharedos::common::sqlite
