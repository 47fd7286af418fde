#include "audit_svc/storage/open_audit_store.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "audit_svc/storage/audit_store_conformance.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::audit::storage {
namespace testing {
// Only the suite's event helpers are used here; the suite itself runs in each backend's test.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AuditStoreConformanceTest);
}  // namespace testing

namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(AuditStoreBackendForTest, PostgresUrisSelectPostgresAndEverythingElseIsAFile) {
  EXPECT_THAT(AuditStoreBackendFor("postgres://h/db"), IsOkAndHolds(AuditStoreBackend::kPostgres));
  EXPECT_THAT(AuditStoreBackendFor("postgresql://h/db"),
              IsOkAndHolds(AuditStoreBackend::kPostgres));
  EXPECT_THAT(AuditStoreBackendFor("audit.db"), IsOkAndHolds(AuditStoreBackend::kSqlite));
  EXPECT_THAT(AuditStoreBackendFor("sqlite://audit.db"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"sqlite\"")));
}

// The same events through either backend: the same chain (hashes cover the events alone).
TEST(OpenAuditStoreTest, APathOpensSqliteAndAUriPostgresWithTheSameChain) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/open.db";
  absl::StatusOr<std::string> uri = ::sharedos::testing::FreshSchema();
  ASSERT_THAT(uri, IsOk());
  std::string heads[2];
  int i = 0;
  for (const std::string& db : {path, *uri}) {
    absl::StatusOr<std::unique_ptr<AuditStore>> store = OpenAuditStore(db);
    ASSERT_THAT(store, IsOk());
    testing::Batch batch;
    batch.Add(testing::MakeEvent("e1"));
    batch.Add(testing::MakeEvent("e2"));
    auto result = (*store)->Append({batch.pending}, absl::FromUnixSeconds(1));
    ASSERT_THAT(result, IsOk());
    EXPECT_EQ(result->head.sequence, 2);
    heads[i++] = result->head.hash;
  }
  EXPECT_EQ(heads[0], heads[1]);
  EXPECT_NE(dynamic_cast<SqliteAuditStore*>(OpenAuditStore(path)->get()), nullptr);
  EXPECT_NE(dynamic_cast<PostgresAuditStore*>(OpenAuditStore(*uri)->get()), nullptr);
}

TEST(OpenAuditStoreTest, AnUnreachableDatabaseIsUnavailableWithoutRepeatingTheUri) {
  AuditStoreOptions options;
  options.postgres.connect_timeout = absl::Seconds(2);
  // Port 1 on loopback: refused at once.
  EXPECT_THAT(OpenAuditStore("postgresql://auditor:hunter2@127.0.0.1:1/audit", options),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("127.0.0.1"), Not(HasSubstr("hunter2")))));
}

}  // namespace
}  // namespace sharedos::audit::storage
