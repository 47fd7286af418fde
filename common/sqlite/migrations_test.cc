#include "common/sqlite/migrations.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/sqlite/database.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::sqlite {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

const std::vector<Migration>& V1V2() {
  static const auto* const migrations = new std::vector<Migration>{
      {1,
       "CREATE TABLE grants (id TEXT PRIMARY KEY);"
       "CREATE TABLE log (entry TEXT); INSERT INTO log VALUES ('v1')"},
      {2,
       "ALTER TABLE grants ADD COLUMN revoked_at TEXT;"
       "INSERT INTO log VALUES ('v2')"},
  };
  return *migrations;
}

class MigrationsTest : public ::testing::Test {
 protected:
  MigrationsTest()
      : clock_(absl::FromCivil(absl::CivilSecond(2024, 5, 1, 12, 0, 0), absl::UTCTimeZone()),
               absl::Seconds(1)) {}

  void SetUp() override {
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ = absl::StrCat(dir != nullptr ? dir : "/tmp", "/",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
    for (const char* extension : {"", "-wal", "-shm"}) {
      std::remove(absl::StrCat(path_, extension).c_str());
    }
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path_);
    ASSERT_OK(db);
    db_ = *std::move(db);
  }

  // (version, applied_at) rows of schema_migrations.
  std::vector<std::pair<int64_t, std::string>> Recorded() {
    std::vector<std::pair<int64_t, std::string>> rows;
    absl::StatusOr<Statement> query =
        db_->Prepare("SELECT version, applied_at FROM schema_migrations ORDER BY version");
    EXPECT_OK(query);
    while (query.ok()) {
      absl::StatusOr<bool> has_row = query->Step();
      EXPECT_OK(has_row);
      if (!has_row.ok() || !*has_row) break;
      rows.emplace_back(query->ColumnInt64(0), std::string(query->ColumnText(1)));
    }
    return rows;
  }

  std::vector<std::string> Log() {
    std::vector<std::string> entries;
    absl::StatusOr<Statement> query = db_->Prepare("SELECT entry FROM log ORDER BY rowid");
    EXPECT_OK(query);
    while (query.ok()) {
      absl::StatusOr<bool> has_row = query->Step();
      EXPECT_OK(has_row);
      if (!has_row.ok() || !*has_row) break;
      entries.emplace_back(query->ColumnText(0));
    }
    return entries;
  }

  SimulatedClock clock_;
  std::string path_;
  std::unique_ptr<Database> db_;
};

TEST_F(MigrationsTest, FreshDatabaseHasVersionZero) {
  EXPECT_THAT(SchemaVersion(*db_), IsOkAndHolds(0));
}

TEST_F(MigrationsTest, AppliesAllInOrderAndRecordsThem) {
  ASSERT_OK(Migrate(*db_, V1V2(), clock_));
  EXPECT_THAT(SchemaVersion(*db_), IsOkAndHolds(2));
  EXPECT_THAT(Recorded(),
              ElementsAre(Pair(1, "2024-05-01T12:00:00Z"), Pair(2, "2024-05-01T12:00:01Z")));
  EXPECT_THAT(Log(), ElementsAre("v1", "v2"));
  EXPECT_OK(db_->Exec("INSERT INTO grants (id, revoked_at) VALUES ('g', NULL)"));
}

TEST_F(MigrationsTest, IsIdempotent) {
  ASSERT_OK(Migrate(*db_, V1V2(), clock_));
  ASSERT_OK(Migrate(*db_, V1V2(), clock_));
  // Through a fresh connection as well.
  absl::StatusOr<std::unique_ptr<Database>> reopened = Database::Open(path_);
  ASSERT_OK(reopened);
  ASSERT_OK(Migrate(**reopened, V1V2(), clock_));
  EXPECT_THAT(Log(), ElementsAre("v1", "v2"));
  EXPECT_THAT(Recorded(),
              ElementsAre(Pair(1, "2024-05-01T12:00:00Z"), Pair(2, "2024-05-01T12:00:01Z")));
}

