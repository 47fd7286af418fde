#include "audit_svc/storage/postgres_audit_store.h"

#include <atomic>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/storage/audit_store_conformance.h"
#include "audit_svc/storage/event_codec.h"
#include "common/postgres/connection.h"
#include "common/postgres/migrations.h"
#include "common/status/status_macros.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::audit::storage {
namespace {

using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::sharedos::common::postgres::Connection;
using ::sharedos::common::postgres::Param;
using ::sharedos::testing::PostgresCluster;
using ::testing::AllOf;
using testing::Batch;
using ::testing::HasSubstr;
using testing::MakeEvent;

// A fresh schema (search_path) on the binary's shared cluster: each test its own tables.
using ::sharedos::testing::FreshSchema;

absl::StatusOr<std::unique_ptr<PostgresAuditStore>> OpenStore(const std::string& uri) {
  PostgresAuditStore::Options options;
  options.uri = uri;
  return PostgresAuditStore::Open(options);
}

// Edits the tables through a connection of its own, as an attacker with database access would.
class PostgresTamperer final : public testing::AuditStoreTamperer {
 public:
  explicit PostgresTamperer(std::string uri) : uri_(std::move(uri)) {}

  absl::Status EditEvent(int64_t sequence, const std::string& from,
                         const std::string& to) override {
    return Run(
        "UPDATE audit_records SET event_json = replace(event_json, $2, $3) "
        "WHERE sequence = $1",
        {Param::Int64(sequence), Param::Text(from), Param::Text(to)});
  }
  absl::Status DeleteRecords(int64_t first, int64_t last) override {
    return Run("DELETE FROM audit_records WHERE sequence >= $1 AND sequence <= $2",
               {Param::Int64(first), Param::Int64(last)});
  }
  absl::Status SwapRecords(int64_t a, int64_t b) override {
    // Renumbers the two rows through a free sequence (-a).
    RETURN_IF_ERROR(
        Run("UPDATE audit_records SET sequence = -$1 WHERE sequence = $1", {Param::Int64(a)}));
    RETURN_IF_ERROR(Run("UPDATE audit_records SET sequence = $1 WHERE sequence = $2",
                        {Param::Int64(a), Param::Int64(b)}));
    return Run("UPDATE audit_records SET sequence = $2 WHERE sequence = -$1",
               {Param::Int64(a), Param::Int64(b)});
  }
  absl::Status SetHash(int64_t sequence, const std::string& hash) override {
    return Run("UPDATE audit_records SET hash = $2 WHERE sequence = $1",
               {Param::Int64(sequence), Param::Text(hash)});
  }
  absl::Status CopyRecord(int64_t sequence, int64_t at, const std::string& event_id) override {
    return Run(
        "INSERT INTO audit_records SELECT $2, $3, type, outcome, namespace_id, trace_id, "
        "execution_id, reason, source, actor, at_micros, event_json, prev_hash, hash, "
        "recorded_at_micros FROM audit_records WHERE sequence = $1",
        {Param::Int64(sequence), Param::Int64(at), Param::Text(event_id)});
  }

  absl::Status Run(const std::string& sql, const std::vector<Param>& params) {
    ASSIGN_OR_RETURN(std::unique_ptr<Connection> conn, Connection::Open(uri_));
    return conn->Exec(sql, params).status();
  }

 private:
  const std::string uri_;
};

// --- The conformance suite, each test on its own schema, tamper cases through SQL ---

class PostgresStore : public testing::AuditStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<AuditStore>> Create() override {
    ASSIGN_OR_RETURN(const std::string uri, FreshSchema());
    tamperer_ = std::make_unique<PostgresTamperer>(uri);
    ASSIGN_OR_RETURN(std::unique_ptr<PostgresAuditStore> store, OpenStore(uri));
    return std::unique_ptr<AuditStore>(std::move(store));
  }
  testing::AuditStoreTamperer* Tamperer() override { return tamperer_.get(); }

