#include "common/sqlite/database.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::sqlite {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh path under TEST_TMPDIR, named after the running test.
std::string TempDbPath(absl::string_view suffix = "") {
  const char* dir = std::getenv("TEST_TMPDIR");
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/", info->test_suite_name(),
                                        ".", info->name(), suffix, ".db");
  for (const char* extension : {"", "-wal", "-shm", "-journal"}) {
    std::remove(absl::StrCat(path, extension).c_str());
  }
  return path;
}

std::unique_ptr<Database> OpenOrDie(const std::string& path,
                                    const Database::Options& options = {}) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path, options);
  EXPECT_OK(db);
  return db.ok() ? *std::move(db) : nullptr;
}

// Returns column 0 of the first row of `sql` as text.
std::string QueryText(Database& db, absl::string_view sql) {
  absl::StatusOr<Statement> statement = db.Prepare(sql);
  EXPECT_OK(statement);
  if (!statement.ok()) return "<error>";
  const absl::StatusOr<bool> has_row = statement->Step();
  EXPECT_THAT(has_row, IsOkAndHolds(true)) << sql;
  if (!has_row.ok() || !*has_row) return "<no row>";
  return std::string(statement->ColumnText(0));
}

int64_t CountRows(Database& db, absl::string_view table) {
  return std::stoll(QueryText(db, absl::StrCat("SELECT COUNT(*) FROM ", table)));
}

TEST(DatabaseOpenTest, DefaultsEnableWalFullSyncBusyTimeoutAndForeignKeys) {
  const std::string path = TempDbPath();
  std::unique_ptr<Database> db = OpenOrDie(path);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->path(), path);
  EXPECT_EQ(QueryText(*db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryText(*db, "PRAGMA synchronous"), "2");  // FULL
  EXPECT_EQ(QueryText(*db, "PRAGMA busy_timeout"), "5000");
  EXPECT_EQ(QueryText(*db, "PRAGMA foreign_keys"), "1");
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
}

TEST(DatabaseOpenTest, AppliesOptions) {
  Database::Options options;
  options.synchronous = Database::Synchronous::kNormal;
  options.busy_timeout = absl::Milliseconds(250);
  options.foreign_keys = false;
  std::unique_ptr<Database> db = OpenOrDie(TempDbPath(), options);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryText(*db, "PRAGMA synchronous"), "1");
  EXPECT_EQ(QueryText(*db, "PRAGMA busy_timeout"), "250");
  EXPECT_EQ(QueryText(*db, "PRAGMA foreign_keys"), "0");

  options.synchronous = Database::Synchronous::kOff;
  options.wal = false;
  std::unique_ptr<Database> other = OpenOrDie(TempDbPath("-off"), options);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(QueryText(*other, "PRAGMA synchronous"), "0");
  EXPECT_EQ(QueryText(*other, "PRAGMA journal_mode"), "delete");
}

TEST(DatabaseOpenTest, InMemoryDatabasesSkipWal) {
  std::unique_ptr<Database> db = OpenOrDie(":memory:");
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryText(*db, "PRAGMA journal_mode"), "memory");
  EXPECT_OK(db->Exec("CREATE TABLE t (x)"));
}

TEST(DatabaseOpenTest, MissingFileWithoutCreateIsUnavailable) {
  const std::string path = TempDbPath();
  Database::Options options;
  options.create = false;
  EXPECT_THAT(
      Database::Open(path, options),
      StatusIs(absl::StatusCode::kUnavailable, AllOf(HasSubstr(absl::StrCat("open ", path, ": ")),
                                                     HasSubstr("[SQLITE_CANTOPEN 14]"))));
}

