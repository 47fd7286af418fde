#include "audit_svc/storage/sqlite_audit_store.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "audit_svc/storage/event_codec.h"
#include "common/sqlite/database.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::storage {
namespace {

using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

AuditEvent MakeEvent(const std::string& id, const std::string& ns = "world",
                     const std::string& reason = "allowed") {
  AuditEvent event;
  event.set_version("1");
  event.set_id(id);
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_ALLOWED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-" + ns);
  event.set_namespace_id(ns);
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_reason(reason);
  event.set_source(sharedos::protocol::v1::AUDIT_SOURCE_KERNEL);
  return event;
}

// Owns the events so PendingEvent pointers stay valid.
struct Batch {
  std::vector<std::unique_ptr<AuditEvent>> events;
  std::vector<PendingEvent> pending;
  void Add(AuditEvent event) {
    events.push_back(std::make_unique<AuditEvent>(std::move(event)));
    pending.push_back({events.back().get(), *CanonicalEventJson(*events.back()),
                       DeriveColumns(*events.back())});
  }
};

class SqliteAuditStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                     ".db");
    std::remove(path_.c_str());
    auto store = SqliteAuditStore::Open(path_, {});
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  AppendBatchResult AppendAll(int count, int start = 1) {
    Batch batch;
    for (int i = start; i < start + count; ++i) batch.Add(MakeEvent("e" + std::to_string(i)));
    auto result = store_->Append({batch.pending}, absl::FromUnixSeconds(1786438801));
    EXPECT_TRUE(result.ok()) << result.status();
    return *result;
  }

  // Edits the file behind the store's back, as an attacker with file access would.
  void Tamper(const std::string& sql) {
    auto db = common::sqlite::Database::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Exec(sql).ok()) << sql;
  }

  VerifyResult VerifyAll() {
    auto result = store_->Verify(std::nullopt, std::nullopt);
    EXPECT_TRUE(result.ok()) << result.status();
    return *result;
  }

  std::string path_;
  std::unique_ptr<SqliteAuditStore> store_;
};

TEST_F(SqliteAuditStoreTest, AppendLinksEachRecordToThePrevious) {
  AppendBatchResult result = AppendAll(3);
  ASSERT_EQ(result.submissions.size(), 1u);
  ASSERT_TRUE(result.submissions[0].accepted);
  EXPECT_EQ(result.head.sequence, 3);
  auto records = store_->Query(AuditFilter(), 0, 10);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  std::string prev = kGenesisHash;
  for (int i = 0; i < 3; ++i) {
    const auto& record = (*records)[i];
    EXPECT_EQ(record.sequence(), i + 1);
    EXPECT_EQ(record.prev_hash(), prev);
    EXPECT_EQ(record.hash(), ChainHash(prev, *CanonicalEventJson(record.event())));
    EXPECT_EQ(record.event().id(), "e" + std::to_string(i + 1));
    prev = record.hash();
  }
  EXPECT_EQ(result.head.hash, prev);
  EXPECT_TRUE(VerifyAll().ok);
  EXPECT_EQ(VerifyAll().checked, 3);
}

TEST_F(SqliteAuditStoreTest, SameIdSameContentIsADuplicateNotASecondRecord) {
  AppendAll(2);
  AppendBatchResult again = AppendAll(1, /*start=*/2);
  ASSERT_TRUE(again.submissions[0].accepted);
  ASSERT_EQ(again.submissions[0].events.size(), 1u);
  EXPECT_EQ(again.submissions[0].events[0].kind, EventOutcome::Kind::kDuplicate);
  EXPECT_EQ(again.submissions[0].events[0].sequence, 2);
  EXPECT_EQ(again.head.sequence, 2);
}

TEST_F(SqliteAuditStoreTest, SameIdOtherContentRejectsOnlyItsSubmission) {
  AppendAll(1);
  Batch conflicting, fine;
  conflicting.Add(MakeEvent("new-1"));
  conflicting.Add(MakeEvent("e1", "world", "no_matching_grant"));  // e1 exists, other content
  fine.Add(MakeEvent("new-2"));
  auto result = store_->Append({conflicting.pending, fine.pending}, absl::FromUnixSeconds(1));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->submissions[0].accepted);
  EXPECT_EQ(result->submissions[0].conflict_index, 1);
  ASSERT_TRUE(result->submissions[1].accepted);
  EXPECT_EQ(result->submissions[1].events[0].sequence, 2);  // new-1 was rolled back
  auto records = store_->Query(AuditFilter(), 0, 10);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].event().id(), "new-2");
  EXPECT_TRUE(VerifyAll().ok);
}

