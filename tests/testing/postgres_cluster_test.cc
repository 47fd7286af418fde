#include "tests/testing/postgres_cluster.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "common/postgres/connection.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::testing {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::common::postgres::Connection;
using ::sharedos::common::postgres::Result;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TEST(PostgresClusterTest, ServesDatabasesAsAnUnprivilegedUserAndCleansUp) {
  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster = PostgresCluster::Create();
  ASSERT_THAT(cluster, IsOk());
  const std::string directory = (*cluster)->directory();
  EXPECT_THAT(directory, StartsWith("/tmp/sharedos-pg."));
  EXPECT_GT((*cluster)->port(), 0);

  absl::StatusOr<std::string> uri = (*cluster)->CreateDatabase("first");
  ASSERT_THAT(uri, IsOk());
  EXPECT_EQ(*uri, (*cluster)->Uri("first"));
  EXPECT_THAT((*cluster)->CreateDatabase("first"), StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT((*cluster)->CreateDatabase("Bad-Name"), StatusIs(absl::StatusCode::kInvalidArgument));
  absl::StatusOr<std::string> fresh = (*cluster)->CreateDatabase();
  ASSERT_THAT(fresh, IsOk());
  EXPECT_NE(*fresh, *uri);

  absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open(*uri);
  ASSERT_THAT(conn, IsOk());
  absl::StatusOr<Result> version = (*conn)->Exec("SELECT current_database()");
  ASSERT_THAT(version, IsOk());
  EXPECT_EQ(version->Bytes(0, 0), "first");

  // The server's files belong to the unprivileged user when the test runs as root.
  struct stat data;
  ASSERT_EQ(stat((directory + "/data").c_str(), &data), 0);
  if (geteuid() == 0) {
    EXPECT_NE(data.st_uid, 0u);
  } else {
    EXPECT_EQ(data.st_uid, geteuid());
  }

  conn->reset();
  cluster->reset();
  EXPECT_NE(access(directory.c_str(), F_OK), 0) << directory << " was not removed";
}

TEST(PostgresClusterTest, StopDropsClientsAndStartServesTheSameData) {
  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster = PostgresCluster::Create();
  ASSERT_THAT(cluster, IsOk());
  absl::StatusOr<std::string> uri = (*cluster)->CreateDatabase("kept");
  ASSERT_THAT(uri, IsOk());
  {
    absl::StatusOr<std::unique_ptr<Connection>> conn = Connection::Open(*uri);
    ASSERT_THAT(conn, IsOk());
    ASSERT_THAT((*conn)->ExecScript("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (7)"),
                IsOk());
    const int port = (*cluster)->port();
    ASSERT_THAT((*cluster)->Stop(), IsOk());
    EXPECT_FALSE((*cluster)->running());
    EXPECT_THAT((*cluster)->Stop(), StatusIs(absl::StatusCode::kFailedPrecondition));
    EXPECT_FALSE((*conn)->healthy());
    EXPECT_THAT((*conn)->Exec("SELECT 1"), StatusIs(absl::StatusCode::kUnavailable));
    EXPECT_THAT(Connection::Open(*uri),
                StatusIs(absl::StatusCode::kUnavailable, HasSubstr("127.0.0.1")));

    ASSERT_THAT((*cluster)->Start(), IsOk());
    EXPECT_EQ((*cluster)->port(), port);
    EXPECT_THAT((*cluster)->Start(), StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  absl::StatusOr<std::unique_ptr<Connection>> again = Connection::Open(*uri);
  ASSERT_THAT(again, IsOk());
  absl::StatusOr<Result> rows = (*again)->Exec("SELECT v FROM t");
  ASSERT_THAT(rows, IsOk());
  ASSERT_EQ(rows->rows(), 1);
  EXPECT_EQ(rows->Int64(0, 0), 7);
}

TEST(PostgresClusterTest, SchemasIsolateTheTablesOfEachUri) {
  absl::StatusOr<PostgresCluster*> cluster = PostgresCluster::Shared();
  ASSERT_THAT(cluster, IsOk());
  absl::StatusOr<std::string> first = (*cluster)->CreateSchema();
  absl::StatusOr<std::string> second = (*cluster)->CreateSchema("second");
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  EXPECT_THAT((*cluster)->CreateSchema("second"), StatusIs(absl::StatusCode::kAlreadyExists));
  absl::StatusOr<std::unique_ptr<Connection>> a = Connection::Open(*first);
  absl::StatusOr<std::unique_ptr<Connection>> b = Connection::Open(*second);
  ASSERT_THAT(a, IsOk());
  ASSERT_THAT(b, IsOk());
  ASSERT_THAT((*a)->ExecScript("CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)"), IsOk());
  ASSERT_THAT((*b)->ExecScript("CREATE TABLE t (v INTEGER)"), IsOk());
  absl::StatusOr<Result> rows = (*b)->Exec("SELECT count(*) FROM t");
  ASSERT_THAT(rows, IsOk());
  EXPECT_EQ(rows->Int64(0, 0), 0);
  absl::StatusOr<Result> schema = (*b)->Exec("SELECT current_schema()::text");
  ASSERT_THAT(schema, IsOk());
  EXPECT_EQ(schema->Bytes(0, 0), "second");
}

// A directory left by a test that died (its owner pid gone) is removed by the next Create;
// one whose owner lives is kept.
TEST(PostgresClusterTest, CreateRemovesDirectoriesOfDeadTests) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);  // `child` is now a pid nobody has.
  char stale[] = "/tmp/sharedos-pg.XXXXXX";
  char live[] = "/tmp/sharedos-pg.XXXXXX";
  ASSERT_NE(mkdtemp(stale), nullptr);
  ASSERT_NE(mkdtemp(live), nullptr);
  std::ofstream(std::string(stale) + "/owner") << child << "\n";
  std::ofstream(std::string(live) + "/owner") << getpid() << "\n";

  absl::StatusOr<std::unique_ptr<PostgresCluster>> cluster = PostgresCluster::Create();
  ASSERT_THAT(cluster, IsOk());
  EXPECT_NE(access(stale, F_OK), 0) << stale << " was kept";
  EXPECT_EQ(access(live, F_OK), 0) << live << " was removed";
  std::filesystem::remove_all(live);
}

TEST(PostgresClusterTest, SharedClusterIsCreatedOnce) {
  absl::StatusOr<PostgresCluster*> first = PostgresCluster::Shared();
  ASSERT_THAT(first, IsOk());
  absl::StatusOr<PostgresCluster*> second = PostgresCluster::Shared();
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(*first, *second);
  EXPECT_TRUE((*first)->running());
}

}  // namespace
}  // namespace sharedos::testing
