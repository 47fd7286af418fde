#include "grantstore_svc/core/record_anchor.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grantstore_svc/core/fake_control_plane_log.h"
#include "grantstore_svc/storage/sqlite_grant_store.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::core {
namespace {

namespace av1 = ::sharedos::audit::v1;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

using FakeLog = testing::FakeControlPlaneLog;

class RecordAnchorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::SqliteGrantStore::Options options;
    options.path = ":memory:";
    auto store = storage::SqliteGrantStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // A change committed at the next revision, and its record in the log.
  void Change() {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok()) << txn.status();
    log_.Add((*txn)->revision());
    ASSERT_TRUE((*txn)->Commit().ok());
  }

  std::unique_ptr<storage::SqliteGrantStore> store_;
  FakeLog log_;
};

TEST_F(RecordAnchorTest, LevelWithTheLogServes) {
  Change();
  Change();
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  EXPECT_OK(anchor.Check());
  EXPECT_EQ(anchor.state(), AnchorState::kServing);
  EXPECT_EQ(anchor.store_revision(), 2);
}

TEST_F(RecordAnchorTest, AheadOfTheLogServes) {
  Change();
  {
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE((*txn)->Commit().ok());  // its record still in an outbox
  }
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  EXPECT_OK(anchor.Check());
}

TEST_F(RecordAnchorTest, BehindTheLogServesNothingAndNamesWhy) {
  Change();
  log_.Add(2);  // a later change the store no longer has (a restored copy)
  log_.Add(3);
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  EXPECT_THAT(anchor.Check(), StatusIs(absl::StatusCode::kUnavailable,
                                       HasSubstr("the grant store is behind the audit log: the "
                                                 "store is at revision 1, the log already holds "
                                                 "revision 2")));
  EXPECT_EQ(anchor.state(), AnchorState::kBehind);
  EXPECT_THAT(anchor.Serving(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("authority_unavailable: ")));
  ASSERT_TRUE(anchor.first_beyond().has_value());
  EXPECT_EQ(anchor.first_beyond()->revision, 2);
  EXPECT_EQ(anchor.first_beyond()->sequence, 2);
  auto highest = anchor.log().HighestRevision(2);
  ASSERT_TRUE(highest.ok()) << highest.status();
  EXPECT_EQ(*highest, 3);
}

TEST_F(RecordAnchorTest, AnEmptyStoreBehindAFullLogServesNothing) {
  log_.Add(1);
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  EXPECT_THAT(anchor.Check(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(RecordAnchorTest, ARecordOfAnotherWriterIsNotTheStores) {
  Change();
  log_.Add(2, "service:envelope");
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  EXPECT_OK(anchor.Check());
}

TEST_F(RecordAnchorTest, AnAnnouncedRevisionNeverCommittedIsACrashNotARestore) {
  Change();
  {
    // Recorded, then the process stopped before the commit.
    auto txn = store_->BeginWrite();
    ASSERT_TRUE(txn.ok());
    log_.Add((*txn)->revision());
  }
  auto announced = store_->AnnouncedRevision();
  ASSERT_TRUE(announced.ok());
  EXPECT_EQ(*announced, 2);
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  EXPECT_OK(anchor.Check());
  EXPECT_EQ(anchor.uncommitted_revision(), 2);
  // But with a revision after it in the log, the store was restored.
  log_.Add(3);
  EXPECT_THAT(anchor.Check(), StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(RecordAnchorTest, TheLogUnreadableServesNothingUntilItCanCompare) {
  Change();
  log_.available_ = false;
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  EXPECT_THAT(anchor.Check(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_svc is away")));
  EXPECT_EQ(anchor.state(), AnchorState::kUnchecked);
  log_.available_ = true;
  EXPECT_OK(anchor.Check());
}

TEST_F(RecordAnchorTest, HighestRevisionSearchesInLogarithmicallyManyQuestions) {
  for (int i = 0; i < 100; ++i) log_.Add(i + 1);
  RecordAnchor anchor(*store_, ControlPlaneLog(log_.Query()));
  log_.queries_ = 0;
  auto highest = anchor.log().HighestRevision(1);
  ASSERT_TRUE(highest.ok());
  EXPECT_EQ(*highest, 100);
  // About 2·log2(100) look-ups, each one query per control-plane type.
  EXPECT_LE(log_.queries_, 16 * 8);
}

}  // namespace
}  // namespace sharedos::grantstore::core