TEST(DatabaseOpenTest, UnopenableDirectoryIsUnavailable) {
  EXPECT_THAT(Database::Open(absl::StrCat(TempDbPath(), "/no/such/dir.db")),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST(StatementTest, BindsAndReadsEveryType) {
  std::unique_ptr<Database> db = OpenOrDie(TempDbPath());
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->Exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT, b BLOB, n)"));
  absl::StatusOr<Statement> insert = db->Prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)");
  ASSERT_OK(insert);
  const std::string blob("\x00\xff\x01", 3);
  const std::string text("caf\xc3\xa9\0x", 7);
  ASSERT_OK(insert->BindInt64(1, std::numeric_limits<int64_t>::min()));
  ASSERT_OK(insert->BindDouble(2, 0.1));
  ASSERT_OK(insert->BindText(3, text));
  ASSERT_OK(insert->BindBlob(4, blob));
  ASSERT_OK(insert->BindNull(5));
  EXPECT_THAT(insert->Step(), IsOkAndHolds(false));
  EXPECT_EQ(db->Changes(), 1);
  EXPECT_EQ(db->LastInsertRowId(), 1);

  // Empty text and blobs are values, not NULL.
  ASSERT_OK(insert->Reset());
  ASSERT_OK(insert->BindInt64(1, std::numeric_limits<int64_t>::max()));
  ASSERT_OK(insert->BindText(3, absl::string_view()));
  ASSERT_OK(insert->BindBlob(4, ""));
  EXPECT_THAT(insert->Step(), IsOkAndHolds(false));
  EXPECT_EQ(db->LastInsertRowId(), 2);

  absl::StatusOr<Statement> select =
      db->Prepare("SELECT i, d, s, b, n, typeof(s), typeof(b) FROM t ORDER BY rowid");
  ASSERT_OK(select);
  EXPECT_EQ(select->ColumnCount(), 7);
  ASSERT_THAT(select->Step(), IsOkAndHolds(true));
  EXPECT_EQ(select->ColumnInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(select->ColumnDouble(1), 0.1);
  EXPECT_EQ(select->ColumnText(2), text);
  EXPECT_EQ(select->ColumnBlob(3), blob);
  EXPECT_TRUE(select->ColumnIsNull(4));
  EXPECT_FALSE(select->ColumnIsNull(2));
  ASSERT_THAT(select->Step(), IsOkAndHolds(true));
  EXPECT_EQ(select->ColumnInt64(0), std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(select->ColumnIsNull(1));  // Reset cleared the binding.
  EXPECT_FALSE(select->ColumnIsNull(2));
  EXPECT_EQ(select->ColumnText(2), "");
  EXPECT_FALSE(select->ColumnIsNull(3));
  EXPECT_EQ(select->ColumnBlob(3), "");
  EXPECT_EQ(select->ColumnText(5), "text");
  EXPECT_EQ(select->ColumnText(6), "blob");
  EXPECT_THAT(select->Step(), IsOkAndHolds(false));
}

TEST(StatementTest, StepAfterDoneStartsOver) {
  std::unique_ptr<Database> db = OpenOrDie(":memory:");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<Statement> select = db->Prepare("SELECT 7");
  ASSERT_OK(select);
  EXPECT_EQ(select->sql(), "SELECT 7");
  for (int round = 0; round < 2; ++round) {
    ASSERT_THAT(select->Step(), IsOkAndHolds(true));
    EXPECT_EQ(select->ColumnInt64(0), 7);
    EXPECT_THAT(select->Step(), IsOkAndHolds(false));
  }
}

TEST(StatementTest, ConstraintErrorsMapAndNeverLeakBoundValues) {
  std::unique_ptr<Database> db = OpenOrDie(TempDbPath());
  ASSERT_NE(db, nullptr);
  ASSERT_OK(
      db->Exec("CREATE TABLE grants (id TEXT PRIMARY KEY, secret TEXT UNIQUE NOT NULL, "
               "uses INTEGER CHECK (uses >= 0), parent TEXT REFERENCES grants(id))"));
  absl::StatusOr<Statement> insert = db->Prepare("INSERT INTO grants VALUES (?, ?, ?, ?)");
  ASSERT_OK(insert);
  ASSERT_OK(insert->BindText(1, "g-1"));
  ASSERT_OK(insert->BindText(2, "s3cr3t-token"));
  ASSERT_OK(insert->BindInt64(3, 1));
  ASSERT_THAT(insert->Step(), IsOkAndHolds(false));

  // Same primary key.
  ASSERT_OK(insert->BindText(2, "another-secret"));
  EXPECT_THAT(insert->Step(),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "step `INSERT INTO grants VALUES (?, ?, ?, ?)`: UNIQUE constraint "
                       "failed: grants.id [SQLITE_CONSTRAINT 1555]"));
  // Same unique secret.
  ASSERT_OK(insert->BindText(1, "g-2"));
  ASSERT_OK(insert->BindText(2, "s3cr3t-token"));
  EXPECT_THAT(insert->Step(), StatusIs(absl::StatusCode::kAlreadyExists,
                                       AllOf(HasSubstr("UNIQUE constraint failed: grants.secret"),
                                             Not(HasSubstr("s3cr3t")), Not(HasSubstr("g-2")))));
  // NOT NULL, CHECK and FOREIGN KEY violations.
  ASSERT_OK(insert->BindNull(2));
  EXPECT_THAT(insert->Step(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       HasSubstr("NOT NULL constraint failed: grants.secret "
                                                 "[SQLITE_CONSTRAINT 1299]")));
  ASSERT_OK(insert->BindText(2, "other-secret"));
  ASSERT_OK(insert->BindInt64(3, -5));
  EXPECT_THAT(insert->Step(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("CHECK constraint failed"), Not(HasSubstr("-5")))));
  ASSERT_OK(insert->BindInt64(3, 0));
  ASSERT_OK(insert->BindText(4, "no-such-parent"));
  EXPECT_THAT(insert->Step(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       AllOf(HasSubstr("FOREIGN KEY constraint failed"),
                                             Not(HasSubstr("no-such-parent")))));
  // The statement is usable again after an error.
  ASSERT_OK(insert->BindText(4, "g-1"));
  EXPECT_THAT(insert->Step(), IsOkAndHolds(false));
  EXPECT_EQ(CountRows(*db, "grants"), 2);
}

