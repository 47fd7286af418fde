#include "grantstore_svc/storage/postgres_grant_store.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/postgres/connection.h"
#include "common/postgres/migrations.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grantstore_svc/storage/grant_store_conformance.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/process.h"

namespace sharedos::grantstore::storage {
namespace {

using ::sharedos::common::DeterministicBytes;
using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::sharedos::testing::PostgresCluster;
using testing::Agent;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Human;
using testing::Ids;
using testing::Insert;
using testing::TestGrant;

// A fresh database, or a fresh schema (a store sharing a database with others, far cheaper), on
// the binary's shared cluster.
using ::sharedos::testing::FreshDatabase;
using ::sharedos::testing::FreshSchema;

absl::StatusOr<std::unique_ptr<PostgresGrantStore>> OpenStore(const std::string& uri) {
  PostgresGrantStore::Options options;
  options.uri = uri;
  return PostgresGrantStore::Open(options);
}

// --- The conformance suite, each test on its own database ---

class PostgresStore : public testing::GrantStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<GrantStore>> Create() override {
    absl::StatusOr<std::string> uri = FreshDatabase();
    if (!uri.ok()) return uri.status();
    absl::StatusOr<std::unique_ptr<PostgresGrantStore>> store = OpenStore(*uri);
    if (!store.ok()) return store.status();
    return std::unique_ptr<GrantStore>(*std::move(store));
  }
};

// In a schema of a shared database, with one connection at most: every call queues for it, and
// the store still behaves the same.
class PostgresSchemaStoreOneConnection : public testing::GrantStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<GrantStore>> Create() override {
    absl::StatusOr<std::string> uri = FreshSchema();
    if (!uri.ok()) return uri.status();
    PostgresGrantStore::Options options;
    options.uri = *uri;
    options.max_connections = 1;
    options.max_idle_connections = 1;
    options.lock_timeout = absl::Seconds(20);
    absl::StatusOr<std::unique_ptr<PostgresGrantStore>> store = PostgresGrantStore::Open(options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<GrantStore>(*std::move(store));
  }
};

using Backends = ::testing::Types<PostgresStore, PostgresSchemaStoreOneConnection>;

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Postgres, GrantStoreConformanceTest, Backends);
}  // namespace testing

namespace {

// --- PostgreSQL specifics ---

class PostgresGrantStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::string> uri = FreshSchema();
    ASSERT_THAT(uri, IsOk());
    uri_ = *uri;
  }

  std::unique_ptr<PostgresGrantStore> Open() {
    absl::StatusOr<std::unique_ptr<PostgresGrantStore>> store = OpenStore(uri_);
    EXPECT_THAT(store, IsOk());
    return store.ok() ? *std::move(store) : nullptr;
  }

  // Every grant's id as of `revision`, in issue order, and the serialized snapshot.
  static absl::StatusOr<std::string> Snapshot(GrantStore& store, int64_t revision) {
    absl::StatusOr<AuthoritySnapshot> snapshot =
        store.LoadAuthority("ns", Agent("assistant"), Human("alice"), revision, 100000);
    if (!snapshot.ok()) return snapshot.status();
    std::string serialized = absl::StrCat(snapshot->revision, ":");
    for (const auto& grant : snapshot->grants) absl::StrAppend(&serialized, grant.id(), ",");
    for (const auto& grant : snapshot->grants) serialized += DeterministicBytes(grant);
    if (snapshot->host_policy.has_value()) serialized += DeterministicBytes(*snapshot->host_policy);
    return serialized;
  }

  std::string uri_;
};

