#include "common/sqlite/transaction.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/sqlite/database.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::sqlite {
namespace {

using ::testing::HasSubstr;

class TransactionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ = absl::StrCat(dir != nullptr ? dir : "/tmp", "/",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
    for (const char* extension : {"", "-wal", "-shm"}) {
      std::remove(absl::StrCat(path_, extension).c_str());
    }
    db_ = Open();
    ASSERT_NE(db_, nullptr);
    ASSERT_OK(db_->Exec("CREATE TABLE t (x INTEGER PRIMARY KEY)"));
  }

  std::unique_ptr<Database> Open(const Database::Options& options = Database::Options()) {
    absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path_, options);
    EXPECT_OK(db);
    return db.ok() ? *std::move(db) : nullptr;
  }

  absl::Status Insert(Database& db, int64_t x) {
    absl::StatusOr<Statement> insert = db.Cached("INSERT INTO t VALUES (?)");
    if (!insert.ok()) return insert.status();
    if (absl::Status s = insert->BindInt64(1, x); !s.ok()) return s;
    return insert->Step().status();
  }

  // Counts rows through a second connection, so only committed data is seen.
  int64_t CommittedRows() {
    std::unique_ptr<Database> reader = Open();
    absl::StatusOr<Statement> count = reader->Prepare("SELECT COUNT(*) FROM t");
    EXPECT_OK(count);
    EXPECT_THAT(count->Step(), IsOkAndHolds(true));
    return count->ColumnInt64(0);
  }

  std::string path_;
  std::unique_ptr<Database> db_;
};

TEST_F(TransactionTest, CommitPersists) {
  absl::StatusOr<Transaction> transaction = Transaction::Begin(*db_);
  ASSERT_OK(transaction);
  EXPECT_TRUE(transaction->active());
  EXPECT_TRUE(db_->InTransaction());
  ASSERT_OK(Insert(*db_, 1));
  EXPECT_EQ(CommittedRows(), 0);
  EXPECT_OK(transaction->Commit());
  EXPECT_FALSE(transaction->active());
  EXPECT_FALSE(db_->InTransaction());
  EXPECT_EQ(CommittedRows(), 1);
  EXPECT_THAT(transaction->Commit(),
              StatusIs(absl::StatusCode::kFailedPrecondition, "transaction is no longer active"));
}

TEST_F(TransactionTest, DestructionWithoutCommitRollsBack) {
  {
    absl::StatusOr<Transaction> transaction = Transaction::Begin(*db_);
    ASSERT_OK(transaction);
    ASSERT_OK(Insert(*db_, 1));
  }
  EXPECT_FALSE(db_->InTransaction());
  EXPECT_EQ(CommittedRows(), 0);
  absl::StatusOr<Statement> count = db_->Prepare("SELECT COUNT(*) FROM t");
  ASSERT_OK(count);
  ASSERT_THAT(count->Step(), IsOkAndHolds(true));
  EXPECT_EQ(count->ColumnInt64(0), 0);
}

TEST_F(TransactionTest, EarlyReturnRollsBack) {
  auto write_two = [this]() -> absl::Status {
    absl::StatusOr<Transaction> transaction = Transaction::Begin(*db_);
    if (!transaction.ok()) return transaction.status();
    if (absl::Status s = Insert(*db_, 1); !s.ok()) return s;
    if (absl::Status s = Insert(*db_, 1); !s.ok()) return s;  // Duplicate key.
    return transaction->Commit();
  };
  EXPECT_THAT(write_two(), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_EQ(CommittedRows(), 0);
}

TEST_F(TransactionTest, ExplicitRollback) {
  absl::StatusOr<Transaction> transaction = Transaction::Begin(*db_, Transaction::Mode::kDeferred);
  ASSERT_OK(transaction);
  ASSERT_OK(Insert(*db_, 1));
  EXPECT_OK(transaction->Rollback());
  EXPECT_FALSE(transaction->active());
  EXPECT_FALSE(db_->InTransaction());
  EXPECT_EQ(CommittedRows(), 0);
  EXPECT_THAT(transaction->Rollback(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(TransactionTest, MovedTransactionRollsBackOnce) {
  absl::StatusOr<Transaction> transaction = Transaction::Begin(*db_, Transaction::Mode::kExclusive);
  ASSERT_OK(transaction);
  ASSERT_OK(Insert(*db_, 1));
  {
    Transaction moved = *std::move(transaction);
    EXPECT_FALSE(transaction->active());
    EXPECT_TRUE(moved.active());
  }
  EXPECT_FALSE(db_->InTransaction());
  EXPECT_EQ(CommittedRows(), 0);
}

TEST_F(TransactionTest, TransactionsDoNotNest) {
  absl::StatusOr<Transaction> outer = Transaction::Begin(*db_);
  ASSERT_OK(outer);
  EXPECT_THAT(Transaction::Begin(*db_),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("cannot start a transaction within a "
                                                              "transaction")));
  EXPECT_TRUE(outer->active());
  EXPECT_OK(outer->Commit());
}

TEST_F(TransactionTest, ImmediateBeginIsUnavailableWhileAnotherWriterHoldsTheLock) {
  Database::Options impatient;
  impatient.busy_timeout = absl::ZeroDuration();
  std::unique_ptr<Database> other = Open(impatient);
  ASSERT_NE(other, nullptr);
  absl::StatusOr<Transaction> holder = Transaction::Begin(*db_);
  ASSERT_OK(holder);
  EXPECT_THAT(Transaction::Begin(*other),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("[SQLITE_BUSY 5]")));
  EXPECT_FALSE(other->InTransaction());
  ASSERT_OK(holder->Commit());
  absl::StatusOr<Transaction> retried = Transaction::Begin(*other);
  ASSERT_OK(retried);
  EXPECT_OK(retried->Commit());
}

}  // namespace
}  // namespace sharedos::common::sqlite
