// The allow path allocates nothing beyond its result: counted with the replaced global
// operator new of tests/testing/allocation_counter (this binary only).

#include <memory>
#include <string>

#include "authorizer_svc/core/bench_world.h"
#include "authorizer_svc/core/capability_authorizer.h"
#include "capability/test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/allocation_counter.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::capability::testing::At;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::testing::CountAllocations;
using testing::BenchCeilings;
using testing::BenchGrants;
using testing::TargetRequirement;

// A usage counter that allocates nothing itself, to isolate the decision path.
class StaticUsage : public UsageCounter {
 public:
  absl::StatusOr<bool> TryConsume(absl::string_view, absl::string_view, int64_t) override {
    return true;
  }
  absl::StatusOr<int64_t> GetUsage(absl::string_view, absl::string_view) override { return 0; }
};

std::shared_ptr<const ResolvedAuthority> Resolve(
    std::vector<protocol::v1::CapabilityGrant> grants) {
  AuthorityResolution resolution =
      AuthorityResolution::Resolve(MakeContext(), std::move(grants), HostPolicyState::Absent());
  EXPECT_TRUE(resolution.resolved()) << resolution.detail();
  return resolution.authority();
}

TEST(AllocationTest, AllowPathAllocatesNothingWithShortIds) {
  const auto authority = Resolve(BenchGrants(256));
  const CapabilityAuthorizer authorizer;
  const auto request = TargetRequirement();
  AuthorizationResult result;
  EXPECT_EQ(CountAllocations([&] { result = authorizer.Authorize(*authority, request); }), 0);
  EXPECT_TRUE(result.allowed);
  EXPECT_EQ(result.matched_grant_id, "g255");
  EXPECT_EQ(CountAllocations([&] {
              result = authorizer.Authorize(*authority, request, {At(60), false});
            }),
            0);
  EXPECT_TRUE(result.allowed);
}

TEST(AllocationTest, BoundedAllowAndCeilingAllocateNothing) {
  std::vector<protocol::v1::CapabilityGrant> grants = BenchGrants(64);
  grants.back().mutable_constraints()->set_max_uses(10);
  HostPolicyRule rule;
  rule.id = "elsewhere";
  rule.resource_namespace = "files";
  rule.path = {"private"};
  rule.scope = protocol::v1::SCOPE_DESCENDANTS;
  AuthorityResolution resolution = AuthorityResolution::Resolve(
      MakeContext(), grants, HostPolicyState::Loaded(HostPolicy{"v1", {rule}}));
  ASSERT_TRUE(resolution.resolved());
  StaticUsage usage;
  CapabilityAuthorizer::Options options;
  options.usage_counter = &usage;
  const CapabilityAuthorizer authorizer(options);
  const auto request = TargetRequirement();
  AuthorizationResult result;
  EXPECT_EQ(CountAllocations([&] {
              result = authorizer.Authorize(*resolution.authority(), request, {std::nullopt, true});
            }),
            0);
  EXPECT_TRUE(result.consumed);
}

TEST(AllocationTest, LongGrantIdCostsExactlyTheResultString) {
  const auto authority = Resolve(BenchGrants(8, "a-grant-id-longer-than-the-sso-buffer-"));
  const CapabilityAuthorizer authorizer;
  const auto request = TargetRequirement();
  AuthorizationResult result;
  EXPECT_EQ(CountAllocations([&] { result = authorizer.Authorize(*authority, request); }), 1);
  EXPECT_TRUE(result.allowed);
}

TEST(AllocationTest, DiscoveryAllocatesNothing) {
  const auto authority = Resolve(BenchGrants(256));
  const CapabilityAuthorizer authorizer;
  const auto ceilings = BenchCeilings(200);
  int discoverable = 0;
  EXPECT_EQ(CountAllocations([&] {
              for (const auto& ceiling : ceilings) {
                discoverable += authorizer.Discover(*authority, ceiling).allowed;
              }
            }),
            0);
  EXPECT_GT(discoverable, 0);
  EXPECT_LT(discoverable, 200);
}

}  // namespace
}  // namespace sharedos::authorizer::core