// Replicas (separate stores, so separate connections) and threads within each write at once;
// some of their transactions roll back. Every commit takes a distinct revision, together they
// are exactly 1..N, each grant carries its transaction's revision, and the snapshot at every
// revision is the same during the writes, after them, and after further writes.
TEST_F(PostgresGrantStoreTest, ConcurrentWritersTakeConsecutiveRevisionsAndSnapshotsNeverChange) {
  constexpr int kStores = 3;
  constexpr int kThreadsPerStore = 3;
  constexpr int kTransactionsPerThread = 20;
  std::vector<std::unique_ptr<PostgresGrantStore>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(Open());
    ASSERT_NE(stores.back(), nullptr);
  }

  absl::Mutex mu;
  std::map<int64_t, std::string> committed;  // revision -> grant id
  std::vector<std::pair<int64_t, std::string>> seen_during_writes;
  std::atomic<int> failures{0};
  std::atomic<bool> writing{true};
  std::vector<std::thread> threads;
  for (int s = 0; s < kStores; ++s) {
    for (int t = 0; t < kThreadsPerStore; ++t) {
      threads.emplace_back([&, s, t] {
        for (int i = 0; i < kTransactionsPerThread; ++i) {
          const std::string id = absl::StrCat("g-", s, "-", t, "-", i);
          absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = stores[s]->BeginWrite();
          if (!txn.ok() || !(*txn)->InsertGrant(TestGrant("ns", id)).ok()) {
            failures.fetch_add(1);
            continue;
          }
          if (i % 5 == 4) continue;  // Abandoned: rolled back, its revision given back.
          const int64_t revision = (*txn)->revision();
          if (!(*txn)->Commit().ok()) {
            failures.fetch_add(1);
            continue;
          }
          absl::MutexLock lock(&mu);
          if (!committed.emplace(revision, id).second) failures.fetch_add(1000);
        }
      });
    }
  }
  // A reader on its own store records snapshots of whatever revision is current meanwhile.
  std::unique_ptr<PostgresGrantStore> reader = Open();
  ASSERT_NE(reader, nullptr);
  std::thread reading([&] {
    do {
      absl::StatusOr<int64_t> current = reader->CurrentRevision();
      if (!current.ok()) {
        failures.fetch_add(1);
        return;
      }
      absl::StatusOr<std::string> snapshot = Snapshot(*reader, *current);
      if (!snapshot.ok()) {
        failures.fetch_add(1);
        return;
      }
      seen_during_writes.emplace_back(*current, *std::move(snapshot));
    } while (writing.load());
  });
  for (std::thread& thread : threads) thread.join();
  writing.store(false);
  reading.join();
  ASSERT_EQ(failures.load(), 0);

  const int64_t total = kStores * kThreadsPerStore * kTransactionsPerThread * 4 / 5;
  ASSERT_EQ(static_cast<int64_t>(committed.size()), total);
  EXPECT_EQ(committed.begin()->first, 1);
  EXPECT_EQ(committed.rbegin()->first, total);  // Distinct and within 1..total: no gaps.
  EXPECT_THAT(reader->CurrentRevision(), IsOkAndHolds(total));

  // Each revision's snapshot holds exactly the grants committed at or before it, in order.
  std::vector<std::string> snapshots(total + 1);
  std::vector<std::string> expected_ids;
  for (int64_t revision = 0; revision <= total; ++revision) {
    if (revision > 0) expected_ids.push_back(committed[revision]);
    absl::StatusOr<AuthoritySnapshot> snapshot = stores[revision % kStores]->LoadAuthority(
        "ns", Agent("assistant"), Human("alice"), revision, 100000);
    ASSERT_THAT(snapshot, IsOk());
    ASSERT_EQ(Ids(snapshot->grants), expected_ids) << "at revision " << revision;
    absl::StatusOr<std::string> serialized = Snapshot(*reader, revision);
    ASSERT_THAT(serialized, IsOk());
    snapshots[revision] = *serialized;
  }
  EXPECT_FALSE(seen_during_writes.empty());
  for (const auto& [revision, snapshot] : seen_during_writes) {
    EXPECT_EQ(snapshot, snapshots[revision]) << "read during the writes at " << revision;
  }
  absl::StatusOr<std::optional<StoredGrant>> last =
      reader->GetGrant("ns", committed[total], std::nullopt);
  ASSERT_THAT(last, IsOk());
  ASSERT_TRUE(last->has_value());
  EXPECT_EQ((*last)->issued_revision, total);

  // More writes touching what the snapshots cover: revocations, a policy, new grants.
  ASSERT_THAT(testing::Revoke(*stores[0], "ns", committed[1], absl::FromUnixSeconds(1700000100)),
              IsOkAndHolds(total + 1));
  ASSERT_THAT(testing::PutPolicy(*stores[1], testing::TestPolicy("ns", "v1")),
              IsOkAndHolds(total + 2));
  ASSERT_THAT(Insert(*stores[2], {TestGrant("ns", "late")}), IsOkAndHolds(total + 3));
  for (int64_t revision = 0; revision <= total; ++revision) {
    absl::StatusOr<std::string> again = Snapshot(*stores[revision % kStores], revision);
    ASSERT_THAT(again, IsOk());
    EXPECT_EQ(*again, snapshots[revision]) << "at revision " << revision;
  }
}