 private:
  std::unique_ptr<PostgresTamperer> tamperer_;
};

using Backends = ::testing::Types<PostgresStore>;

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Postgres, AuditStoreConformanceTest, Backends);
}  // namespace testing

namespace {

// --- PostgreSQL specifics ---

class PostgresAuditStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> uri = FreshSchema();
    ASSERT_THAT(uri, IsOk());
    uri_ = *uri;
  }

  std::unique_ptr<PostgresAuditStore> Open() {
    absl::StatusOr<std::unique_ptr<PostgresAuditStore>> store = OpenStore(uri_);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }

  std::string uri_;
};

// Every id stored exactly once, at sequences 1..N, one chain that verifies.
void ExpectOneGapFreeChain(AuditStore& store, const std::set<std::string>& ids) {
  std::map<std::string, int> stored;
  int64_t after = 0;
  while (true) {
    auto records = store.Query(AuditFilter(), after, 1000);
    ASSERT_THAT(records, IsOk());
    if (records->empty()) break;
    for (const auto& record : *records) {
      EXPECT_EQ(record.sequence(), after + 1);
      after = record.sequence();
      ++stored[record.event().id()];
    }
  }
  EXPECT_EQ(after, static_cast<int64_t>(ids.size()));
  for (const std::string& id : ids) EXPECT_EQ(stored[id], 1) << id;
  EXPECT_EQ(stored.size(), ids.size());
  absl::StatusOr<VerifyResult> verify = store.Verify(std::nullopt, std::nullopt);
  ASSERT_THAT(verify, IsOk());
  EXPECT_TRUE(verify->ok) << verify->detail;
  EXPECT_EQ(verify->checked, static_cast<int64_t>(ids.size()));
}

// Stores on separate connections (as replicas are) append at once, from several threads each;
// every event "shared-<i>" is sent through every store. One gap-free sequence, one chain, each
// event once; every acknowledged sequence is the one the log holds the event at.
TEST_F(PostgresAuditStoreTest, SeveralWritersKeepOneGapFreeChainAndEachEventOnce) {
  constexpr int kStores = 4;
  constexpr int kThreadsPerStore = 2;
  constexpr int kAppendsPerThread = 25;
  std::vector<std::unique_ptr<PostgresAuditStore>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(Open());
    ASSERT_NE(stores.back(), nullptr);
  }
  absl::Mutex mu;
  std::map<std::string, std::set<int64_t>> acknowledged;  // id -> sequences answered
  std::vector<std::thread> threads;
  for (int s = 0; s < kStores; ++s) {
    for (int t = 0; t < kThreadsPerStore; ++t) {
      threads.emplace_back([&, s, t] {
        for (int i = 0; i < kAppendsPerThread; ++i) {
          Batch own, shared;
          own.Add(MakeEvent(absl::StrCat("own-", s, "-", t, "-", i)));
          shared.Add(MakeEvent(absl::StrCat("shared-", t, "-", i)));
          auto result = stores[s]->Append({own.pending, shared.pending}, absl::Now());
          ASSERT_THAT(result, IsOk());
          absl::MutexLock lock(&mu);
          for (int k = 0; k < 2; ++k) {
            ASSERT_TRUE(result->submissions[k].accepted);
            const std::string& id = (k == 0 ? own : shared).events[0]->id();
            acknowledged[id].insert(result->submissions[k].events[0].sequence);
          }
        }
      });
    }
  }
  for (std::thread& thread : threads) thread.join();
  std::set<std::string> ids;
  for (const auto& [id, sequences] : acknowledged) {
    ids.insert(id);
    EXPECT_EQ(sequences.size(), 1u) << id << " was acknowledged at several sequences";
  }
  EXPECT_EQ(ids.size(), static_cast<size_t>(kStores * kThreadsPerStore * kAppendsPerThread +
                                            kThreadsPerStore * kAppendsPerThread));
  ExpectOneGapFreeChain(*stores[0], ids);
  // Every store sees the same head.
  absl::StatusOr<Head> head = stores[0]->GetHead();
  ASSERT_THAT(head, IsOk());
  for (auto& store : stores) {
    absl::StatusOr<Head> other = store->GetHead();
    ASSERT_THAT(other, IsOk());
    EXPECT_EQ(other->sequence, head->sequence);
    EXPECT_EQ(other->hash, head->hash);
  }
}

