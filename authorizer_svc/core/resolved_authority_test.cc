#include "authorizer_svc/core/resolved_authority.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capability/reason_codes.h"
#include "capability/test_builders.h"
#include "common/json/hashes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::capability::testing::Agent;
using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::Human;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

CapabilityGrant Grant(std::string id) {
  return GrantBuilder(id).WithCapability(Cap("files", {}, {"read"}));
}

std::vector<CapabilityGrant> Grants(int count) {
  std::vector<CapabilityGrant> grants;
  for (int i = 0; i < count; ++i) grants.push_back(Grant(absl::StrCat("g", i)));
  return grants;
}

AuthorityResolution Resolve(std::vector<CapabilityGrant> grants) {
  return AuthorityResolution::Resolve(MakeContext(), std::move(grants),
                                      HostPolicyState::Absent());
}

TEST(ResolveAuthorityTest, GrantLimit) {
  EXPECT_TRUE(Resolve(Grants(256)).resolved());
  const AuthorityResolution over = Resolve(Grants(257));
  ASSERT_FALSE(over.resolved());
  EXPECT_EQ(over.code(), capability::AuthorityCode::kGrantLimitExceeded);
}

TEST(ResolveAuthorityTest, LimitCheckedBeforeMaterial) {
  std::vector<CapabilityGrant> grants = Grants(257);
  grants[0].clear_capabilities();
  EXPECT_EQ(Resolve(grants).code(), capability::AuthorityCode::kGrantLimitExceeded);
}

TEST(ResolveAuthorityTest, InvalidMaterial) {
  std::vector<CapabilityGrant> grants = Grants(3);
  grants[2].clear_capabilities();
  const AuthorityResolution resolution = Resolve(grants);
  ASSERT_FALSE(resolution.resolved());
  EXPECT_EQ(resolution.code(), capability::AuthorityCode::kInvalidGrantMaterial);
  EXPECT_THAT(resolution.detail(), HasSubstr("grants[2]"));
}

TEST(ResolveAuthorityTest, ScopeMismatchFailsClosedNeverFilters) {
  struct Case {
    std::string name;
    CapabilityGrant foreign;
  };
  const std::vector<Case> table = {
      {"namespace", GrantBuilder("x").WithCapability(Cap("files", {}, {"read"})).Namespace("w2")},
      {"subject",
       GrantBuilder("x").WithCapability(Cap("files", {}, {"read"})).Subject(Agent("other"))},
      {"issuer",
       GrantBuilder("x").WithCapability(Cap("files", {}, {"read"})).Issuer(Human("other"))},
  };
  for (const Case& c : table) {
    std::vector<CapabilityGrant> grants = Grants(2);
    grants.push_back(c.foreign);
    const AuthorityResolution resolution = Resolve(grants);
    ASSERT_FALSE(resolution.resolved()) << c.name;
    EXPECT_EQ(resolution.code(), capability::AuthorityCode::kGrantScopeMismatch) << c.name;
    EXPECT_THAT(resolution.detail(), HasSubstr(c.name));
  }
}

TEST(ResolveAuthorityTest, MaterialCheckedBeforeScope) {
  std::vector<CapabilityGrant> grants = Grants(2);
  grants[0].set_namespace_id("w2");
  grants[1].clear_issued_at();
  EXPECT_EQ(Resolve(grants).code(), capability::AuthorityCode::kInvalidGrantMaterial);
}

TEST(ResolveAuthorityTest, SnapshotOfTheValidatedGrants) {
  std::vector<CapabilityGrant> grants = {Grant("b"), Grant("a"), Grant("B")};
  grants[0].mutable_capabilities(0)->set_actions(0, " read ");
  const AuthorityResolution resolution = Resolve(grants);
  ASSERT_TRUE(resolution.resolved());
  const ResolvedAuthority& authority = *resolution.authority();
  EXPECT_EQ(authority.grants()[0].capabilities(0).actions(0), "read");  // Trimmed.
  const AuthoritySnapshot& snapshot = authority.snapshot();
  EXPECT_THAT(snapshot.grant_ids, ElementsAre("B", "a", "b"));  // Code-unit order.
  EXPECT_EQ(snapshot.grant_count, 3);
  EXPECT_EQ(snapshot.loaded_at.seconds(), MakeContext().now().seconds());
  EXPECT_EQ(snapshot.hash, *common::AuthorityHash(authority.grants()));
  // Same authority in another order: same hash.
  const AuthorityResolution reordered = Resolve({Grant("a"), Grant("B"), Grant("b")});
  EXPECT_EQ(reordered.authority()->snapshot().hash, snapshot.hash);
}

