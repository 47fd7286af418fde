#include "audit_svc/storage/sqlite_audit_store.h"

#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "audit_svc/storage/audit_store_conformance.h"
#include "audit_svc/storage/event_codec.h"
#include "common/sqlite/database.h"
#include "common/sqlite/migrations.h"
#include "common/status/status_macros.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::storage {
namespace {

using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;
using testing::Batch;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeEvent;
using testing::MakeKeyedEvent;

std::string TempPath(const std::string& name) {
  return std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
}

// A fresh file path under TEST_TMPDIR, named after the running test (typed tests included).
std::string FreshDbPath() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::StrCat(info->test_suite_name(), ".", info->name(), ".db");
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const std::string path = TempPath(name);
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

// --- The conformance suite, on a file (with and without the background indexer) ---

// Edits the SQLite file through a connection of its own, as an attacker with file access would.
class SqliteTamperer final : public testing::AuditStoreTamperer {
 public:
  explicit SqliteTamperer(std::string path) : path_(std::move(path)) {}

  absl::Status EditEvent(int64_t sequence, const std::string& from,
                         const std::string& to) override {
    return Run(
        "UPDATE audit_records SET event_json = replace(event_json, ?2, ?3) "
        "WHERE sequence = ?1",
        {sequence, from, to});
  }
  absl::Status DeleteRecords(int64_t first, int64_t last) override {
    return Run("DELETE FROM audit_records WHERE sequence >= ?1 AND sequence <= ?2", {first, last});
  }
  absl::Status SwapRecords(int64_t a, int64_t b) override {
    // Renumbers the two rows through a free sequence (-a).
    RETURN_IF_ERROR(Run("UPDATE audit_records SET sequence = -?1 WHERE sequence = ?1", {a}));
    RETURN_IF_ERROR(Run("UPDATE audit_records SET sequence = ?1 WHERE sequence = ?2", {a, b}));
    return Run("UPDATE audit_records SET sequence = ?2 WHERE sequence = -?1", {a, b});
  }
  absl::Status SetHash(int64_t sequence, const std::string& hash) override {
    return Run("UPDATE audit_records SET hash = ?2 WHERE sequence = ?1", {sequence, hash});
  }
  absl::Status CopyRecord(int64_t sequence, int64_t at, const std::string& event_id) override {
    return Run(
        "INSERT INTO audit_records SELECT ?2, ?3, type, outcome, namespace_id, trace_id, "
        "execution_id, reason, source, actor, at_micros, event_json, prev_hash, hash, "
        "recorded_at_micros FROM audit_records WHERE sequence = ?1",
        {sequence, at, event_id});
  }

 private:
  // One statement, `values` bound to ?1, ?2, … in order.
  absl::Status Run(const std::string& sql,
                   const std::vector<std::variant<int64_t, std::string>>& values) {
    ASSIGN_OR_RETURN(std::unique_ptr<common::sqlite::Database> db,
                     common::sqlite::Database::Open(path_));
    ASSIGN_OR_RETURN(common::sqlite::Statement statement, db->Prepare(sql));
    for (size_t i = 0; i < values.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      if (const int64_t* number = std::get_if<int64_t>(&values[i])) {
        RETURN_IF_ERROR(statement.BindInt64(index, *number));
      } else {
        RETURN_IF_ERROR(statement.BindText(index, std::get<std::string>(values[i])));
      }
    }
    return statement.Step().status();
  }

  const std::string path_;
};

class SqliteFileStore : public testing::AuditStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<AuditStore>> Create() override {
    const std::string path = FreshDbPath();
    tamperer_ = std::make_unique<SqliteTamperer>(path);
    ASSIGN_OR_RETURN(std::unique_ptr<SqliteAuditStore> store,
                     SqliteAuditStore::Open(path, options()));
    return std::unique_ptr<AuditStore>(std::move(store));
  }
  testing::AuditStoreTamperer* Tamperer() override { return tamperer_.get(); }
  virtual SqliteAuditStore::Options options() const { return {}; }

 private:
  std::unique_ptr<SqliteTamperer> tamperer_;
};

// Lookups by key read what Query itself indexed, never what the background indexer did.
class SqliteFileStoreWithoutBackgroundIndexing : public SqliteFileStore {
 protected:
  SqliteAuditStore::Options options() const override {
    SqliteAuditStore::Options options;
    options.background_indexing = false;
    return options;
  }
};

using Backends = ::testing::Types<SqliteFileStore, SqliteFileStoreWithoutBackgroundIndexing>;

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, AuditStoreConformanceTest, Backends);
}  // namespace testing

namespace {

// --- SQLite specifics ---

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

// Issue 34 (observation 6): a full-chain Verify does not hold the connection that answers Query;
// queries are answered while it runs (before, every one waited for its end).
TEST_F(SqliteAuditStoreTest, QueriesAreAnsweredWhileAFullVerifyRuns) {
  for (int i = 0; i < 20; ++i) AppendAll(2000, 1 + i * 2000);
  std::atomic<bool> verifying{false};
  std::atomic<bool> verified{false};
  std::thread verifier([&] {
    verifying = true;
    absl::StatusOr<VerifyResult> result = store_->Verify(std::nullopt, std::nullopt);
    EXPECT_TRUE(result.ok() && result->ok);
    verified = true;
  });
  while (!verifying) std::this_thread::yield();
  int answered_meanwhile = 0;
  while (!verified) {
    sharedos::audit::v1::AuditFilter filter;
    filter.set_namespace_id("world-none");
    ASSERT_TRUE(store_->Query(filter, 0, 10).ok());
    if (!verified) ++answered_meanwhile;
  }
  verifier.join();
  EXPECT_GE(answered_meanwhile, 5);
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

TEST_F(SqliteAuditStoreTest, DetectsAnEditedIndexColumn) {
  AppendAll(5);
  Tamper("UPDATE audit_records SET reason = 'no_matching_grant' WHERE sequence = 4");
  VerifyResult result = VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 4);
  EXPECT_THAT(result.detail, HasSubstr("indexed columns"));
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
  pending = SqliteAuditStore::PendingUpgrade(path_);      // the fixture's open store
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