// An event appended through one replica and then, with other content, through another is a
// conflict there, as on one store.
TEST_F(PostgresAuditStoreTest, AConflictingIdIsRejectedAcrossWriters) {
  std::unique_ptr<PostgresAuditStore> first = Open();
  std::unique_ptr<PostgresAuditStore> second = Open();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  Batch original, conflicting;
  original.Add(MakeEvent("e1"));
  conflicting.Add(MakeEvent("e1", "world", "no_matching_grant"));
  ASSERT_THAT(first->Append({original.pending}, absl::Now()), IsOk());
  auto result = second->Append({conflicting.pending}, absl::Now());
  ASSERT_THAT(result, IsOk());
  EXPECT_FALSE(result->submissions[0].accepted);
  EXPECT_EQ(result->head.sequence, 1);
}

// Group commit still applies: many callers of one AuditLog over PostgreSQL share commits (each
// group is stamped with one recorded_at), and the chain stays whole.
TEST_F(PostgresAuditStoreTest, AuditLogGroupCommitsConcurrentCallers) {
  std::unique_ptr<PostgresAuditStore> store = Open();
  ASSERT_NE(store, nullptr);
  PostgresAuditStore* raw = store.get();
  core::AuditLog log(std::move(store), common::RealClock(), core::AuditLog::Options{});
  constexpr int kThreads = 16;
  constexpr int kAppendsPerThread = 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerThread; ++i) {
        EXPECT_THAT(log.AppendEvent(MakeEvent(absl::StrCat("e-", t, "-", i)), "service:authorizer"),
                    IsOk());
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  auto records = raw->Query(AuditFilter(), 0, 1000);
  ASSERT_THAT(records, IsOk());
  ASSERT_EQ(records->size(), static_cast<size_t>(kThreads * kAppendsPerThread));
  std::set<int64_t> groups;
  for (const auto& record : *records)
    groups.insert(record.recorded_at().seconds() * 1000000 + record.recorded_at().nanos() / 1000);
  EXPECT_LT(groups.size(), records->size()) << "no two appends shared a commit";
  absl::StatusOr<VerifyResult> verify = raw->Verify(std::nullopt, std::nullopt);
  ASSERT_THAT(verify, IsOk());
  EXPECT_TRUE(verify->ok) << verify->detail;
}

TEST_F(PostgresAuditStoreTest, SchemaIsVersionedAndANewerSchemaIsRefusedAtOpen) {
  ASSERT_NE(Open(), nullptr);
  absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open(uri_);
  ASSERT_THAT(conn, IsOk());
  EXPECT_THAT(common::postgres::SchemaVersion(**conn, PostgresAuditStore::kHistoryTable),
              IsOkAndHolds(1));
  ASSERT_NE(Open(), nullptr);  // reopening an up-to-date schema is fine
  ASSERT_THAT((*conn)->ExecScript(absl::StrCat("INSERT INTO ", PostgresAuditStore::kHistoryTable,
                                               " VALUES (2, '2030-01-01T00:00:00Z')")),
              IsOk());
  EXPECT_THAT(OpenStore(uri_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("audit store"), HasSubstr("schema version 2"),
                             HasSubstr("knows (1)"))));
}