TEST_F(SqliteAuditStoreTest, ASingleEventConflictWritesNothingAndOthersProceed) {
  AppendAll(1);
  Batch conflicting, fine;
  conflicting.Add(MakeEvent("e1", "world", "no_matching_grant"));  // e1 exists, other content
  fine.Add(MakeEvent("new-2"));
  auto result = store_->Append({conflicting.pending, fine.pending}, absl::FromUnixSeconds(1));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->submissions[0].accepted);
  EXPECT_EQ(result->submissions[0].conflict_index, 0);
  ASSERT_TRUE(result->submissions[1].accepted);
  EXPECT_EQ(result->submissions[1].events[0].sequence, 2);
  EXPECT_EQ(result->head.sequence, 2);
  auto records = store_->Query(AuditFilter(), 0, 10);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].event().reason(), "allowed");
  EXPECT_EQ((*records)[1].event().id(), "new-2");
  EXPECT_TRUE(VerifyAll().ok);
}

TEST_F(SqliteAuditStoreTest, CheckpointsTheWalInTheBackground) {
  // Single-event commits, as a mediated call makes them, until the WAL passes the background
  // threshold; the database file itself only grows when a checkpoint copies the WAL into it.
  struct stat info;
  ASSERT_EQ(stat(path_.c_str(), &info), 0);
  const off_t before = info.st_size;
  for (int i = 1; i <= 400; ++i) AppendAll(1, i);
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    ASSERT_EQ(stat(path_.c_str(), &info), 0);
    if (info.st_size > before + 100 * 1024) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  EXPECT_GT(info.st_size, before + 100 * 1024);
  EXPECT_EQ(VerifyAll().checked, 400);
}

TEST_F(SqliteAuditStoreTest, QueryFiltersAndPaginatesBySequence) {
  Batch batch;
  batch.Add(MakeEvent("a1", "world-a", "allowed"));
  batch.Add(MakeEvent("b1", "world-b", "no_matching_grant"));
  batch.Add(MakeEvent("a2", "world-a", "no_matching_grant"));
  batch.Add(MakeEvent("a3", "world-a", "allowed"));
  ASSERT_TRUE(store_->Append({batch.pending}, absl::FromUnixSeconds(1)).ok());

  AuditFilter by_namespace;
  by_namespace.set_namespace_id("world-a");
  auto first = store_->Query(by_namespace, 0, 2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].event().id(), "a1");
  EXPECT_EQ((*first)[1].event().id(), "a2");
  auto second = store_->Query(by_namespace, (*first)[1].sequence(), 2);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].event().id(), "a3");

  AuditFilter by_reason = by_namespace;
  by_reason.set_reason("no_matching_grant");
  auto denied = store_->Query(by_reason, 0, 10);
  ASSERT_TRUE(denied.ok());
  ASSERT_EQ(denied->size(), 1u);
  EXPECT_EQ((*denied)[0].event().id(), "a2");

  AuditFilter by_actor;
  by_actor.mutable_actor()->set_agent_id("mallory");
  by_actor.set_source(sharedos::protocol::v1::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(store_->Query(by_actor, 0, 10)->size(), 4u);
  by_actor.mutable_actor()->set_agent_id("someone-else");
  EXPECT_EQ(store_->Query(by_actor, 0, 10)->size(), 0u);

  AuditFilter by_time;
  by_time.mutable_from()->set_seconds(1786438800);
  by_time.mutable_to()->set_seconds(1786438801);
  EXPECT_EQ(store_->Query(by_time, 0, 10)->size(), 4u);
  by_time.mutable_from()->set_seconds(1786438801);
  by_time.mutable_to()->set_seconds(1786438802);
  EXPECT_EQ(store_->Query(by_time, 0, 10)->size(), 0u);
}

TEST_F(SqliteAuditStoreTest, SurvivesReopening) {
  AppendBatchResult result = AppendAll(5);
  store_.reset();
  auto reopened = SqliteAuditStore::Open(path_, {SqliteAuditStore::Durability::kNormal});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  auto head = (*reopened)->GetHead();
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->sequence, 5);
  EXPECT_EQ(head->hash, result.head.hash);
}

