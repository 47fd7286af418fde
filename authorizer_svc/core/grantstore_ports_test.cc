#include "authorizer_svc/core/grantstore_ports.h"

#include "capability/test_builders.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "gtest/gtest.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::common::IsOk;
using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::sharedos::grantstore::client::CallOptions;
using ::sharedos::grantstore::client::FakeGrantStoreClient;
using Method = ::sharedos::grantstore::client::FakeGrantStoreClient::Method;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::Optional;
using ::testing::Property;

protocol::v1::CapabilityGrant Grant(const std::string& id) {
  return GrantBuilder(id).MaxUses(2).WithCapability(Cap("files", {"docs"}, {"read"}));
}

TEST(GrantStoreUsageCounterTest, ConsumesAndReadsThroughTheStore) {
  FakeGrantStoreClient store;
  store.IssueGrant(Grant("g-1"));
  GrantStoreUsageCounter counter(store, CallOptions{});
  EXPECT_THAT(counter.TryConsume("world-1", "g-1", 2), IsOkAndHolds(true));
  EXPECT_THAT(counter.TryConsume("world-1", "g-1", 2), IsOkAndHolds(true));
  EXPECT_THAT(counter.TryConsume("world-1", "g-1", 2), IsOkAndHolds(false));
  EXPECT_THAT(counter.GetUsage("world-1", "g-1"), IsOkAndHolds(2));
  store.SetDown(true);
  EXPECT_THAT(counter.GetUsage("world-1", "g-1"), StatusIs(absl::StatusCode::kUnavailable));
}

TEST(BatchUsageCounterTest, ReadsEachGrantOnceAndNeverConsumes) {
  FakeGrantStoreClient store;
  store.IssueGrant(Grant("g-1"));
  store.IssueGrant(Grant("g-2"));
  GrantStoreUsageCounter counter(store, CallOptions{});
  BatchUsageCounter batch(counter);
  EXPECT_THAT(batch.GetUsage("world-1", "g-1"), IsOkAndHolds(0));
  EXPECT_THAT(batch.GetUsage("world-1", "g-1"), IsOkAndHolds(0));
  EXPECT_THAT(batch.GetUsage("world-1", "g-2"), IsOkAndHolds(0));
  EXPECT_EQ(store.calls(Method::kGetUsage), 2);
  EXPECT_THAT(batch.TryConsume("world-1", "g-1", 2),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(RevisionDelegationResolverTest, ResolvesAtItsRevisionAndCachesAnswers) {
  FakeGrantStoreClient store;
  const int64_t revision = store.IssueGrant(Grant("g-1"));
  store.IssueGrant(Grant("g-later"));
  RevisionDelegationResolver resolver(store, revision, CallOptions{});
  EXPECT_THAT(resolver.Resolve("world-1", "g-1"),
              IsOkAndHolds(Optional(Property(&protocol::v1::CapabilityGrant::id, Eq("g-1")))));
  EXPECT_THAT(resolver.Resolve("world-1", "g-later"), IsOkAndHolds(Eq(std::nullopt)))
      << "issued after the lease's revision: not found there";
  store.SetDown(true);
  EXPECT_THAT(resolver.Resolve("world-1", "g-1"), IsOk()) << "cached";
  EXPECT_THAT(resolver.Resolve("world-1", "g-other"), StatusIs(absl::StatusCode::kUnavailable))
      << "errors are resolver_failed, and not cached";
  store.SetDown(false);
  EXPECT_THAT(resolver.Resolve("world-1", "g-other"), IsOkAndHolds(Eq(std::nullopt)));
}

TEST(GrantStoreRevocationSourceTest, ReportsRevokedIds) {
  FakeGrantStoreClient store;
  store.IssueGrant(Grant("g-1"));
  store.IssueGrant(Grant("g-2"));
  store.RevokeGrant("world-1", "g-2", absl::UnixEpoch());
  GrantStoreRevocationSource source(store, CallOptions{});
  const std::vector<std::string> ids = {"g-1", "g-2"};
  absl::StatusOr<RevocationResult> checked = source.Check("world-1", ids);
  ASSERT_THAT(checked, IsOk());
  EXPECT_THAT(checked->revoked_grant_ids, ElementsAre("g-2"));
}

}  // namespace
}  // namespace sharedos::authorizer::core
