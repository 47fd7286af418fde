#include "audit_svc/storage/sqlite_audit_store.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

#include "audit_svc/storage/event_codec.h"
#include "common/sqlite/database.h"
#include "common/sqlite/migrations.h"
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

  // Closes store_ and removes its files.
  void RemoveFiles() {
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }

  // Reopens store_ on the same file with `options`.
  void Reopen(const SqliteAuditStore::Options& options) {
    store_.reset();
    auto store = SqliteAuditStore::Open(path_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
  }

  // Rows in audit_keys, read through a connection of its own.
  int64_t CountKeys() {
    auto db = common::sqlite::Database::Open(path_);
    EXPECT_TRUE(db.ok()) << db.status();
    auto count = (*db)->Prepare("SELECT COUNT(*) FROM audit_keys");
    EXPECT_TRUE(count.ok()) << count.status();
    auto row = count->Step();
    EXPECT_TRUE(row.ok() && *row);
    return count->ColumnInt64(0);
  }

  // The ids of the records the filter finds.
  std::vector<std::string> Ids(const AuditFilter& filter) {
    auto records = store_->Query(filter, 0, 100);
    EXPECT_TRUE(records.ok()) << records.status();
    std::vector<std::string> ids;
    if (records.ok()) {
      for (const auto& record : *records) ids.push_back(record.event().id());
    }
    return ids;
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

// --- Lookup keys: indexed off the commit path, seen by every query. ---

SqliteAuditStore::Options NoBackgroundIndexing() {
  SqliteAuditStore::Options options;
  options.background_indexing = false;
  return options;
}

AuditEvent MakeKeyedEvent(const std::string& id, const std::string& ns, const std::string& trace,
                          const std::string& execution) {
  AuditEvent event = MakeEvent(id, ns);
  event.set_trace_id(trace);
  (*event.mutable_metadata()->mutable_fields())["executionId"].set_string_value(execution);
  return event;
}

TEST_F(SqliteAuditStoreTest, TheCommitPathDoesNotWriteTheLookupKeys) {
  Reopen(NoBackgroundIndexing());
  for (int i = 1; i <= 5; ++i) AppendAll(1, i);
  EXPECT_EQ(CountKeys(), 0);
  AuditFilter by_namespace;
  by_namespace.set_namespace_id("world");
  EXPECT_EQ(Ids(by_namespace).size(), 5u);  // the query indexed them first
  EXPECT_EQ(CountKeys(), 5);
}

TEST_F(SqliteAuditStoreTest, AQueryRightAfterAnAppendSeesTheRecordByEachKey) {
  for (bool background : {true, false}) {
    SCOPED_TRACE(background ? "background indexing" : "no background indexing");
    RemoveFiles();
    SqliteAuditStore::Options options;
    options.background_indexing = background;
    Reopen(options);
    Batch first, second;
    first.Add(MakeKeyedEvent("x1", "ns-x", "trace-x", "exec-x"));
    second.Add(MakeKeyedEvent("y1", "ns-y", "trace-y", "exec-y"));
    ASSERT_TRUE(store_->Append({first.pending}, absl::FromUnixSeconds(1)).ok());
    AuditFilter filter;
    filter.set_namespace_id("ns-x");
    EXPECT_THAT(Ids(filter), ElementsAre("x1"));
    ASSERT_TRUE(store_->Append({second.pending}, absl::FromUnixSeconds(1)).ok());
    filter.Clear();
    filter.set_namespace_id("ns-y");
    EXPECT_THAT(Ids(filter), ElementsAre("y1"));
    filter.Clear();
    filter.set_trace_id("trace-y");
    EXPECT_THAT(Ids(filter), ElementsAre("y1"));
    filter.Clear();
    filter.set_execution_id("exec-x");
    EXPECT_THAT(Ids(filter), ElementsAre("x1"));
    filter.set_trace_id("trace-y");  // keys combine
    EXPECT_THAT(Ids(filter), ElementsAre());
    filter.set_trace_id("trace-x");
    filter.set_reason("allowed");  // with a record column
    EXPECT_THAT(Ids(filter), ElementsAre("x1"));
    filter.set_reason("no_matching_grant");
    EXPECT_THAT(Ids(filter), ElementsAre());
    EXPECT_TRUE(VerifyAll().ok);
  }
}

TEST_F(SqliteAuditStoreTest, TheBackgroundIndexerIndexesWithoutAQuery) {
  AppendAll(1);  // below kIndexBatchRows: indexed kIndexDelay later
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (CountKeys() < 1 && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_EQ(CountKeys(), 1);
  // A batch's worth in one commit.
  AppendAll(SqliteAuditStore::kIndexBatchRows, 2);
  while (CountKeys() < 1 + SqliteAuditStore::kIndexBatchRows && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  EXPECT_EQ(CountKeys(), 1 + SqliteAuditStore::kIndexBatchRows);
}

TEST_F(SqliteAuditStoreTest, RecordsLeftUnindexedAreIndexedAtReopen) {
  Reopen(NoBackgroundIndexing());
  for (int i = 1; i <= 5; ++i) AppendAll(1, i);
  store_.reset();  // as a crash would, before anything indexed them
  EXPECT_EQ(CountKeys(), 0);
  Reopen(NoBackgroundIndexing());
  EXPECT_EQ(CountKeys(), 5);  // Open indexed them
  AuditFilter by_trace;
  by_trace.set_trace_id("trace-world");
  EXPECT_THAT(Ids(by_trace), ElementsAre("e1", "e2", "e3", "e4", "e5"));
  EXPECT_TRUE(VerifyAll().ok);
}

TEST_F(SqliteAuditStoreTest, AKeysRowForgedAheadOfTheLogDoesNotHideLaterRecords) {
  AppendAll(2);
  Tamper("INSERT INTO audit_keys VALUES (3, 'elsewhere', 'elsewhere', 'elsewhere')");
  Reopen(NoBackgroundIndexing());  // the forged row is beyond the head: ignored at Open
  AppendAll(2, 3);
  AuditFilter by_trace;
  by_trace.set_trace_id("trace-world");
  EXPECT_THAT(Ids(by_trace), ElementsAre("e1", "e2", "e3", "e4"));
  EXPECT_TRUE(VerifyAll().ok);
}

TEST_F(SqliteAuditStoreTest, AFailingIndexerFailsKeyQueriesButNeverAppends) {
  AppendAll(2);
  Tamper("DROP TABLE audit_keys");  // every index run fails from now on
  for (int i = 3; i <= 2 + SqliteAuditStore::kIndexBatchRows; ++i) {
    AppendBatchResult result = AppendAll(1, i);  // wakes the (failing) background indexer
    ASSERT_EQ(result.head.sequence, i);
  }
  AuditFilter by_namespace;
  by_namespace.set_namespace_id("world");
  EXPECT_FALSE(store_->Query(by_namespace, 0, 10).ok());
  EXPECT_FALSE(store_->Verify(std::nullopt, std::nullopt).ok());
  // Filters that need no lookup key still read the log.
  auto all = store_->Query(AuditFilter(), 0, 1000);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->size(), 2u + SqliteAuditStore::kIndexBatchRows);
}

// The version-1 schema, as files written before migration 2 hold it.
constexpr char kVersion1Schema[] = R"sql(
  CREATE TABLE audit_records (
    sequence INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    type INTEGER NOT NULL,
    outcome INTEGER NOT NULL,
    namespace_id TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    execution_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    source INTEGER,
    actor TEXT NOT NULL,
    at_micros INTEGER NOT NULL,
    event_json TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    recorded_at_micros INTEGER NOT NULL
  );
  CREATE INDEX audit_records_by_namespace ON audit_records(namespace_id, sequence);
  CREATE INDEX audit_records_by_trace ON audit_records(trace_id, sequence);
  CREATE INDEX audit_records_by_execution ON audit_records(execution_id, sequence);
  CREATE TABLE audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    sequence INTEGER NOT NULL,
    hash TEXT NOT NULL
  );
  INSERT INTO audit_head (id, sequence, hash)
    VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
)sql";

TEST_F(SqliteAuditStoreTest, NoPendingUpgradeForANewOrCurrentLog) {
  auto pending = SqliteAuditStore::PendingUpgrade(path_ + ".absent");
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ(*pending, "");
  ASSERT_FALSE(std::ifstream(path_ + ".absent").good());  // nothing created
  pending = SqliteAuditStore::PendingUpgrade(path_);  // the fixture's open store
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ(*pending, "");
}

TEST_F(SqliteAuditStoreTest, MigratesAVersionOneLog) {
  RemoveFiles();
  {
    // A version-1 log of 6 chained records across two traces, written as version 1 did.
    auto db = common::sqlite::Database::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status();
    const common::sqlite::Migration version1[] = {{1, kVersion1Schema}};
    ASSERT_TRUE(common::sqlite::Migrate(**db, version1).ok());
    std::string prev = kGenesisHash;
    for (int i = 1; i <= 6; ++i) {
      AuditEvent event = MakeKeyedEvent("v" + std::to_string(i), "world",
                                        i % 2 ? "trace-odd" : "trace-even", "exec-old");
      const std::string json = *CanonicalEventJson(event);
      const IndexedColumns columns = DeriveColumns(event);
      const std::string hash = ChainHash(prev, json);
      auto insert = (*db)->Prepare(SqliteAuditStore::InsertSql());
      ASSERT_TRUE(insert.ok()) << insert.status();
      ASSERT_TRUE(insert->BindInt64(1, i).ok());
      ASSERT_TRUE(insert->BindText(2, event.id()).ok());
      ASSERT_TRUE(insert->BindInt64(3, columns.type).ok());
      ASSERT_TRUE(insert->BindInt64(4, columns.outcome).ok());
      ASSERT_TRUE(insert->BindText(5, columns.namespace_id).ok());
      ASSERT_TRUE(insert->BindText(6, columns.trace_id).ok());
      ASSERT_TRUE(insert->BindText(7, columns.execution_id).ok());
      ASSERT_TRUE(insert->BindText(8, columns.reason).ok());
      ASSERT_TRUE(insert->BindInt64(9, *columns.source).ok());
      ASSERT_TRUE(insert->BindText(10, columns.actor).ok());
      ASSERT_TRUE(insert->BindInt64(11, columns.at_micros).ok());
      ASSERT_TRUE(insert->BindText(12, json).ok());
      ASSERT_TRUE(insert->BindText(13, prev).ok());
      ASSERT_TRUE(insert->BindText(14, hash).ok());
      ASSERT_TRUE(insert->BindInt64(15, 1).ok());
      ASSERT_TRUE(insert->Step().ok());
      prev = hash;
    }
    auto head = (*db)->Prepare("UPDATE audit_head SET sequence = 6, hash = ?1 WHERE id = 1");
    ASSERT_TRUE(head.ok());
    ASSERT_TRUE(head->BindText(1, prev).ok());
    ASSERT_TRUE(head->Step().ok());
  }
  // The operator is told before the upgrade runs.
  auto pending = SqliteAuditStore::PendingUpgrade(path_);
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_THAT(*pending, HasSubstr("from schema 1 to 2 over its 6 records"));
  Reopen(NoBackgroundIndexing());
  pending = SqliteAuditStore::PendingUpgrade(path_);
  ASSERT_TRUE(pending.ok()) << pending.status();
  EXPECT_EQ(*pending, "");
  {
    auto db = common::sqlite::Database::Open(path_);
    ASSERT_TRUE(db.ok());
    auto version = common::sqlite::SchemaVersion(**db);
    ASSERT_TRUE(version.ok());
    EXPECT_EQ(*version, 2);
    // The lookup indexes moved off audit_records.
    auto old_indexes = (*db)->Prepare(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'audit_records' "
        "AND name LIKE 'audit_records_by_%'");
    ASSERT_TRUE(old_indexes.ok());
    ASSERT_TRUE(*old_indexes->Step());
    EXPECT_EQ(old_indexes->ColumnInt64(0), 0);
  }
  EXPECT_EQ(CountKeys(), 6);  // backfilled
  AuditFilter by_trace;
  by_trace.set_trace_id("trace-odd");
  EXPECT_THAT(Ids(by_trace), ElementsAre("v1", "v3", "v5"));
  by_trace.set_trace_id("trace-even");
  EXPECT_THAT(Ids(by_trace), ElementsAre("v2", "v4", "v6"));
  // The migrated log goes on: new records chain on and are found.
  Batch batch;
  batch.Add(MakeKeyedEvent("new", "world", "trace-odd", "exec-new"));
  ASSERT_TRUE(store_->Append({batch.pending}, absl::FromUnixSeconds(2)).ok());
  by_trace.set_trace_id("trace-odd");
  EXPECT_THAT(Ids(by_trace), ElementsAre("v1", "v3", "v5", "new"));
  AuditFilter by_execution;
  by_execution.set_execution_id("exec-old");
  EXPECT_EQ(Ids(by_execution).size(), 6u);
  VerifyResult verify = VerifyAll();
  EXPECT_TRUE(verify.ok) << verify.detail;
  EXPECT_EQ(verify.checked, 7);
}

TEST_F(SqliteAuditStoreTest, DetectsAnEditedLookupKey) {
  AppendAll(5);
  EXPECT_TRUE(VerifyAll().ok);  // indexes them
  // Moves record 3 out of its trace, which would hide it from trace queries.
  Tamper("UPDATE audit_keys SET trace_id = 'trace-elsewhere' WHERE sequence = 3");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 3);
  EXPECT_THAT(result.detail, HasSubstr("lookup keys do not match the event"));
}

TEST_F(SqliteAuditStoreTest, DetectsADeletedLookupKey) {
  AppendAll(5);
  EXPECT_TRUE(VerifyAll().ok);
  Tamper("DELETE FROM audit_keys WHERE sequence = 2");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 2);
  EXPECT_THAT(result.detail, HasSubstr("lookup keys missing"));
}

TEST(SqliteAuditStoreOpenTest, RefusesInMemory) {
  EXPECT_THAT(SqliteAuditStore::Open(":memory:", {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be a file")));
}

}  // namespace
}  // namespace sharedos::audit::storage