TEST_F(MigrationsTest, AppliesOnlyTheMissingOnes) {
  ASSERT_OK(Migrate(*db_, {V1V2()[0]}, clock_));
  EXPECT_THAT(SchemaVersion(*db_), IsOkAndHolds(1));
  clock_.SetTime(absl::FromUnixSeconds(0));
  ASSERT_OK(Migrate(*db_, V1V2(), clock_));
  EXPECT_THAT(Recorded(),
              ElementsAre(Pair(1, "2024-05-01T12:00:00Z"), Pair(2, "1970-01-01T00:00:00Z")));
  EXPECT_THAT(Log(), ElementsAre("v1", "v2"));
}

TEST_F(MigrationsTest, RefusesANewerSchema) {
  std::vector<Migration> newer = V1V2();
  newer.push_back({3, "INSERT INTO log VALUES ('v3')"});
  ASSERT_OK(Migrate(*db_, newer, clock_));
  EXPECT_THAT(Migrate(*db_, V1V2(), clock_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       "database schema version 3 is newer than the latest "
                       "version this binary knows (2); refusing to use it"));
  EXPECT_THAT(Migrate(*db_, {}, clock_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("newer than the latest version this binary "
                                 "knows (0)")));
  EXPECT_THAT(Log(), ElementsAre("v1", "v2", "v3"));
}

TEST_F(MigrationsTest, RefusesAHistoryThatDoesNotMatch) {
  ASSERT_OK(Migrate(*db_, {V1V2()[0], {3, "INSERT INTO log VALUES ('v3')"}}, clock_));
  EXPECT_THAT(Migrate(*db_, {V1V2()[0], V1V2()[1], {3, "INSERT INTO log VALUES ('v3')"}}, clock_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("database schema records version 3 where "
                                 "version 2 was expected")));
}

TEST_F(MigrationsTest, AFailedMigrationLeavesNoTrace) {
  const std::vector<Migration> broken = {
      V1V2()[0],
      {2, "INSERT INTO log VALUES ('partial'); CREATE TABLE grants (x)"},
  };
  EXPECT_THAT(Migrate(*db_, broken, clock_),
              StatusIs(absl::StatusCode::kInternal,
                       HasSubstr("schema migration 2: exec `INSERT INTO log "
                                 "VALUES ('partial'); CREATE TABLE grants (x)`: "
                                 "table grants already exists")));
  EXPECT_FALSE(db_->InTransaction());
  EXPECT_THAT(SchemaVersion(*db_), IsOkAndHolds(1));
  EXPECT_THAT(Log(), ElementsAre("v1"));
  // The fixed migration then applies.
  ASSERT_OK(Migrate(*db_, V1V2(), clock_));
  EXPECT_THAT(Log(), ElementsAre("v1", "v2"));
}

TEST_F(MigrationsTest, RejectsMalformedMigrationLists) {
  EXPECT_THAT(Migrate(*db_, {{2, "SELECT 1"}, {1, "SELECT 1"}}, clock_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "migration versions must be positive and strictly "
                       "increasing; got 1 after 2"));
  EXPECT_THAT(Migrate(*db_, {{1, "SELECT 1"}, {1, "SELECT 1"}}, clock_),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(Migrate(*db_, {{0, "SELECT 1"}}, clock_),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(SchemaVersion(*db_), IsOkAndHolds(0));
}

TEST_F(MigrationsTest, ReadOnlyDatabaseCannotMigrate) {
  Database::Options options;
  options.read_only = true;
  absl::StatusOr<std::unique_ptr<Database>> read_only = Database::Open(path_, options);
  ASSERT_OK(read_only);
  EXPECT_THAT(
      Migrate(**read_only, V1V2(), clock_),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("attempt to write a readonly database")));
}

}  // namespace
}  // namespace sharedos::common::sqlite
