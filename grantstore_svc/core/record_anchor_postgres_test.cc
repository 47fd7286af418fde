// The anchor check on PostgreSQL (docs/adr/0021), with real processes: a replica killed (SIGKILL)
// between its change's records and its commit is a crash, not a restore — the store serves,
// naming the uncommitted revision; an older copy of the database restored with pg_dump and
// pg_restore is behind and serves nothing, even when the copy was taken while a change held its
// announced revision.

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grantstore_svc/core/fake_control_plane_log.h"
#include "grantstore_svc/core/record_anchor.h"
#include "grantstore_svc/storage/postgres_grant_store.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/postgres_fixture.h"
#include "tests/testing/process.h"

namespace sharedos::grantstore::core {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

// A fresh database on the shared cluster (cluster_, uri_) and a store open on it.
class RecordAnchorPostgresTest : public ::sharedos::testing::PostgresDatabaseTest {
 protected:
  void SetUp() override {
    PostgresDatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    store_ = Open(uri_);
    ASSERT_NE(store_, nullptr);
  }

  static std::unique_ptr<storage::PostgresGrantStore> Open(const std::string& uri) {
    storage::PostgresGrantStore::Options options;
    options.uri = uri;
    auto store = storage::PostgresGrantStore::Open(options);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }

  // A change committed at the next revision, and its record in the log.
  void Change() {
    auto txn = store_->BeginWrite();
    ASSERT_THAT(txn, IsOk());
    log_.Add((*txn)->revision());
    ASSERT_THAT((*txn)->Commit(), IsOk());
  }

  // Another replica, a process, writes its change's record and is killed before its commit.
  void ReplicaKilledBetweenRecordsAndCommit(const std::string& grant_id) {
    auto worker = ::sharedos::testing::Process::Start(
        "grantstore_svc/storage/postgres_write_worker", {uri_, "ns", grant_id});
    ASSERT_THAT(worker, IsOk());
    auto announced = worker->WaitForLine("announced ", absl::Seconds(30));
    ASSERT_THAT(announced, IsOk()) << worker->output();
    int64_t revision = 0;
    ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(*announced), &revision));
    log_.Add(revision);
    worker->Kill();
  }

  std::unique_ptr<storage::PostgresGrantStore> store_;
  testing::FakeControlPlaneLog log_;
};

TEST_F(RecordAnchorPostgresTest, AReplicaKilledBetweenItsRecordsAndItsCommitIsACrashNotARestore) {
  Change();
  Change();
  ReplicaKilledBetweenRecordsAndCommit("lost");
  // The replica restarted (a store of its own) compares itself with the log.
  std::unique_ptr<storage::PostgresGrantStore> restarted = Open(uri_);
  ASSERT_NE(restarted, nullptr);
  EXPECT_THAT(restarted->CurrentRevision(), ::sharedos::common::IsOkAndHolds(2));
  RecordAnchor anchor(*restarted, ControlPlaneLog(log_.Query()));
  EXPECT_OK(anchor.Check());
  EXPECT_EQ(anchor.state(), AnchorState::kServing);
  EXPECT_EQ(anchor.uncommitted_revision(), 3);
  // The next change takes revision 3 again, and the store stays level with the log.
  Change();
  EXPECT_OK(anchor.Check());
  // A record beyond the uncommitted revision: the store was rolled back after all.
  log_.Add(4);
  log_.Add(5);
  RecordAnchor later(*restarted, ControlPlaneLog(log_.Query()));
  EXPECT_THAT(later.Check(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("behind the audit log")));
}

// What docs/operations.md tells an operator to do, done while a replica's change was between its
// announcement and its commit: the dump holds the announcement, the change then commits and is
// the log's last. Restored, the copy is one change behind and must not serve.
TEST_F(RecordAnchorPostgresTest, ADumpTakenDuringAChangeAndRestoredIsBehind) {
  Change();
  auto txn = store_->BeginWrite();
  ASSERT_THAT(txn, IsOk());
  log_.Add((*txn)->revision());
  const std::string dump = ::sharedos::testing::TempPath("grants.dump");
  const std::string bindir = cluster_->bindir();
  ASSERT_EQ(
      std::system(absl::StrCat(bindir, "/pg_dump --format=custom --file='", dump, "' '", uri_, "'")
                      .c_str()),
      0);
  ASSERT_THAT((*txn)->Commit(), IsOk());
  txn->reset();
  store_.reset();
  ASSERT_EQ(
      std::system(
          absl::StrCat(bindir, "/pg_restore --clean --dbname='", uri_, "' '", dump, "'").c_str()),
      0);
  std::unique_ptr<storage::PostgresGrantStore> restored = Open(uri_);
  ASSERT_NE(restored, nullptr);
  EXPECT_THAT(restored->CurrentRevision(), ::sharedos::common::IsOkAndHolds(1));
  RecordAnchor anchor(*restored, ControlPlaneLog(log_.Query()));
  EXPECT_THAT(anchor.Check(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("behind the audit log")));
  EXPECT_EQ(anchor.state(), AnchorState::kBehind);
  EXPECT_FALSE(anchor.uncommitted_revision().has_value());
}

}  // namespace
}  // namespace sharedos::grantstore::core