TEST(StatementTest, BindIndexOutOfRangeIsInternal) {
  std::unique_ptr<Database> db = OpenOrDie(":memory:");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<Statement> select = db->Prepare("SELECT ?");
  ASSERT_OK(select);
  EXPECT_THAT(select->BindInt64(2, 1),
              StatusIs(absl::StatusCode::kInternal,
                       "bind parameter 2 of `SELECT ?`: column index out of "
                       "range [SQLITE_RANGE 25]"));
  EXPECT_THAT(select->BindText(0, "x"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("SQLITE_RANGE")));
}

TEST(DatabasePrepareTest, RejectsBadSql) {
  std::unique_ptr<Database> db = OpenOrDie(":memory:");
  ASSERT_NE(db, nullptr);
  EXPECT_THAT(db->Prepare("SELEC 1"), StatusIs(absl::StatusCode::kInternal,
                                               "prepare `SELEC 1`: near \"SELEC\": syntax error "
                                               "[SQLITE_ERROR 1]"));
  EXPECT_THAT(db->Prepare("SELECT * FROM missing"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("no such table: missing")));
  EXPECT_THAT(db->Prepare("SELECT 1; SELECT 2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "prepare `SELECT 1; SELECT 2`: more than one SQL statement"));
  EXPECT_THAT(db->Prepare("  -- nothing\n"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                      "prepare `-- nothing`: no SQL statement"));
  EXPECT_THAT(db->Prepare("SELECT 1;  "), IsOk());
  EXPECT_THAT(db->Exec("CREATE TABLE a (x); CREATE TABLE b (y)"), IsOk());
  EXPECT_THAT(db->Exec("CREATE TABLE a (x)"),
              StatusIs(absl::StatusCode::kInternal,
                       "exec `CREATE TABLE a (x)`: table a already exists "
                       "[SQLITE_ERROR 1]"));
}

TEST(StatementCacheTest, ReusesTheSamePreparedStatement) {
  std::unique_ptr<Database> db = OpenOrDie(TempDbPath());
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->Exec("CREATE TABLE t (x INTEGER)"));
  constexpr absl::string_view kInsert = "INSERT INTO t VALUES (?)";

  sqlite3_stmt* first_handle = nullptr;
  {
    absl::StatusOr<Statement> insert = db->Cached(kInsert);
    ASSERT_OK(insert);
    first_handle = insert->handle();
    ASSERT_OK(insert->BindInt64(1, 1));
    ASSERT_THAT(insert->Step(), IsOkAndHolds(false));
  }
  {
    absl::StatusOr<Statement> insert = db->Cached(kInsert);
    ASSERT_OK(insert);
    EXPECT_EQ(insert->handle(), first_handle);
    // Bindings were cleared when it went back to the cache.
    ASSERT_THAT(insert->Step(), IsOkAndHolds(false));

    // While checked out, the same SQL yields a distinct statement.
    absl::StatusOr<Statement> second = db->Cached(kInsert);
    ASSERT_OK(second);
    EXPECT_NE(second->handle(), first_handle);
    // A plain Prepare is never shared.
    absl::StatusOr<Statement> prepared = db->Prepare(kInsert);
    ASSERT_OK(prepared);
    EXPECT_NE(prepared->handle(), first_handle);
  }
  EXPECT_EQ(QueryText(*db, "SELECT COUNT(*) || ',' || COUNT(x) FROM t"), "2,1");
}

TEST(StatementCacheTest, ReturnedStatementsAreReset) {
  std::unique_ptr<Database> db = OpenOrDie(":memory:");
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3)"));
  constexpr absl::string_view kSelect = "SELECT x FROM t WHERE x >= ? ORDER BY x";
  {
    absl::StatusOr<Statement> select = db->Cached(kSelect);
    ASSERT_OK(select);
    ASSERT_OK(select->BindInt64(1, 2));
    ASSERT_THAT(select->Step(), IsOkAndHolds(true));
    EXPECT_EQ(select->ColumnInt64(0), 2);
    // Abandoned mid-result.
  }
  absl::StatusOr<Statement> select = db->Cached(kSelect);
  ASSERT_OK(select);
  ASSERT_OK(select->BindInt64(1, 1));
  ASSERT_THAT(select->Step(), IsOkAndHolds(true));
  EXPECT_EQ(select->ColumnInt64(0), 1);
}

