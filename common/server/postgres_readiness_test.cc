// A PostgreSQL store's readiness probe against a real server: up, down while it is stopped
// (within its timeout), up again once it is back.
#include <memory>

#include "absl/time/clock.h"
#include "common/server/dependency_probes.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::common::server {
namespace {

TEST(PostgresReadinessTest, DownWhileTheServerIsStoppedAndUpWhenItIsBack) {
  auto cluster = sharedos::testing::PostgresCluster::Create();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  DependencyCheck check = StoreDependency((*cluster)->Uri());
  EXPECT_TRUE(check.probe(absl::Seconds(1)).ok());

  ASSERT_TRUE((*cluster)->Stop().ok());
  const absl::Time start = absl::Now();
  EXPECT_EQ(check.probe(absl::Seconds(1)).code(), absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));

  ASSERT_TRUE((*cluster)->Start().ok());
  EXPECT_TRUE(check.probe(absl::Seconds(1)).ok());
}

}  // namespace
}  // namespace sharedos::common::server