// The memo of checked grants (keyed by exact serialized bytes): a hit gives what checking and
// rendering again would, and nothing it has not checked gets past it.
TEST(GrantMemoTest, ASecondResolutionReusesTheCheckedGrants) {
  internal::ClearGrantMemoForTesting();
  std::vector<CapabilityGrant> grants = {Grant("m1"), Grant("m2")};
  grants[0].mutable_capabilities(0)->set_actions(0, " read ");
  const AuthorityResolution first = Resolve(grants);
  ASSERT_TRUE(first.resolved());
  EXPECT_EQ(internal::GrantMemoSizeForTesting(), 2u);
  const AuthorityResolution second = Resolve(grants);
  ASSERT_TRUE(second.resolved());
  EXPECT_EQ(internal::GrantMemoSizeForTesting(), 2u);  // Both found, none added.
  EXPECT_EQ(second.authority()->grants()[0].capabilities(0).actions(0), "read");  // Trimmed.
  EXPECT_EQ(second.authority()->snapshot().hash, first.authority()->snapshot().hash);
  EXPECT_EQ(second.authority()->snapshot().hash,
            *common::AuthorityHash(second.authority()->grants()));
  internal::ClearGrantMemoForTesting();
  EXPECT_EQ(Resolve(grants).authority()->snapshot().hash, first.authority()->snapshot().hash);
}

TEST(GrantMemoTest, OnlyTheExactBytesAreReused) {
  internal::ClearGrantMemoForTesting();
  const CapabilityGrant grant = Grant("m3");
  const AuthorityResolution kept = Resolve({grant});
  ASSERT_TRUE(kept.resolved());

  CapabilityGrant unknown_field = grant;
  unknown_field.GetReflection()->MutableUnknownFields(&unknown_field)->AddVarint(999, 1);
  const AuthorityResolution refused = Resolve({unknown_field});
  ASSERT_FALSE(refused.resolved());
  EXPECT_EQ(refused.code(), capability::AuthorityCode::kInvalidGrantMaterial);

  CapabilityGrant empty_action = grant;
  empty_action.mutable_capabilities(0)->set_actions(0, "");
  EXPECT_EQ(Resolve({empty_action}).code(), capability::AuthorityCode::kInvalidGrantMaterial);

  CapabilityGrant other_action = grant;
  other_action.mutable_capabilities(0)->set_actions(0, "write");
  const AuthorityResolution other = Resolve({other_action});
  ASSERT_TRUE(other.resolved());
  EXPECT_NE(other.authority()->snapshot().hash, kept.authority()->snapshot().hash);
  EXPECT_EQ(other.authority()->snapshot().hash, *common::AuthorityHash({other_action}));
}

TEST(GrantMemoTest, RefusedGrantsAreNotKept) {
  internal::ClearGrantMemoForTesting();
  std::vector<CapabilityGrant> grants = Grants(3);
  grants[1].clear_capabilities();
  const AuthorityResolution first = Resolve(grants);
  const AuthorityResolution second = Resolve(grants);
  ASSERT_FALSE(second.resolved());
  EXPECT_EQ(second.code(), capability::AuthorityCode::kInvalidGrantMaterial);
  EXPECT_EQ(second.detail(), first.detail());
  EXPECT_THAT(second.detail(), HasSubstr("grants[1]"));
  EXPECT_EQ(internal::GrantMemoSizeForTesting(), 0u);
}

TEST(GrantMemoTest, Bounded) {
  internal::ClearGrantMemoForTesting();
  for (int batch = 0; batch < 65; ++batch) {
    std::vector<CapabilityGrant> grants;
    for (int i = 0; i < 256; ++i) grants.push_back(Grant(absl::StrCat("b", batch, "-", i)));
    ASSERT_TRUE(Resolve(std::move(grants)).resolved());
  }
  EXPECT_LE(internal::GrantMemoSizeForTesting(), 16384u);
  EXPECT_GT(internal::GrantMemoSizeForTesting(), 0u);
}

TEST(ResolveAuthorityTest, EmptyAuthorityResolves) {
  const AuthorityResolution resolution = Resolve({});
  ASSERT_TRUE(resolution.resolved());
  EXPECT_EQ(resolution.authority()->snapshot().hash,
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");
}

TEST(ResolveAuthorityTest, HoldsTheHostPolicyState) {
  HostPolicy policy{"v3", {HostPolicyRule{"r1", "files", {}, protocol::v1::SCOPE_DESCENDANTS, {}, {}, {}}}};
  const AuthorityResolution resolution = AuthorityResolution::Resolve(
      MakeContext(), Grants(1), HostPolicyState::Loaded(policy));
  ASSERT_TRUE(resolution.resolved());
  EXPECT_EQ(resolution.authority()->host_policy().status(), HostPolicyState::Status::kLoaded);
  EXPECT_EQ(resolution.authority()->host_policy().policy().version, "v3");
}

TEST(ResolveAuthorityTest, UnavailableCarriesTheInternalCode) {
  const AuthorityResolution resolution = AuthorityResolution::Unavailable(
      capability::AuthorityCode::kGrantSourceFailed, "store timeout");
  EXPECT_FALSE(resolution.resolved());
  EXPECT_EQ(resolution.code(), capability::AuthorityCode::kGrantSourceFailed);
  EXPECT_EQ(resolution.detail(), "store timeout");
}

}  // namespace
}  // namespace sharedos::authorizer::core
