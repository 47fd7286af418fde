#include "grantstore_svc/storage/sqlite_grant_store.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/sqlite/database.h"
#include "common/sqlite/migrations.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grantstore_svc/storage/grant_store_conformance.h"
#include "gtest/gtest.h"

extern char** environ;

namespace sharedos::grantstore::storage {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Insert;
using testing::TestGrant;

// A fresh file path under TEST_TMPDIR, named after the running test.
std::string TempDbPath(absl::string_view suffix = "") {
  const char* dir = std::getenv("TEST_TMPDIR");
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = absl::StrCat(info->test_suite_name(), ".", info->name(), suffix, ".db");
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const std::string path = absl::StrCat(dir != nullptr ? dir : "/tmp", "/", name);
  for (const char* extension : {"", "-wal", "-shm", "-journal"}) {
    std::remove(absl::StrCat(path, extension).c_str());
  }
  return path;
}

absl::StatusOr<std::unique_ptr<SqliteGrantStore>> OpenFile(const std::string& path) {
  SqliteGrantStore::Options options;
  options.path = path;
  return SqliteGrantStore::Open(options);
}

// --- The conformance suite, on a file and in memory ---

class SqliteFileStore : public testing::GrantStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<GrantStore>> Create() override {
    absl::StatusOr<std::unique_ptr<SqliteGrantStore>> store = OpenFile(TempDbPath());
    if (!store.ok()) return store.status();
    return std::unique_ptr<GrantStore>(*std::move(store));
  }
};

class SqliteMemoryStore : public testing::GrantStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<GrantStore>> Create() override {
    SqliteGrantStore::Options options;
    options.path = ":memory:";
    absl::StatusOr<std::unique_ptr<SqliteGrantStore>> store = SqliteGrantStore::Open(options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<GrantStore>(*std::move(store));
  }
};

// Usage counters at synchronous=NORMAL must keep every guarantee but power-loss durability.
class SqliteFileStoreNormalUsage : public testing::GrantStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<GrantStore>> Create() override {
    SqliteGrantStore::Options options;
    options.path = TempDbPath();
    options.usage_durability = SqliteGrantStore::UsageDurability::kNormal;
    absl::StatusOr<std::unique_ptr<SqliteGrantStore>> store = SqliteGrantStore::Open(options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<GrantStore>(*std::move(store));
  }
};

// Readers mapping the file (PRAGMA mmap_size) must read exactly what the others read.
class SqliteFileStoreMmapReaders : public testing::GrantStoreTestBase {
 protected:
  absl::StatusOr<std::unique_ptr<GrantStore>> Create() override {
    SqliteGrantStore::Options options;
    options.path = TempDbPath();
    options.reader_mmap_bytes = 64 << 20;
    absl::StatusOr<std::unique_ptr<SqliteGrantStore>> store = SqliteGrantStore::Open(options);
    if (!store.ok()) return store.status();
    return std::unique_ptr<GrantStore>(*std::move(store));
  }
};

using Backends = ::testing::Types<SqliteFileStore, SqliteMemoryStore, SqliteFileStoreNormalUsage,
                                  SqliteFileStoreMmapReaders>;

}  // namespace

namespace testing {
INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, GrantStoreConformanceTest, Backends);
}  // namespace testing

