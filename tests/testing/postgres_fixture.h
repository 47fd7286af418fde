// gtest fixtures for tests on PostgreSQL (tests/testing/postgres_cluster.h): each test gets a
// fresh, empty database on the binary's shared cluster, started by the first test that asks for
// it (initdb and a server of the test's own, as `nobody` when root) and torn down at exit.
//
// Without PostgreSQL's server binaries (tools/setup.sh installs them) SetUp fails the test with
// the cluster's NOT_FOUND, which names what is missing and how to install it (tests on PostgreSQL
// are tagged "postgres", so that a run can filter them out).
//
// Not thread-safe: gtest runs a fixture's SetUp, test and TearDown on one thread.

#ifndef SHAREDOS_TESTS_TESTING_POSTGRES_FIXTURE_H_
#define SHAREDOS_TESTS_TESTING_POSTGRES_FIXTURE_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/postgres/connection.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::testing {

// A fresh database per test: `uri_` names it, `cluster_` is the shared cluster it lives on. A
// subclass that overrides SetUp calls this one first and returns if it failed
// (`if (HasFatalFailure()) return;`).
class PostgresDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PostgresCluster*> cluster = PostgresCluster::Shared();
    ASSERT_THAT(cluster, common::IsOk());
    cluster_ = *cluster;
    absl::StatusOr<std::string> uri = cluster_->CreateDatabase();
    ASSERT_THAT(uri, common::IsOk());
    uri_ = *std::move(uri);
  }

  PostgresCluster* cluster_ = nullptr;
  std::string uri_;
};

// The same, with `conn_` open on the fresh database.
class PostgresConnectionTest : public PostgresDatabaseTest {
 protected:
  void SetUp() override {
    PostgresDatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    absl::StatusOr<std::unique_ptr<common::postgres::Connection>> conn =
        common::postgres::Connection::Open(uri_);
    ASSERT_THAT(conn, common::IsOk());
    conn_ = *std::move(conn);
  }

  std::unique_ptr<common::postgres::Connection> conn_;
};

}  // namespace sharedos::testing

#endif  // SHAREDOS_TESTS_TESTING_POSTGRES_FIXTURE_H_