// --- Tamper evidence: each edit made directly in the SQLite file is detected. ---

TEST_F(SqliteAuditStoreTest, DetectsAnEditedEvent) {
  AppendAll(5);
  Tamper("UPDATE audit_records SET event_json = replace(event_json, 'allowed', 'denied') "
         "WHERE sequence = 3");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 3);
  EXPECT_THAT(result.detail, HasSubstr("hash"));
}

TEST_F(SqliteAuditStoreTest, DetectsAnEditedIndexColumn) {
  AppendAll(5);
  Tamper("UPDATE audit_records SET reason = 'no_matching_grant' WHERE sequence = 4");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 4);
  EXPECT_THAT(result.detail, HasSubstr("indexed columns"));
}

TEST_F(SqliteAuditStoreTest, DetectsADeletedRecord) {
  AppendAll(5);
  Tamper("DELETE FROM audit_records WHERE sequence = 2");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 2);
  EXPECT_THAT(result.detail, HasSubstr("missing"));
}

TEST_F(SqliteAuditStoreTest, DetectsReorderedRecords) {
  AppendAll(5);
  // Swap records 2 and 3 (content, links and all) by renumbering them.
  Tamper("UPDATE audit_records SET sequence = -2 WHERE sequence = 2;"
         "UPDATE audit_records SET sequence = 2 WHERE sequence = 3;"
         "UPDATE audit_records SET sequence = 3 WHERE sequence = -2;");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 2);
}

TEST_F(SqliteAuditStoreTest, DetectsATruncatedTail) {
  AppendAll(5);
  Tamper("DELETE FROM audit_records WHERE sequence > 3");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 4);
}

TEST_F(SqliteAuditStoreTest, DetectsARewrittenChainAgainstTheStoredHead) {
  AppendAll(3);
  // An attacker recomputes a consistent chain for an edited last record but cannot know to
  // leave the head alone: the head no longer matches.
  Tamper("UPDATE audit_records SET hash = 'f' || substr(hash, 2) WHERE sequence = 3");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 3);
}

TEST_F(SqliteAuditStoreTest, DetectsRecordsAppendedBehindTheChain) {
  AppendAll(2);
  Tamper("INSERT INTO audit_records SELECT 7, 'forged', type, outcome, namespace_id, trace_id, "
         "execution_id, reason, source, actor, at_micros, event_json, prev_hash, hash, "
         "recorded_at_micros FROM audit_records WHERE sequence = 2");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 7);
}

TEST_F(SqliteAuditStoreTest, VerifiesASubRange) {
  AppendAll(6);
  auto result = store_->Verify(3, 5);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->checked, 3);
}

TEST_F(SqliteAuditStoreTest, AFullDiskFailsUnavailableAndWritesNothing) {
  AppendAll(1);
  auto head_before = store_->GetHead();
  ASSERT_TRUE(head_before.ok());
  store_.reset();
  // A cap a little above the current size stands in for a full disk (SQLITE_FULL).
  struct stat info;
  ASSERT_EQ(stat(path_.c_str(), &info), 0);
  auto store = SqliteAuditStore::Open(path_, {SqliteAuditStore::Durability::kFull, info.st_size});
  ASSERT_TRUE(store.ok()) << store.status();
  Batch batch;
  std::string big(200000, 'x');
  for (int i = 0; i < 20; ++i) {
    AuditEvent event = MakeEvent("big" + std::to_string(i));
    (*event.mutable_metadata()->mutable_fields())["note"].set_string_value(big);
    batch.Add(event);
  }
  EXPECT_THAT((*store)->Append({batch.pending}, absl::FromUnixSeconds(1)).status(),
              StatusIs(absl::StatusCode::kUnavailable));
  auto head = (*store)->GetHead();
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->sequence, head_before->sequence);
  EXPECT_EQ(head->hash, head_before->hash);
  auto verify = (*store)->Verify(std::nullopt, std::nullopt);
  ASSERT_TRUE(verify.ok());
  EXPECT_TRUE(verify->ok);
  // Nothing of the refused batch is visible.
  EXPECT_EQ((*store)->Query(AuditFilter(), 0, 100)->size(), 1u);
}

TEST(SqliteAuditStoreOpenTest, RefusesInMemory) {
  EXPECT_THAT(SqliteAuditStore::Open(":memory:", {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be a file")));
}

}  // namespace
}  // namespace sharedos::audit::storage