TEST(StatementCacheTest, MoveAssignmentReturnsTheOverwrittenStatement) {
  std::unique_ptr<Database> db = OpenOrDie(":memory:");
  ASSERT_NE(db, nullptr);
  absl::StatusOr<Statement> a = db->Cached("SELECT 1");
  absl::StatusOr<Statement> b = db->Cached("SELECT 2");
  ASSERT_OK(a);
  ASSERT_OK(b);
  sqlite3_stmt* const a_handle = a->handle();
  sqlite3_stmt* const b_handle = b->handle();
  *a = *std::move(b);
  EXPECT_EQ(a->handle(), b_handle);
  absl::StatusOr<Statement> again = db->Cached("SELECT 1");
  ASSERT_OK(again);
  EXPECT_EQ(again->handle(), a_handle);
}

TEST(StatementCacheTest, StatementsMayOutliveTheirDatabase) {
  std::unique_ptr<Database> db = OpenOrDie(TempDbPath());
  ASSERT_NE(db, nullptr);
  absl::StatusOr<Statement> cached = db->Cached("SELECT 5");
  absl::StatusOr<Statement> prepared = db->Prepare("SELECT 6");
  ASSERT_OK(cached);
  ASSERT_OK(prepared);
  db.reset();
  // The connection stays alive (as a zombie) until its last statement is
  // finalised.
  ASSERT_THAT(cached->Step(), IsOkAndHolds(true));
  EXPECT_EQ(cached->ColumnInt64(0), 5);
  ASSERT_THAT(prepared->Step(), IsOkAndHolds(true));
  EXPECT_EQ(prepared->ColumnInt64(0), 6);
}

TEST(DatabaseLockTest, WriterContentionIsUnavailable) {
  const std::string path = TempDbPath();
  std::unique_ptr<Database> first = OpenOrDie(path);
  Database::Options impatient;
  impatient.busy_timeout = absl::ZeroDuration();
  std::unique_ptr<Database> second = OpenOrDie(path, impatient);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_OK(first->Exec("CREATE TABLE t (x)"));
  ASSERT_OK(first->Exec("BEGIN IMMEDIATE"));
  EXPECT_TRUE(first->InTransaction());
  EXPECT_THAT(second->Exec("INSERT INTO t VALUES (1)"),
              StatusIs(absl::StatusCode::kUnavailable,
                       "exec `INSERT INTO t VALUES (1)`: database is locked "
                       "[SQLITE_BUSY 5]"));
  // WAL: readers are not blocked by the writer.
  EXPECT_EQ(QueryText(*second, "SELECT COUNT(*) FROM t"), "0");
  ASSERT_OK(first->Exec("COMMIT"));
  EXPECT_FALSE(first->InTransaction());
  EXPECT_OK(second->Exec("INSERT INTO t VALUES (1)"));
}

TEST(DatabaseReadOnlyTest, ReadOnlyConnectionRefusesWritesAsUnavailable) {
  const std::string path = TempDbPath();
  {
    std::unique_ptr<Database> db = OpenOrDie(path);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)"));
  }
  Database::Options options;
  options.read_only = true;
  std::unique_ptr<Database> db = OpenOrDie(path, options);
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryText(*db, "SELECT x FROM t"), "1");
  EXPECT_THAT(
      db->Exec("INSERT INTO t VALUES (2)"),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("attempt to write a readonly database "
                                                         "[SQLITE_READONLY 8]")));
}

TEST(DatabaseReadOnlyTest, ReadOnlyFileRefusesWritesAsUnavailable) {
  const std::string path = TempDbPath();
  {
    Database::Options options;
    options.wal = false;  // A WAL database also needs a writable -shm file.
    std::unique_ptr<Database> db = OpenOrDie(path, options);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Exec("CREATE TABLE t (x)"));
  }
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  if (access(path.c_str(), W_OK) == 0) {
    // The caller (root) ignores file permissions; the read_only option test
    // covers the mapping.
    GTEST_SKIP() << "file permissions are not enforced for this user";
  }
  Database::Options options;
  options.wal = false;
  std::unique_ptr<Database> db = OpenOrDie(path, options);
  ASSERT_NE(db, nullptr);
  EXPECT_THAT(db->Exec("INSERT INTO t VALUES (1)"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("[SQLITE_READONLY 8]")));
}

}  // namespace
}  // namespace sharedos::common::sqlite
