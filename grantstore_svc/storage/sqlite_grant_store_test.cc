#include "grantstore_svc/storage/sqlite_grant_store.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/sqlite/database.h"
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
  EXPECT_EQ(version->ColumnInt64(0), 3);
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