TEST_F(PostgresAuditStoreTest, TheLogSurvivesReopening) {
  {
    std::unique_ptr<PostgresAuditStore> store = Open();
    ASSERT_NE(store, nullptr);
    Batch batch;
    batch.Add(MakeEvent("e1"));
    ASSERT_THAT(store->Append({batch.pending}, absl::Now()), IsOk());
  }
  std::unique_ptr<PostgresAuditStore> store = Open();
  ASSERT_NE(store, nullptr);
  Batch batch;
  batch.Add(MakeEvent("e2"));
  auto result = store->Append({batch.pending}, absl::Now());
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->submissions[0].events[0].sequence, 2);
  ExpectOneGapFreeChain(*store, {"e1", "e2"});
}

// Another writer holding the chain's lock too long: the Append gives up after lock_timeout
// with UNAVAILABLE (nothing written) and succeeds once the lock is free.
TEST_F(PostgresAuditStoreTest, AnAppendWaitingBeyondTheLockTimeoutIsUnavailable) {
  ASSERT_NE(Open(), nullptr);  // creates the schema
  PostgresAuditStore::Options options;
  options.uri = uri_;
  options.lock_timeout = absl::Milliseconds(100);
  absl::StatusOr<std::unique_ptr<PostgresAuditStore>> store = PostgresAuditStore::Open(options);
  ASSERT_THAT(store, IsOk());
  absl::StatusOr<std::unique_ptr<Connection>> holder = Connection::Open(uri_);
  ASSERT_THAT(holder, IsOk());
  ASSERT_THAT((*holder)->ExecScript("BEGIN; SELECT 1 FROM audit_head WHERE id = 1 FOR UPDATE"),
              IsOk());
  Batch batch;
  batch.Add(MakeEvent("e1"));
  EXPECT_THAT((*store)->Append({batch.pending}, absl::Now()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("55P03")));
  ASSERT_THAT((*holder)->ExecScript("COMMIT"), IsOk());
  auto result = (*store)->Append({batch.pending}, absl::Now());
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->submissions[0].events[0].sequence, 1);
  ExpectOneGapFreeChain(**store, {"e1"});
}

TEST(PostgresAuditStoreOptionsTest, AMissingUriIsInvalid) {
  EXPECT_THAT(PostgresAuditStore::Open(PostgresAuditStore::Options{}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("uri")));
}

// The cluster stops under the store: appends and reads are UNAVAILABLE (what AuditLog reports
// as audit_unavailable), nothing is half-written; once it is back, the same store object goes
// on with the chain.
TEST(PostgresAuditStoreConnectionLossTest, UnavailableWhileDownAndTheSameStoreResumes) {
  absl::StatusOr<::sharedos::testing::OwnedDatabase> owned =
      ::sharedos::testing::CreateClusterWithDatabase("audit");
  ASSERT_THAT(owned, IsOk());
  PostgresCluster& cluster = *owned->cluster;
  absl::StatusOr<std::unique_ptr<PostgresAuditStore>> opened = OpenStore(owned->uri);
  ASSERT_THAT(opened, IsOk());
  AuditStore& store = **opened;
  Batch before, during, after;
  before.Add(MakeEvent("before"));
  during.Add(MakeEvent("during"));
  after.Add(MakeEvent("after"));
  ASSERT_THAT(store.Append({before.pending}, absl::Now()), IsOk());
  ASSERT_THAT(store.GetHead(), IsOk());  // a reader connection is idle in the pool

  ASSERT_THAT(cluster.Stop(), IsOk());
  EXPECT_THAT(store.Append({during.pending}, absl::Now()),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(store.GetHead(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(store.Query(AuditFilter(), 0, 10), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(store.Verify(std::nullopt, std::nullopt), StatusIs(absl::StatusCode::kUnavailable));

  ASSERT_THAT(cluster.Start(), IsOk());
  auto resumed = store.Append({after.pending, during.pending}, absl::Now());
  ASSERT_THAT(resumed, IsOk());
  EXPECT_EQ(resumed->submissions[0].events[0].sequence, 2);
  EXPECT_EQ(resumed->submissions[1].events[0].sequence, 3);
  ExpectOneGapFreeChain(store, {"before", "after", "during"});
}

}  // namespace
}  // namespace sharedos::audit::storage
