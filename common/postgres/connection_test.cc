#include "common/postgres/connection.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
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

// Arrays bind as bigint[] and text[] (NULL elements, empty arrays), e.g. through unnest.
TEST_F(ConnectionTest, ArraysRoundTripInBinary) {
  const std::optional<int64_t> numbers[] = {std::numeric_limits<int64_t>::min(), std::nullopt, 7};
  const absl::string_view texts[] = {"h\xc3\xa9llo", "", "$1 'quoted'"};
  const Param params[] = {Param::Int64Array(numbers), Param::TextArray(texts), Param::TextArray({}),
                          Param::Int64Array({})};
  absl::StatusOr<Result> result = conn_->Exec(
      "SELECT n, t, cardinality($3), cardinality($4) FROM unnest($1, $2) WITH ORDINALITY AS "
      "u(n, t, i) ORDER BY i",
      params);
  ASSERT_THAT(result, IsOk());
  ASSERT_EQ(result->rows(), 3);
  EXPECT_EQ(result->Int64(0, 0), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(result->IsNull(1, 0));
  EXPECT_EQ(result->Int64(2, 0), 7);
  EXPECT_EQ(result->Bytes(0, 1), "h\xc3\xa9llo");
  EXPECT_EQ(result->Bytes(1, 1), "");
  EXPECT_EQ(result->Bytes(2, 1), "$1 'quoted'");
  EXPECT_EQ(result->Int64(0, 2), 0);
  EXPECT_EQ(result->Int64(0, 3), 0);
}

// A prepared statement is prepared once per connection (pg_prepared_statements shows it), runs
// with new values each call, outlives a rolled-back transaction, and reports errors as Exec.
TEST_F(ConnectionTest, PreparedStatementsArePreparedOnceAndRunEachCall) {
  constexpr char kSql[] = "SELECT $1::bigint + 1";
  for (int64_t i = 0; i < 3; ++i) {
    const Param params[] = {Param::Int64(i)};
    absl::StatusOr<Result> result = conn_->ExecPrepared("plus_one", kSql, params);
    ASSERT_THAT(result, IsOk());
    EXPECT_EQ(result->Int64(0, 0), i + 1);
  }
  absl::StatusOr<Result> listed =
      conn_->Exec("SELECT count(*) FROM pg_prepared_statements WHERE name = 'plus_one'");
  ASSERT_THAT(listed, IsOk());
  EXPECT_EQ(listed->Int64(0, 0), 1);

  ASSERT_THAT(conn_->ExecScript("BEGIN"), IsOk());
  const Param params[] = {Param::Int64(41)};
  EXPECT_THAT(conn_->ExecPrepared("plus_one", kSql, params), IsOk());
  ASSERT_THAT(conn_->ExecScript("ROLLBACK"), IsOk());
  absl::StatusOr<Result> after = conn_->ExecPrepared("plus_one", kSql, params);
  ASSERT_THAT(after, IsOk());
  EXPECT_EQ(after->Int64(0, 0), 42);

  const Param text[] = {Param::Text("x")};
  EXPECT_THAT(conn_->ExecPrepared("bad", "SELECT no_such_column", text),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("no_such_column")));
  EXPECT_THAT(conn_->ExecPrepared("missing", "SELECT * FROM no_such_table"), Not(IsOk()));
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