// Several stores (replicas) and threads spend one grant: exactly max_uses succeed.
TEST_F(PostgresGrantStoreTest, TryConsumeAcrossStoresNeverExceedsMaxUses) {
  constexpr int kStores = 3;
  constexpr int kThreadsPerStore = 4;
  constexpr int kAttempts = 25;
  constexpr int kMaxUses = 120;
  std::vector<std::unique_ptr<PostgresGrantStore>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(Open());
    ASSERT_NE(stores.back(), nullptr);
  }
  ASSERT_THAT(Insert(*stores[0], {TestGrant("ns", "g1")}), IsOk());
  std::atomic<int> consumed{0};
  std::atomic<int> failures{0};
  std::atomic<int64_t> highest{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < kStores; ++s) {
    for (int t = 0; t < kThreadsPerStore; ++t) {
      threads.emplace_back([&, s] {
        for (int i = 0; i < kAttempts; ++i) {
          absl::StatusOr<ConsumeResult> result = stores[s]->TryConsume("ns", "g1", kMaxUses);
          if (!result.ok()) {
            failures.fetch_add(1);
            continue;
          }
          if (result->consumed) consumed.fetch_add(1);
          int64_t previous = highest.load();
          while (result->uses > previous &&
                 !highest.compare_exchange_weak(previous, result->uses)) {
          }
        }
      });
    }
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(consumed.load(), kMaxUses);  // 300 attempts for 120 uses.
  EXPECT_EQ(highest.load(), kMaxUses);
  for (auto& store : stores) EXPECT_THAT(store->GetUsage("ns", "g1"), IsOkAndHolds(kMaxUses));
  EXPECT_THAT(stores[0]->CurrentRevision(), IsOkAndHolds(1));
}

TEST_F(PostgresGrantStoreTest, SchemaIsRecordedAndANewerSchemaIsRefused) {
  ASSERT_NE(Open(), nullptr);
  absl::StatusOr<std::unique_ptr<common::postgres::Connection>> conn =
      common::postgres::Connection::Open(uri_);
  ASSERT_THAT(conn, IsOk());
  EXPECT_THAT(common::postgres::SchemaVersion(**conn, PostgresGrantStore::kHistoryTable),
              IsOkAndHolds(3));
  // Reopening an up-to-date schema is fine.
  ASSERT_NE(Open(), nullptr);
  ASSERT_THAT((*conn)->ExecScript(absl::StrCat("INSERT INTO ", PostgresGrantStore::kHistoryTable,
                                               " VALUES (99, '2030-01-01T00:00:00Z')")),
              IsOk());
  EXPECT_THAT(OpenStore(uri_),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("schema version 99"), HasSubstr("knows (3)"))));
}