namespace {

// --- SQLite specifics ---

TEST(SqliteGrantStoreTest, DataSurvivesReopening) {
  const std::string path = TempDbPath();
  {
    auto store = OpenFile(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT(Insert(**store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
    ASSERT_THAT((*store)->TryConsume("ns", "g1", 5), IsOk());
  }
  auto store = OpenFile(path);
  ASSERT_THAT(store, IsOk());
  EXPECT_THAT((*store)->CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT((*store)->GetUsage("ns", "g1"), IsOkAndHolds(1));
  EXPECT_THAT(Insert(**store, {TestGrant("ns", "g2")}), IsOkAndHolds(2));
}

TEST(SqliteGrantStoreTest, SchemaIsMigratedAndFileIsInWalMode) {
  const std::string path = TempDbPath();
  ASSERT_THAT(OpenFile(path), IsOk());
  auto db = common::sqlite::Database::Open(path);
  ASSERT_THAT(db, IsOk());
  auto version = (*db)->Prepare("SELECT MAX(version) FROM schema_migrations");
  ASSERT_THAT(version, IsOk());
  ASSERT_THAT(version->Step(), IsOkAndHolds(true));
  EXPECT_EQ(version->ColumnInt64(0), 4);
  auto mode = (*db)->Prepare("PRAGMA journal_mode");
  ASSERT_THAT(mode, IsOk());
  ASSERT_THAT(mode->Step(), IsOkAndHolds(true));
  EXPECT_EQ(mode->ColumnText(0), "wal");
}

// docs/adr/0021: a write transaction announces its revision before anything records it, and the
// announcement outlives a transaction that never commits (a process stopped between a change's
// records and its commit).
TEST(SqliteGrantStoreTest, AWriteAnnouncesItsRevisionBeforeItCommits) {
  const std::string path = TempDbPath();
  auto store = OpenFile(path);
  ASSERT_THAT(store, IsOk());
  EXPECT_THAT((*store)->AnnouncedRevision(), IsOkAndHolds(0));
  ASSERT_THAT(Insert(**store, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  EXPECT_THAT((*store)->AnnouncedRevision(), IsOkAndHolds(1));
  {
    auto txn = (*store)->BeginWrite();
    ASSERT_THAT(txn, IsOk());
    EXPECT_EQ((*txn)->revision(), 2);
    // Dropped without a commit: rolled back.
  }
  EXPECT_THAT((*store)->CurrentRevision(), IsOkAndHolds(1));
  EXPECT_THAT((*store)->AnnouncedRevision(), IsOkAndHolds(2));
  // Read again from the file by another opener: the announcement was committed.
  auto reopened = OpenFile(path);
  ASSERT_THAT(reopened, IsOk());
  EXPECT_THAT((*reopened)->AnnouncedRevision(), IsOkAndHolds(2));
  // The next change takes revision 2 again.
  EXPECT_THAT(Insert(**reopened, {TestGrant("ns", "g2")}), IsOkAndHolds(2));
  EXPECT_THAT((*reopened)->AnnouncedRevision(), IsOkAndHolds(2));
}

TEST(SqliteGrantStoreTest, TwoStoresOnOneFileShareRevisionsAndGrants) {
  const std::string path = TempDbPath();
  auto first = OpenFile(path);
  auto second = OpenFile(path);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  ASSERT_THAT(Insert(**first, {TestGrant("ns", "g1")}), IsOkAndHolds(1));
  EXPECT_THAT(Insert(**second, {TestGrant("ns", "g2")}), IsOkAndHolds(2));
  EXPECT_THAT(Insert(**second, {TestGrant("ns", "g1")}),
              StatusIs(absl::StatusCode::kAlreadyExists));
  auto snapshot = (*first)->LoadAuthority("ns", testing::Agent("assistant"),
                                          testing::Human("alice"), std::nullopt, 10);
  ASSERT_THAT(snapshot, IsOk());
  EXPECT_EQ(snapshot->revision, 2);
  EXPECT_THAT(testing::Ids(snapshot->grants), ElementsAre("g1", "g2"));
}

TEST(SqliteGrantStoreTest, AWriterWaitingBeyondTheBusyTimeoutIsUnavailable) {
  const std::string path = TempDbPath();
  auto holder = OpenFile(path);
  ASSERT_THAT(holder, IsOk());
  SqliteGrantStore::Options options;
  options.path = path;
  options.busy_timeout = absl::Milliseconds(1);
  auto impatient = SqliteGrantStore::Open(options);
  ASSERT_THAT(impatient, IsOk());
  auto txn = (*holder)->BeginWrite();
  ASSERT_THAT(txn, IsOk());
  EXPECT_THAT((*impatient)->BeginWrite(), StatusIs(absl::StatusCode::kUnavailable));
  // Readers are not blocked by the open write transaction (WAL).
  EXPECT_THAT((*impatient)->CurrentRevision(), IsOkAndHolds(0));
}

// Runs consume_worker; returns how many uses it spent.
class Worker {
 public:
  Worker(const std::string& db, int max_uses, int attempts) {
    const std::string binary =
        absl::StrCat(std::getenv("TEST_SRCDIR"), "/sharedos/grantstore_svc/storage/consume_worker");
    int out[2];
    if (pipe(out) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    const std::string max = absl::StrCat(max_uses);
    const std::string count = absl::StrCat(attempts);
    std::vector<char*> argv = {const_cast<char*>(binary.c_str()),
                               const_cast<char*>(db.c_str()),
                               const_cast<char*>("ns"),
                               const_cast<char*>("g1"),
                               const_cast<char*>(max.c_str()),
                               const_cast<char*>(count.c_str()),
                               nullptr};
    spawned_ = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ) == 0;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    out_ = out[0];
  }

  // The worker's count, or -1 when it failed.
  int Join() {
    if (!spawned_) return -1;
    std::string output;
    char buffer[256];
    ssize_t n;
    while ((n = read(out_, buffer, sizeof(buffer))) > 0) output.append(buffer, n);
    close(out_);
    int status = 0;
    waitpid(pid_, &status, 0);
    int consumed = -1;
    absl::string_view text = absl::StripAsciiWhitespace(output);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        !absl::ConsumePrefix(&text, "consumed ") || !absl::SimpleAtoi(text, &consumed)) {
      return -1;
    }
    return consumed;
  }

 private:
  bool spawned_ = false;
  pid_t pid_ = 0;
  int out_ = -1;
};

TEST(SqliteGrantStoreTest, ConcurrentProcessesConsumeExactlyMaxUses) {
  const std::string path = TempDbPath();
  {
    auto store = OpenFile(path);
    ASSERT_THAT(store, IsOk());
    ASSERT_THAT(Insert(**store, {TestGrant("ns", "g1")}), IsOk());
  }
  constexpr int kWorkers = 4;
  constexpr int kAttempts = 60;
  constexpr int kMaxUses = 150;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < kWorkers; ++i) {
    workers.push_back(std::make_unique<Worker>(path, kMaxUses, kAttempts));
  }
  // In-process threads of this process compete too.
  auto local = OpenFile(path);
  ASSERT_THAT(local, IsOk());
  int consumed = 0;
  for (int i = 0; i < kAttempts; ++i) {
    auto result = (*local)->TryConsume("ns", "g1", kMaxUses);
    ASSERT_THAT(result, IsOk());
    if (result->consumed) ++consumed;
  }
  for (auto& worker : workers) {
    const int spent = worker->Join();
    ASSERT_GE(spent, 0) << "a worker failed";
    consumed += spent;
  }
  EXPECT_EQ(consumed, kMaxUses);  // 300 attempts for 150 uses.
  EXPECT_THAT((*local)->GetUsage("ns", "g1"), IsOkAndHolds(kMaxUses));
}

// The schema of a grants.db written before migration 4 (migrations 1 to 3 as shipped): `grants`
// a rowid table, an actor's grants found through grants_by_authority.
const common::sqlite::Migration kVersion3Schema[] = {
    {1, R"sql(
CREATE TABLE store_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
INSERT INTO store_revision (id, revision) VALUES (1, 0);
CREATE TABLE grants (
  namespace_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  subject_key TEXT NOT NULL,
  issuer_key TEXT NOT NULL,
  issued_revision INTEGER NOT NULL,
  revoked_revision INTEGER,
  revoked_at_seconds INTEGER,
  revoked_at_nanos INTEGER,
  body BLOB NOT NULL,
  PRIMARY KEY (namespace_id, grant_id)
);
CREATE INDEX grants_by_authority
  ON grants (namespace_id, subject_key, issuer_key, issued_revision);
CREATE TABLE grant_usage (
  namespace_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  uses INTEGER NOT NULL,
  PRIMARY KEY (namespace_id, grant_id)
) WITHOUT ROWID;
CREATE TABLE idempotency_keys (
  idempotency_key TEXT PRIMARY KEY,
  namespace_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE host_policies (
  namespace_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  version TEXT NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (namespace_id, revision)
);
CREATE INDEX host_policies_by_version ON host_policies (namespace_id, version);
CREATE TABLE escalations (
  escalation_id TEXT PRIMARY KEY,
  namespace_id TEXT NOT NULL,
  status INTEGER NOT NULL,
  recorded_revision INTEGER NOT NULL UNIQUE,
  resolved_revision INTEGER,
  resolution_fingerprint BLOB,
  body BLOB NOT NULL
);
CREATE INDEX escalations_by_namespace ON escalations (namespace_id, recorded_revision);
CREATE INDEX escalations_by_status ON escalations (namespace_id, status, recorded_revision);
)sql"},
    {2, R"sql(
CREATE TABLE credentials (
  credential_id TEXT PRIMARY KEY,
  token_sha256 TEXT NOT NULL UNIQUE,
  revoked INTEGER NOT NULL,
  revision INTEGER NOT NULL,
  body BLOB NOT NULL
);
)sql"},
    {3, R"sql(
CREATE TABLE revision_announcement (id INTEGER PRIMARY KEY CHECK (id = 1),
                                    revision INTEGER NOT NULL);
INSERT INTO revision_announcement (id, revision) SELECT 1, revision FROM store_revision;
)sql"},
};

// A version 3 file as the store before migration 4 wrote it (its INSERT, so rowids in issue
// order): revision 1 issues m, other-1 (bob), z, x (from carol), a; revision 2 issues b and
// installs a policy; revision 3 revokes z. m has 2 uses; namespace other-ns holds q.
void WriteVersion3File(const std::string& path) {
  auto db = common::sqlite::Database::Open(path);
  ASSERT_THAT(db, IsOk());
  ASSERT_THAT(common::sqlite::Migrate(**db, kVersion3Schema), IsOk());
  struct Row {
    const char* namespace_id;
    const char* id;
    const char* subject;
    const char* issuer;
    int64_t revision;
  };
  const Row rows[] = {
      {"ns", "m", "assistant", "alice", 1}, {"ns", "other-1", "bob", "alice", 1},
      {"ns", "z", "assistant", "alice", 1}, {"ns", "x", "assistant", "carol", 1},
      {"ns", "a", "assistant", "alice", 1}, {"other-ns", "q", "assistant", "alice", 1},
      {"ns", "b", "assistant", "alice", 2}};
  for (const Row& row : rows) {
    auto insert = (*db)->Prepare(
        "INSERT INTO grants (namespace_id, grant_id, subject_key, issuer_key, issued_revision, "
        "body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    ASSERT_THAT(insert, IsOk());
    ASSERT_THAT(insert->BindText(1, row.namespace_id), IsOk());
    ASSERT_THAT(insert->BindText(2, row.id), IsOk());
    ASSERT_THAT(insert->BindText(3, absl::StrCat("agent:", row.subject)), IsOk());
    ASSERT_THAT(insert->BindText(4, absl::StrCat("human:", row.issuer)), IsOk());
    ASSERT_THAT(insert->BindInt64(5, row.revision), IsOk());
    ASSERT_THAT(
        insert->BindBlob(
            6, TestGrant(row.namespace_id, row.id, row.subject, row.issuer).SerializeAsString()),
        IsOk());
    ASSERT_THAT(insert->Step(), IsOk());
  }
  ASSERT_THAT((*db)->Exec("INSERT INTO host_policies (namespace_id, revision, version, body) "
                          "VALUES ('ns', 2, 'v1', X'')"),
              IsOk());
  ASSERT_THAT((*db)->Exec("UPDATE grants SET revoked_revision = 3, revoked_at_seconds = "
                          "1700000100, revoked_at_nanos = 5 WHERE namespace_id = 'ns' AND "
                          "grant_id = 'z'"),
              IsOk());
  ASSERT_THAT((*db)->Exec("INSERT INTO grant_usage (namespace_id, grant_id, uses) VALUES ('ns', "
                          "'m', 2)"),
              IsOk());
  ASSERT_THAT((*db)->Exec("UPDATE store_revision SET revision = 3"), IsOk());
  ASSERT_THAT((*db)->Exec("UPDATE revision_announcement SET revision = 3"), IsOk());
}

// What the store answers about WriteVersion3File's grants, before and after a write of its own.
void ExpectVersion3Answers(SqliteGrantStore& store) {
  const auto assistant = testing::Agent("assistant");
  const auto alice = testing::Human("alice");
  EXPECT_THAT(store.CurrentRevision(), IsOkAndHolds(3));
  EXPECT_THAT(store.AnnouncedRevision(), IsOkAndHolds(3));
  const std::vector<std::vector<std::string>> expected = {
      {}, {"m", "z", "a"}, {"m", "z", "a", "b"}, {"m", "a", "b"}};
  for (int64_t revision = 0; revision <= 3; ++revision) {
    auto snapshot = store.LoadAuthority("ns", assistant, alice, revision, 10);
    ASSERT_THAT(snapshot, IsOk());
    EXPECT_EQ(testing::Ids(snapshot->grants), expected[revision]) << "at revision " << revision;
    EXPECT_EQ(snapshot->host_policy.has_value(), revision >= 2);
  }
  auto limited = store.LoadAuthority("ns", assistant, alice, 2, 2);
  ASSERT_THAT(limited, IsOk());
  EXPECT_THAT(testing::Ids(limited->grants), ElementsAre("m", "z"));
  auto latest = store.LoadAuthority("ns", assistant, alice, std::nullopt, 10);
  ASSERT_THAT(latest, IsOk());
  ASSERT_EQ(latest->grants.size(), 3u);
  EXPECT_EQ(latest->grants[0].SerializeAsString(), TestGrant("ns", "m").SerializeAsString());
  auto bob = store.LoadAuthority("ns", testing::Agent("bob"), alice, std::nullopt, 10);
  ASSERT_THAT(bob, IsOk());
  EXPECT_THAT(testing::Ids(bob->grants), ElementsAre("other-1"));
  auto carol = store.LoadAuthority("ns", assistant, testing::Human("carol"), std::nullopt, 10);
  ASSERT_THAT(carol, IsOk());
  EXPECT_THAT(testing::Ids(carol->grants), ElementsAre("x"));
  auto other = store.LoadAuthority("other-ns", assistant, alice, std::nullopt, 10);
  ASSERT_THAT(other, IsOk());
  EXPECT_THAT(testing::Ids(other->grants), ElementsAre("q"));

  auto z = store.GetGrant("ns", "z", std::nullopt);
  ASSERT_THAT(z, IsOk());
  ASSERT_TRUE(z->has_value());
  EXPECT_EQ((*z)->issued_revision, 1);
  EXPECT_EQ((*z)->revoked_revision, 3);
  EXPECT_EQ((*z)->grant.revoked_at().seconds(), 1700000100);
  EXPECT_EQ((*z)->grant.revoked_at().nanos(), 5);
  auto z_before = store.GetGrant("ns", "z", 2);
  ASSERT_THAT(z_before, IsOk());
  ASSERT_TRUE(z_before->has_value());
  EXPECT_FALSE((*z_before)->grant.has_revoked_at());
  auto b_before = store.GetGrant("ns", "b", 1);
  ASSERT_THAT(b_before, IsOk());
  EXPECT_FALSE(b_before->has_value());

  GrantQuery query;
  query.namespace_id = "ns";
  query.include_revoked = true;
  query.limit = 100;
  auto listed = store.ListGrants(query);
  ASSERT_THAT(listed, IsOk());
  EXPECT_EQ(testing::Ids(*listed), (std::vector<std::string>{"a", "b", "m", "other-1", "x", "z"}));
  query.include_revoked = false;
  query.subject = assistant;
  query.issuer = alice;
  listed = store.ListGrants(query);
  ASSERT_THAT(listed, IsOk());
  EXPECT_EQ(testing::Ids(*listed), (std::vector<std::string>{"a", "b", "m"}));

  const std::vector<std::string> ids = {"a", "z", "q", "nope"};
  auto check = store.CheckRevocations("ns", ids);
  ASSERT_THAT(check, IsOk());
  EXPECT_THAT(check->revoked_grant_ids, ElementsAre("z", "q", "nope"));
  EXPECT_THAT(store.GetUsage("ns", "m"), IsOkAndHolds(2));
  EXPECT_THAT(store.GetUsage("ns", "a"), IsOkAndHolds(0));
  EXPECT_THAT(store.GetUsage("ns", "q"), StatusIs(absl::StatusCode::kNotFound));
}

// Migration 4 (docs/adr/0025): a file written by the version 3 schema opens, is migrated once
// (grants rebuilt WITHOUT ROWID, clustered by actor) and answers exactly as before; writes go on
// from where it was.
TEST(SqliteGrantStoreTest, AVersion3FileIsMigratedOnceAndAnswersAsBefore) {
  const std::string path = TempDbPath();
  WriteVersion3File(path);
  {
    auto store = OpenFile(path);
    ASSERT_THAT(store, IsOk());
    // The rewrite's WAL was checkpointed and truncated at open.
    std::error_code error;
    EXPECT_EQ(std::filesystem::file_size(absl::StrCat(path, "-wal"), error), 0u);
    EXPECT_FALSE(error) << error.message();
    ExpectVersion3Answers(**store);
    // Writes go on: ids stay unique in their namespace, a new grant loads after the old ones.
    EXPECT_THAT(Insert(**store, {TestGrant("ns", "z", "bob")}),
                StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("\"z\"")));
    auto used = (*store)->TryConsume("ns", "m", 3);
    ASSERT_THAT(used, IsOk());
    EXPECT_TRUE(used->consumed);
    EXPECT_EQ(used->uses, 3);
    used = (*store)->TryConsume("ns", "m", 3);
    ASSERT_THAT(used, IsOk());
    EXPECT_FALSE(used->consumed);
    ASSERT_THAT(Insert(**store, {TestGrant("ns", "c"), TestGrant("ns", "0")}), IsOkAndHolds(4));
    auto snapshot = (*store)->LoadAuthority("ns", testing::Agent("assistant"),
                                            testing::Human("alice"), std::nullopt, 10);
    ASSERT_THAT(snapshot, IsOk());
    EXPECT_THAT(testing::Ids(snapshot->grants), ElementsAre("m", "a", "b", "c", "0"));
  }
  auto db = common::sqlite::Database::Open(path);
  ASSERT_THAT(db, IsOk());
  auto schema = (*db)->Prepare(
      "SELECT (SELECT MAX(version) FROM schema_migrations), (SELECT COUNT(*) FROM "
      "schema_migrations), (SELECT sql FROM sqlite_master WHERE name = 'grants'), (SELECT "
      "COUNT(*) FROM sqlite_master WHERE name = 'grants_by_authority'), (SELECT COUNT(*) FROM "
      "sqlite_master WHERE name = 'grants_by_id')");
  ASSERT_THAT(schema, IsOk());
  ASSERT_THAT(schema->Step(), IsOkAndHolds(true));
  EXPECT_EQ(schema->ColumnInt64(0), 4);
  EXPECT_EQ(schema->ColumnInt64(1), 4);
  EXPECT_THAT(std::string(schema->ColumnText(2)), HasSubstr("WITHOUT ROWID"));
  EXPECT_EQ(schema->ColumnInt64(3), 0);
  EXPECT_EQ(schema->ColumnInt64(4), 1);
  // Opened again: nothing more to migrate, and the same answers (plus the write above).
  auto reopened = OpenFile(path);
  ASSERT_THAT(reopened, IsOk());
  EXPECT_THAT((*reopened)->CurrentRevision(), IsOkAndHolds(4));
  auto again =
      (*reopened)->LoadAuthority("ns", testing::Agent("assistant"), testing::Human("alice"), 3, 10);
  ASSERT_THAT(again, IsOk());
  EXPECT_THAT(testing::Ids(again->grants), ElementsAre("m", "a", "b"));
  auto count = (*db)->Prepare("SELECT COUNT(*) FROM schema_migrations");
  ASSERT_THAT(count, IsOk());
  ASSERT_THAT(count->Step(), IsOkAndHolds(true));
  EXPECT_EQ(count->ColumnInt64(0), 4);
}

// LoadAuthority reads the clustered key, never a scan of the table or a second index.
TEST(SqliteGrantStoreTest, LoadAuthorityReadsOneRangeOfTheClusteredKey) {
  const std::string path = TempDbPath();
  ASSERT_THAT(OpenFile(path), IsOk());
  auto db = common::sqlite::Database::Open(path);
  ASSERT_THAT(db, IsOk());
  auto plan = (*db)->Prepare(
      "EXPLAIN QUERY PLAN SELECT body FROM grants WHERE namespace_id = ?1 AND subject_key = ?2 "
      "AND issuer_key = ?3 AND issued_revision <= ?4 AND (revoked_revision IS NULL OR "
      "revoked_revision > ?4) ORDER BY issued_revision, issue_order LIMIT ?5");
  ASSERT_THAT(plan, IsOk());
  std::string details;
  while (true) {
    auto row = plan->Step();
    ASSERT_THAT(row, IsOk());
    if (!*row) break;
    absl::StrAppend(&details, plan->ColumnText(3), "\n");
  }
  EXPECT_THAT(details, HasSubstr("SEARCH grants USING PRIMARY KEY (namespace_id=? AND "
                                 "subject_key=? AND issuer_key=? AND issued_revision<?)"));
  EXPECT_THAT(details, ::testing::Not(HasSubstr("TEMP B-TREE")));
}

TEST(SqliteGrantStoreTest, OpeningANewerSchemaIsRefused) {
  const std::string path = TempDbPath();
  ASSERT_THAT(OpenFile(path), IsOk());
  {
    auto db = common::sqlite::Database::Open(path);
    ASSERT_THAT(db, IsOk());
    ASSERT_THAT((*db)->Exec("INSERT INTO schema_migrations (version, applied_at) VALUES (99, "
                            "'2030-01-01T00:00:00Z')"),
                IsOk());
  }
  EXPECT_THAT(OpenFile(path), StatusIs(absl::StatusCode::kFailedPrecondition));
}

}  // namespace
}  // namespace sharedos::grantstore::storage
