#include "grantstore_svc/storage/open_grant_store.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::grantstore::storage {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A store that opened is usable: its first commit takes revision 1.
absl::StatusOr<int64_t> FirstCommit(GrantStore& store) {
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = store.BeginWrite();
  if (!txn.ok()) return txn.status();
  const int64_t revision = (*txn)->revision();
  absl::Status status = (*txn)->Commit();
  if (!status.ok()) return status;
  return revision;
}

TEST(GrantStoreBackendForTest, PostgresUrisSelectPostgresAndEverythingElseIsAPath) {
  EXPECT_THAT(GrantStoreBackendFor("postgres://db.internal/grants"),
              IsOkAndHolds(GrantStoreBackend::kPostgres));
  EXPECT_THAT(GrantStoreBackendFor("postgresql://u:p@127.0.0.1:5432/grants?sslmode=require"),
              IsOkAndHolds(GrantStoreBackend::kPostgres));
  EXPECT_THAT(GrantStoreBackendFor("/var/lib/sharedos/grants.db"),
              IsOkAndHolds(GrantStoreBackend::kSqlite));
  EXPECT_THAT(GrantStoreBackendFor("grants.db"), IsOkAndHolds(GrantStoreBackend::kSqlite));
  EXPECT_THAT(GrantStoreBackendFor(":memory:"), IsOkAndHolds(GrantStoreBackend::kSqlite));
  EXPECT_THAT(GrantStoreBackendFor(""), IsOkAndHolds(GrantStoreBackend::kSqlite));
  // A path that merely contains "postgres" is still a path.
  EXPECT_THAT(GrantStoreBackendFor("/tmp/postgres/grants.db"),
              IsOkAndHolds(GrantStoreBackend::kSqlite));
}

TEST(GrantStoreBackendForTest, OtherSchemesAreRefused) {
  EXPECT_THAT(GrantStoreBackendFor("mysql://db/grants"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"mysql\"")));
  EXPECT_THAT(GrantStoreBackendFor("Postgres://db/grants"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(OpenGrantStore("sqlite:///tmp/x.db"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(OpenGrantStoreTest, APathOpensSqlite) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/open_grant_store.db");
  absl::StatusOr<std::unique_ptr<GrantStore>> store = OpenGrantStore(path);
  ASSERT_THAT(store, IsOk());
  EXPECT_NE(dynamic_cast<SqliteGrantStore*>(store->get()), nullptr);
  EXPECT_THAT(FirstCommit(**store), IsOkAndHolds(1));

  absl::StatusOr<std::unique_ptr<GrantStore>> memory = OpenGrantStore(":memory:");
  ASSERT_THAT(memory, IsOk());
  EXPECT_NE(dynamic_cast<SqliteGrantStore*>(memory->get()), nullptr);
}

TEST(OpenGrantStoreTest, APostgresUriOpensPostgres) {
  absl::StatusOr<std::string> uri = ::sharedos::testing::FreshDatabase();
  ASSERT_THAT(uri, IsOk());
  absl::StatusOr<std::unique_ptr<GrantStore>> store = OpenGrantStore(*uri);
  ASSERT_THAT(store, IsOk());
  EXPECT_NE(dynamic_cast<PostgresGrantStore*>(store->get()), nullptr);
  EXPECT_THAT(FirstCommit(**store), IsOkAndHolds(1));
}

TEST(OpenGrantStoreTest, BackendOptionsApplyAndTheUriIsNotRepeated) {
  // Nothing listens on port 1: the PostgreSQL backend was chosen (libpq's refusal) and the
  // password is not in the message.
  GrantStoreOptions options;
  options.postgres.connect_timeout = absl::Seconds(2);
  absl::StatusOr<std::unique_ptr<GrantStore>> store =
      OpenGrantStore("postgresql://sharedos:hunter2@127.0.0.1:1/grants", options);
  EXPECT_THAT(store, StatusIs(absl::StatusCode::kUnavailable,
                              AllOf(HasSubstr("127.0.0.1"), Not(HasSubstr("hunter2")))));
  options.postgres.max_connections = 0;
  EXPECT_THAT(OpenGrantStore("postgresql://127.0.0.1:1/grants", options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_connections")));
}

}  // namespace
}  // namespace sharedos::grantstore::storage