TEST_F(PostgresGrantStoreTest, DataSurvivesReopening) {
  {
    std::unique_ptr<PostgresGrantStore> store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_THAT(Insert(*store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
    ASSERT_THAT(store->TryConsume("ns", "g1", 5), IsOk());
  }
  std::unique_ptr<PostgresGrantStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT(store->GetUsage("ns", "g1"), IsOkAndHolds(1));
  EXPECT_THAT(Insert(*store, {TestGrant("ns", "g2")}), IsOkAndHolds(2));
}

TEST_F(PostgresGrantStoreTest, AWriterWaitingBeyondTheLockTimeoutIsUnavailable) {
  std::unique_ptr<PostgresGrantStore> holder = Open();
  ASSERT_NE(holder, nullptr);
  PostgresGrantStore::Options options;
  options.uri = uri_;
  options.lock_timeout = absl::Milliseconds(100);
  absl::StatusOr<std::unique_ptr<PostgresGrantStore>> impatient = PostgresGrantStore::Open(options);
  ASSERT_THAT(impatient, IsOk());
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = holder->BeginWrite();
  ASSERT_THAT(txn, IsOk());
  EXPECT_THAT((*impatient)->BeginWrite(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("SQLSTATE 55P03")));
  // Readers are not blocked by the open write transaction.
  EXPECT_THAT((*impatient)->CurrentRevision(), IsOkAndHolds(0));
  txn->reset();
  EXPECT_THAT(Insert(**impatient, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
}

TEST_F(PostgresGrantStoreTest, CallsWaitBoundedlyForAFreeConnection) {
  PostgresGrantStore::Options options;
  options.uri = uri_;
  options.max_connections = 1;
  options.lock_timeout = absl::Milliseconds(100);
  absl::StatusOr<std::unique_ptr<PostgresGrantStore>> store = PostgresGrantStore::Open(options);
  ASSERT_THAT(store, IsOk());
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = (*store)->BeginWrite();
  ASSERT_THAT(txn, IsOk());
  absl::StatusOr<int64_t> revision;
  // Another thread: the interface forbids reading through the store while holding a
  // transaction on the same thread.
  std::thread([&] { revision = (*store)->CurrentRevision(); }).join();
  EXPECT_THAT(revision, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("busy")));
  txn->reset();
  EXPECT_THAT((*store)->CurrentRevision(), IsOkAndHolds(0));
}

// --- Revision announcements (docs/adr/0021) ---

// A replica sees another's announcement while that one's write is open (its records may already
// be in the log), and nothing beyond the revision once it committed.
TEST_F(PostgresGrantStoreTest, AReplicaSeesTheAnnouncementOfAnOpenWrite) {
  std::unique_ptr<PostgresGrantStore> writer = Open();
  std::unique_ptr<PostgresGrantStore> peer = Open();
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(peer, nullptr);
  ASSERT_THAT(Insert(*writer, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = writer->BeginWrite();
  ASSERT_THAT(txn, IsOk());
  ASSERT_EQ((*txn)->revision(), 2);
  EXPECT_THAT(peer->CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT(peer->AnnouncedRevision(), IsOkAndHolds(2));
  ASSERT_THAT((*txn)->InsertGrant(TestGrant("ns", "g2")), IsOk());
  ASSERT_THAT((*txn)->Commit(), IsOk());
  EXPECT_THAT(peer->CurrentRevision(), IsOkAndHolds(2));
  EXPECT_THAT(peer->AnnouncedRevision(), IsOkAndHolds(2));
}

// Replicas writing at once (some writes abandoned): every announcement names the revision its
// writer took under the lock, so after the last commit none is left beyond the store's revision,
// and an abandoned last write leaves exactly its own.
TEST_F(PostgresGrantStoreTest, ConcurrentReplicasNeverAnnounceBeyondTheirOwnWrite) {
  constexpr int kStores = 3;
  constexpr int kWritesPerStore = 10;
  std::vector<std::unique_ptr<PostgresGrantStore>> stores;
  for (int i = 0; i < kStores; ++i) {
    stores.push_back(Open());
    ASSERT_NE(stores.back(), nullptr);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < kStores; ++s) {
    threads.emplace_back([&, s] {
      for (int i = 0; i < kWritesPerStore; ++i) {
        absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = stores[s]->BeginWrite();
        if (!txn.ok()) {
          failures.fetch_add(1);
          continue;
        }
        // While this write holds the lock, every replica reads its announcement.
        absl::StatusOr<int64_t> announced;
        std::thread([&] { announced = stores[(s + 1) % kStores]->AnnouncedRevision(); }).join();
        if (!announced.ok() || *announced != (*txn)->revision()) failures.fetch_add(100);
        if (!(*txn)->InsertGrant(TestGrant("ns", absl::StrCat("g-", s, "-", i))).ok()) {
          failures.fetch_add(1);
          continue;
        }
        if (i % 3 == 2) continue;  // Abandoned.
        if (!(*txn)->Commit().ok()) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(failures.load(), 0);
  absl::StatusOr<int64_t> current = stores[0]->CurrentRevision();
  ASSERT_THAT(current, IsOk());
  const int64_t announced_after = *stores[0]->AnnouncedRevision();
  // The last write was committed (announced == current) or abandoned (current + 1).
  EXPECT_TRUE(announced_after == *current || announced_after == *current + 1) << announced_after;
  ASSERT_THAT(Insert(*stores[1], {TestGrant("ns", "last")}), IsOkAndHolds(*current + 1));
  EXPECT_THAT(stores[2]->AnnouncedRevision(), IsOkAndHolds(*current + 1));
}

// What an operator does (docs/operations.md): pg_dump the grant database, later restore it with
// pg_restore --clean. The dump is taken while a write holds the lock, its revision announced:
// whether that write then commits (the usual case: the copy is one change behind) or is abandoned,
// the restored database honours no announcement. Its row was written anew by the restore (its
// xmin is not its announcer's), and a committed write is committed.
TEST(PostgresGrantStoreRestoreTest, ARestoredDumpNeverCarriesAnAnnouncement) {
  absl::StatusOr<PostgresCluster*> cluster = PostgresCluster::Shared();
  ASSERT_THAT(cluster, IsOk());
  for (const bool commit : {true, false}) {
    SCOPED_TRACE(commit ? "the announced write commits" : "the announced write is abandoned");
    absl::StatusOr<std::string> live_uri = (*cluster)->CreateDatabase();
    absl::StatusOr<std::string> restored_uri = (*cluster)->CreateDatabase();
    ASSERT_THAT(live_uri, IsOk());
    ASSERT_THAT(restored_uri, IsOk());
    absl::StatusOr<std::unique_ptr<PostgresGrantStore>> live = OpenStore(*live_uri);
    ASSERT_THAT(live, IsOk());
    ASSERT_THAT(Insert(**live, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
    absl::StatusOr<std::unique_ptr<WriteTransaction>> txn = (*live)->BeginWrite();
    ASSERT_THAT(txn, IsOk());
    ASSERT_THAT((*txn)->InsertGrant(TestGrant("ns", "g2")), IsOk());
    const std::string dump =
        ::sharedos::testing::TempPath(absl::StrCat("grants-", commit, ".dump"));
    const std::string bindir = (*cluster)->bindir();
    ASSERT_EQ(std::system(absl::StrCat(bindir, "/pg_dump --format=custom --file='", dump, "' '",
                                       *live_uri, "'")
                              .c_str()),
              0);
    if (commit) {
      ASSERT_THAT((*txn)->Commit(), IsOk());
    }
    txn->reset();
    EXPECT_THAT((*live)->CurrentRevision(), IsOkAndHolds(commit ? 2 : 1));
    EXPECT_THAT((*live)->AnnouncedRevision(), IsOkAndHolds(2));

    // Restored over a database holding the live schema (pg_restore --clean drops and recreates).
    absl::StatusOr<std::unique_ptr<PostgresGrantStore>> target = OpenStore(*restored_uri);
    ASSERT_THAT(target, IsOk());
    ASSERT_THAT(Insert(**target, {TestGrant("ns", "other")}), IsOkAndHolds(1));
    target->reset();
    ASSERT_EQ(std::system(absl::StrCat(bindir, "/pg_restore --clean --dbname='", *restored_uri,
                                       "' '", dump, "'")
                              .c_str()),
              0);
    absl::StatusOr<std::unique_ptr<PostgresGrantStore>> restored = OpenStore(*restored_uri);
    ASSERT_THAT(restored, IsOk());
    EXPECT_THAT((*restored)->CurrentRevision(), IsOkAndHolds(1));
    EXPECT_THAT((*restored)->AnnouncedRevision(), IsOkAndHolds(1));
    // The restored store works on: its next change takes revision 2.
    EXPECT_THAT(Insert(**restored, {TestGrant("ns", "g3")}), IsOkAndHolds(2));
  }
}

// The row rewritten in place with the same values (what a data-only restore does): not honoured.
TEST_F(PostgresGrantStoreTest, AnAnnouncementRewrittenByAnotherTransactionIsNotHonoured) {
  std::unique_ptr<PostgresGrantStore> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_THAT(Insert(*store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  ASSERT_THAT(store->BeginWrite(), IsOk());  // Abandoned at once: revision 2 announced.
  EXPECT_THAT(store->AnnouncedRevision(), IsOkAndHolds(2));
  absl::StatusOr<std::unique_ptr<common::postgres::Connection>> conn =
      common::postgres::Connection::Open(uri_);
  ASSERT_THAT(conn, IsOk());
  ASSERT_THAT((*conn)->ExecScript("UPDATE revision_announcement SET revision = revision"), IsOk());
  EXPECT_THAT(store->AnnouncedRevision(), IsOkAndHolds(1));
}

// The cluster stops under the store: every call is UNAVAILABLE (including the commit of a
// transaction that was open), nothing hangs; once it is back, the same store object works.
TEST(PostgresGrantStoreConnectionLossTest, UnavailableWhileDownAndTheSameStoreRecovers) {
  absl::StatusOr<::sharedos::testing::OwnedDatabase> owned =
      ::sharedos::testing::CreateClusterWithDatabase("grants");
  ASSERT_THAT(owned, IsOk());
  PostgresCluster& cluster = *owned->cluster;
  absl::StatusOr<std::unique_ptr<PostgresGrantStore>> store = OpenStore(owned->uri);
  ASSERT_THAT(store, IsOk());
  GrantStore& grants = **store;
  ASSERT_THAT(Insert(grants, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  ASSERT_THAT(grants.TryConsume("ns", "g1", 10), IsOk());
  absl::StatusOr<std::unique_ptr<WriteTransaction>> open = grants.BeginWrite();
  ASSERT_THAT(open, IsOk());
  ASSERT_THAT((*open)->InsertGrant(TestGrant("ns", "lost")), IsOk());

  ASSERT_THAT(cluster.Stop(), IsOk());
  EXPECT_THAT((*open)->Commit(), StatusIs(absl::StatusCode::kUnavailable));
  open->reset();
  EXPECT_THAT(grants.CurrentRevision(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(grants.BeginWrite(), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(grants.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 10),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(grants.TryConsume("ns", "g1", 10), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(grants.GetUsage("ns", "g1"), StatusIs(absl::StatusCode::kUnavailable));

  ASSERT_THAT(cluster.Start(), IsOk());
  EXPECT_THAT(grants.CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT(grants.GetGrant("ns", "lost", std::nullopt), IsOkAndHolds(testing::NoValue()));
  EXPECT_THAT(Insert(grants, {TestGrant("ns", "g2")}), IsOkAndHolds(2));
  absl::StatusOr<ConsumeResult> consumed = grants.TryConsume("ns", "g1", 10);
  ASSERT_THAT(consumed, IsOk());
  EXPECT_TRUE(consumed->consumed);
  EXPECT_EQ(consumed->uses, 2);
  absl::StatusOr<AuthoritySnapshot> snapshot =
      grants.LoadAuthority("ns", Agent("assistant"), Human("alice"), std::nullopt, 10);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_THAT(Ids(snapshot->grants), ElementsAre("g1", "g2"));
}

}  // namespace
}  // namespace sharedos::grantstore::storage
