#include "common/postgres/migrations.h"

#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/postgres/connection.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_fixture.h"

namespace sharedos::common::postgres {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr char kHistory[] = "test_schema_migrations";

const std::vector<Migration>& V1V2() {
  static const auto* const migrations = new std::vector<Migration>{
      {1,
       "CREATE TABLE grants (id TEXT PRIMARY KEY); CREATE TABLE log (entry TEXT);"
       "INSERT INTO log VALUES ('v1')"},
      {2, "ALTER TABLE grants ADD COLUMN revoked_at TEXT; INSERT INTO log VALUES ('v2')"},
  };
  return *migrations;
}

class MigrationsTest : public ::sharedos::testing::PostgresConnectionTest {
 protected:
  MigrationsTest()
      : clock_(absl::FromCivil(absl::CivilSecond(2024, 5, 1, 12, 0, 0), absl::UTCTimeZone()),
               absl::Seconds(1)) {}

  std::vector<std::pair<int64_t, std::string>> Recorded() {
    std::vector<std::pair<int64_t, std::string>> rows;
    absl::StatusOr<Result> result = conn_->Exec(
        absl::StrCat("SELECT version::bigint, applied_at FROM ", kHistory, " ORDER BY version"));
    EXPECT_THAT(result, IsOk());
    if (!result.ok()) return rows;
    for (int row = 0; row < result->rows(); ++row) {
      rows.emplace_back(result->Int64(row, 0), std::string(result->Bytes(row, 1)));
    }
    return rows;
  }

  std::vector<std::string> Log() {
    std::vector<std::string> entries;
    absl::StatusOr<Result> result = conn_->Exec("SELECT entry FROM log ORDER BY entry");
    EXPECT_THAT(result, IsOk());
    if (!result.ok()) return entries;
    for (int row = 0; row < result->rows(); ++row) {
      entries.emplace_back(result->Bytes(row, 0));
    }
    return entries;
  }

  SimulatedClock clock_;
};

TEST_F(MigrationsTest, AppliesEveryStepInOrderOnceWithItsTime) {
  EXPECT_THAT(SchemaVersion(*conn_, kHistory), IsOkAndHolds(0));
  ASSERT_THAT(Migrate(*conn_, kHistory, V1V2(), clock_), IsOk());
  EXPECT_THAT(Recorded(),
              ElementsAre(Pair(1, "2024-05-01T12:00:00Z"), Pair(2, "2024-05-01T12:00:01Z")));
  EXPECT_THAT(SchemaVersion(*conn_, kHistory), IsOkAndHolds(2));
  // Idempotent.
  ASSERT_THAT(Migrate(*conn_, kHistory, V1V2(), clock_), IsOk());
  EXPECT_THAT(Log(), ElementsAre("v1", "v2"));
  EXPECT_EQ(Recorded().size(), 2u);
}

TEST_F(MigrationsTest, ANewerSchemaIsRefusedNamingBothVersions) {
  ASSERT_THAT(Migrate(*conn_, kHistory, V1V2(), clock_), IsOk());
  const std::vector<Migration> only_v1 = {V1V2()[0]};
  EXPECT_THAT(Migrate(*conn_, kHistory, only_v1, clock_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("schema version 2"), HasSubstr("knows (1)"))));
}

TEST_F(MigrationsTest, AHistoryThatDoesNotMatchIsRefused) {
  const std::vector<Migration> v1_v3 = {V1V2()[0], {3, "SELECT 1"}};
  ASSERT_THAT(Migrate(*conn_, kHistory, {V1V2()[0]}, clock_), IsOk());
  ASSERT_THAT(conn_->ExecScript(absl::StrCat("INSERT INTO ", kHistory, " VALUES (2, 'x')")),
              IsOk());
  EXPECT_THAT(Migrate(*conn_, kHistory, v1_v3, clock_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("records version 2 where version 3 was expected")));
}

TEST_F(MigrationsTest, AFailedStepLeavesNoTraceAndKeepsEarlierSteps) {
  const std::vector<Migration> broken = {
      V1V2()[0], {2, "INSERT INTO log VALUES ('half'); SELECT * FROM no_such_table"}};
  EXPECT_THAT(Migrate(*conn_, kHistory, broken, clock_),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("schema migration 2: ")));
  EXPECT_THAT(Recorded(), ElementsAre(Pair(1, "2024-05-01T12:00:00Z")));
  EXPECT_THAT(Log(), ElementsAre("v1"));
  ASSERT_THAT(Migrate(*conn_, kHistory, V1V2(), clock_), IsOk());
  EXPECT_THAT(Log(), ElementsAre("v1", "v2"));
}

TEST_F(MigrationsTest, MalformedInputsAreRejected) {
  const std::vector<Migration> unordered = {{2, "SELECT 1"}, {1, "SELECT 1"}};
  EXPECT_THAT(Migrate(*conn_, kHistory, unordered, clock_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("strictly increasing")));
  EXPECT_THAT(Migrate(*conn_, "bad; DROP TABLE x", V1V2(), clock_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("identifier")));
  EXPECT_THAT(SchemaVersion(*conn_, "Upper"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(MigrationsTest, HistoryTablesAreIndependent) {
  ASSERT_THAT(Migrate(*conn_, kHistory, {V1V2()[0]}, clock_), IsOk());
  const std::vector<Migration> other = {{1, "CREATE TABLE other_store (id TEXT)"}};
  ASSERT_THAT(Migrate(*conn_, "other_schema_migrations", other, clock_), IsOk());
  EXPECT_THAT(SchemaVersion(*conn_, kHistory), IsOkAndHolds(1));
  EXPECT_THAT(SchemaVersion(*conn_, "other_schema_migrations"), IsOkAndHolds(1));
}

TEST_F(MigrationsTest, ConcurrentMigratorsApplyEachStepOnce) {
  constexpr int kMigrators = 6;
  std::vector<absl::Status> results(kMigrators);
  std::vector<std::thread> threads;
  for (int i = 0; i < kMigrators; ++i) {
    threads.emplace_back([&, i] {
      absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open(uri_);
      results[i] = conn.ok() ? Migrate(**conn, kHistory, V1V2(), RealClock()) : conn.status();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& status : results) EXPECT_THAT(status, IsOk());
  EXPECT_THAT(Log(), ElementsAre("v1", "v2"));
  EXPECT_EQ(Recorded().size(), 2u);
}

}  // namespace
}  // namespace sharedos::common::postgres
