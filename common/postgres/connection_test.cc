#include "common/postgres/connection.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"
#include "tests/testing/postgres_fixture.h"

namespace sharedos::common::postgres {
namespace {

using ::sharedos::testing::PostgresCluster;
using ::testing::HasSubstr;
using ::testing::Not;

// A fresh database on the shared cluster and a connection to it (cluster_, uri_, conn_).
using ConnectionTest = ::sharedos::testing::PostgresConnectionTest;

TEST_F(ConnectionTest, ParametersRoundTripInBinary) {
  const std::string bytes(
      "\0\x01\xff"
      "tail",
      7);
  const Param params[] = {Param::Int64(std::numeric_limits<int64_t>::min()),
                          Param::Int64(-1),
                          Param::Bool(true),
                          Param::Text("h\xc3\xa9llo 'quoted' $1"),
                          Param::Bytes(bytes),
                          Param::Null(Param::Type::kText),
                          Param::OptionalText("set")};
  absl::StatusOr<Result> result =
      conn_->Exec("SELECT $1, $2, $3, $4, $5, $6, $7, 42::integer, 7::smallint", params);
  ASSERT_THAT(result, IsOk());
  ASSERT_EQ(result->rows(), 1);
  EXPECT_EQ(result->Int64(0, 0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(result->Int64(0, 1), -1);
  EXPECT_TRUE(result->Bool(0, 2));
  EXPECT_EQ(result->Bytes(0, 3), "h\xc3\xa9llo 'quoted' $1");
  EXPECT_EQ(result->Bytes(0, 4), bytes);
  EXPECT_TRUE(result->IsNull(0, 5));
  EXPECT_EQ(result->Bytes(0, 6), "set");
  EXPECT_EQ(result->Int64(0, 7), 42);
  EXPECT_EQ(result->Int64(0, 8), 7);
}

TEST_F(ConnectionTest, TextIsNeverCutAtANulByte) {
  // Sent with its length: the server refuses the NUL rather than reading "a" alone.
  const Param params[] = {Param::Text(std::string("a\0b", 3))};
  EXPECT_THAT(conn_->Exec("SELECT $1", params),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("SQLSTATE 22")));
  // The connection stays usable after a statement error (outside a transaction).
  EXPECT_THAT(conn_->Exec("SELECT 1"), IsOk());
}

TEST_F(ConnectionTest, ErrorsAreMappedAndNeverQuoteValues) {
  ASSERT_THAT(conn_->ExecScript("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)"), IsOk());
  const Param row[] = {Param::Text("secret-key"), Param::Int64(1)};
  ASSERT_THAT(conn_->Exec("INSERT INTO t (k, v) VALUES ($1, $2)", row), IsOk());
  absl::StatusOr<Result> again = conn_->Exec("INSERT INTO t (k, v) VALUES ($1, $2)", row);
  EXPECT_THAT(again, StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("SQLSTATE 23505")));
  EXPECT_THAT(again, StatusIs(absl::StatusCode::kAlreadyExists, Not(HasSubstr("secret-key"))));
  const Param null_value[] = {Param::Text("other"), Param::Null(Param::Type::kInt64)};
  EXPECT_THAT(conn_->Exec("INSERT INTO t (k, v) VALUES ($1, $2)", null_value),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("SQLSTATE 23502")));
  EXPECT_THAT(conn_->Exec("SELEC 1"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("SQLSTATE 42601")));
  EXPECT_THAT(conn_->Exec("SELECT * FROM missing"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("SQLSTATE 42P01")));

  absl::StatusOr<Result> updated = conn_->Exec("UPDATE t SET v = v + 1");
  ASSERT_THAT(updated, IsOk());
  EXPECT_EQ(updated->affected_rows(), 1);
}

TEST_F(ConnectionTest, TransactionStateIsReported) {
  EXPECT_FALSE(conn_->InTransaction());
  ASSERT_THAT(conn_->ExecScript("BEGIN"), IsOk());
  EXPECT_TRUE(conn_->InTransaction());
  EXPECT_THAT(conn_->Exec("SELEC 1"), StatusIs(absl::StatusCode::kInternal));
  // Aborted: still in the (failed) transaction block until ROLLBACK.
  EXPECT_TRUE(conn_->InTransaction());
  EXPECT_THAT(conn_->Exec("SELECT 1"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("SQLSTATE 25P02")));
  ASSERT_THAT(conn_->ExecScript("ROLLBACK"), IsOk());
  EXPECT_FALSE(conn_->InTransaction());
  EXPECT_TRUE(conn_->healthy());
}

TEST(ConnectionOpenTest, AnUnreachableServerIsUnavailableWithoutThePassword) {
  absl::StatusOr<PostgresCluster*> cluster = PostgresCluster::Shared();
  ASSERT_THAT(cluster, IsOk());
  // Port 1 on loopback: nothing listens there.
  absl::StatusOr<std::unique_ptr<Connection>> conn =
      Connection::Open("postgresql://postgres:hunter2@127.0.0.1:1/postgres");
  EXPECT_THAT(conn, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("[connection]")));
  EXPECT_THAT(conn, StatusIs(absl::StatusCode::kUnavailable, Not(HasSubstr("hunter2"))));
  EXPECT_THAT(Connection::Open("postgresql://postgres@127.0.0.1:1/postgres?bogus_option=1"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("bogus_option")));
}

TEST(ConnectionLossTest, AServerThatGoesAwayMakesTheConnectionUnhealthyAndUnavailable) {
  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster = PostgresCluster::Create();
  ASSERT_THAT(cluster, IsOk());
  absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open((*cluster)->Uri());
  ASSERT_THAT(conn, IsOk());
  EXPECT_TRUE((*conn)->healthy());
  ASSERT_THAT((*cluster)->Stop(), IsOk());
  EXPECT_FALSE((*conn)->healthy());
  EXPECT_THAT((*conn)->Exec("SELECT 1"), StatusIs(absl::StatusCode::kUnavailable));
  ASSERT_THAT((*cluster)->Start(), IsOk());
  // Broken stays broken; a new connection works.
  EXPECT_THAT((*conn)->Exec("SELECT 1"), StatusIs(absl::StatusCode::kUnavailable));
  absl::StatusOr<std::unique_ptr<Connection>> fresh = Connection::Open((*cluster)->Uri());
  ASSERT_THAT(fresh, IsOk());
  EXPECT_THAT((*fresh)->Exec("SELECT 1"), IsOk());
}

}  // namespace
}  // namespace sharedos::common::postgres
