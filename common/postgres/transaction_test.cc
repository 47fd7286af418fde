#include "common/postgres/transaction.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/postgres/connection.h"
#include "common/status/status_macros.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_fixture.h"

namespace sharedos::common::postgres {
namespace {

using ::testing::HasSubstr;
using Isolation = TransactionOptions::Isolation;

class TransactionTest : public ::sharedos::testing::PostgresConnectionTest {
 protected:
  void SetUp() override {
    PostgresConnectionTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_THAT(conn_->ExecScript("CREATE TABLE counter (id INTEGER PRIMARY KEY, n BIGINT);"
                                  "INSERT INTO counter VALUES (1, 0)"),
                IsOk());
  }

  std::unique_ptr<Connection> Open() {
    absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open(uri_);
    EXPECT_THAT(conn, IsOk());
    return conn.ok() ? *std::move(conn) : nullptr;
  }

  int64_t Count(Connection& conn) {
    absl::StatusOr<Result> result = conn.Exec("SELECT n FROM counter WHERE id = 1");
    EXPECT_THAT(result, IsOk());
    return result.ok() && result->rows() == 1 ? result->Int64(0, 0) : -1;
  }
};

TEST_F(TransactionTest, CommitMakesWritesVisibleAndDestructionRollsBack) {
  {
    absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_);
    ASSERT_THAT(txn, IsOk());
    ASSERT_THAT(conn_->Exec("UPDATE counter SET n = n + 1"), IsOk());
    EXPECT_THAT(Transaction::Begin(*conn_), StatusIs(absl::StatusCode::kInternal));
    ASSERT_THAT(txn->Commit(), IsOk());
    EXPECT_FALSE(txn->active());
    EXPECT_THAT(txn->Commit(), StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  {
    absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_);
    ASSERT_THAT(txn, IsOk());
    ASSERT_THAT(conn_->Exec("UPDATE counter SET n = n + 100"), IsOk());
  }
  EXPECT_FALSE(conn_->InTransaction());
  EXPECT_EQ(Count(*conn_), 1);
}

TEST_F(TransactionTest, CommittingAfterAFailedStatementRollsBack) {
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_);
  ASSERT_THAT(txn, IsOk());
  ASSERT_THAT(conn_->Exec("UPDATE counter SET n = n + 1"), IsOk());
  EXPECT_THAT(conn_->Exec("SELEC 1"), StatusIs(absl::StatusCode::kInternal));
  EXPECT_THAT(txn->Commit(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("rolled back")));
  EXPECT_EQ(Count(*conn_), 0);
}

TEST_F(TransactionTest, ReadOnlyTransactionsRefuseWrites) {
  TransactionOptions options;
  options.read_only = true;
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, options);
  ASSERT_THAT(txn, IsOk());
  EXPECT_THAT(conn_->Exec("UPDATE counter SET n = 5"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("SQLSTATE 25006")));
}

// A real serialization failure: the body reads the counter in a REPEATABLE READ snapshot, then
// (first attempt only) another connection commits an update of that row, so the body's own
// update is refused with SQLSTATE 40001; the retry starts a fresh snapshot and succeeds.
TEST_F(TransactionTest, SerializationFailuresAreRetriedInAFreshTransaction) {
  std::unique_ptr<Connection> other = Open();
  ASSERT_NE(other, nullptr);
  int attempts = 0;
  TransactionOptions options;
  options.isolation = Isolation::kRepeatableRead;
  const absl::Status status = RunInTransaction(*conn_, options, [&](Connection& conn) {
    ++attempts;
    RETURN_IF_ERROR(conn.Exec("SELECT n FROM counter WHERE id = 1").status());
    if (attempts == 1) {
      RETURN_IF_ERROR(other->Exec("UPDATE counter SET n = n + 10 WHERE id = 1").status());
    }
    return conn.Exec("UPDATE counter SET n = n + 1 WHERE id = 1").status();
  });
  EXPECT_THAT(status, IsOk());
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(Count(*conn_), 11);
}

TEST_F(TransactionTest, RetriesStopAfterMaxAttempts) {
  std::unique_ptr<Connection> other = Open();
  ASSERT_NE(other, nullptr);
  int attempts = 0;
  TransactionOptions options;
  options.isolation = Isolation::kSerializable;
  RetryOptions retry;
  retry.max_attempts = 3;
  const absl::Status status = RunInTransaction(
      *conn_, options,
      [&](Connection& conn) {
        ++attempts;
        RETURN_IF_ERROR(conn.Exec("SELECT n FROM counter WHERE id = 1").status());
        RETURN_IF_ERROR(other->Exec("UPDATE counter SET n = n + 10 WHERE id = 1").status());
        return conn.Exec("UPDATE counter SET n = n + 1 WHERE id = 1").status();
      },
      retry);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kAborted, HasSubstr("after 3 attempts")));
  EXPECT_EQ(attempts, 3);
  EXPECT_EQ(Count(*conn_), 30);  // Only the other connection's updates landed.
}

TEST_F(TransactionTest, OtherErrorsAreNotRetried) {
  int attempts = 0;
  const absl::Status status = RunInTransaction(*conn_, {}, [&](Connection& conn) {
    ++attempts;
    RETURN_IF_ERROR(conn.Exec("UPDATE counter SET n = n + 1").status());
    return absl::NotFoundError("no such thing");
  });
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(attempts, 1);
  EXPECT_EQ(Count(*conn_), 0);
}

}  // namespace
}  // namespace sharedos::common::postgres
