#include "authorizer_svc/core/resolved_authority.h"

#include <atomic>
#include <string>
#include <thread>
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
using ::sharedos::capability::testing::At;
using ::sharedos::capability::testing::Cap;
using ::sharedos::capability::testing::GrantBuilder;
using ::sharedos::capability::testing::Human;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::Ts;
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
  return AuthorityResolution::Resolve(MakeContext(), std::move(grants), HostPolicyState::Absent());
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

// The cache of resolved grant sets: what depends on the grants (and the owner) alone is shared;
// what depends on the turn's context is computed for each resolution.
AuthorityResolution ResolveIn(const protocol::v1::AccessContext& context,
                              std::vector<CapabilityGrant> grants) {
  return AuthorityResolution::Resolve(context, std::move(grants), HostPolicyState::Absent());
}

TEST(GrantSetTest, ResolutionsOfTheSameGrantsAndOwnerShareOneSet) {
  internal::ClearGrantMemoForTesting();
  std::vector<CapabilityGrant> grants = {Grant("s1"), Grant("s2")};
  grants[1].mutable_capabilities(0)->set_actions(0, " read ");
  const AuthorityResolution first = Resolve(grants);
  const AuthorityResolution second = Resolve(grants);
  ASSERT_TRUE(first.resolved());
  ASSERT_TRUE(second.resolved());
  EXPECT_EQ(&first.authority()->grant_set(), &second.authority()->grant_set());
  EXPECT_EQ(internal::GrantSetCacheSizeForTesting(), 1u);
  EXPECT_EQ(second.authority()->grants()[1].capabilities(0).actions(0), "read");  // Trimmed.
  EXPECT_EQ(second.authority()->snapshot().hash,
            *common::AuthorityHash(second.authority()->grants()));
  EXPECT_THAT(second.authority()->snapshot().grant_ids, ElementsAre("s1", "s2"));
  // Emptying the memo empties the sets too: the next resolution builds a new one.
  internal::ClearGrantMemoForTesting();
  EXPECT_EQ(internal::GrantSetCacheSizeForTesting(), 0u);
  const AuthorityResolution third = Resolve(grants);
  EXPECT_NE(&third.authority()->grant_set(), &first.authority()->grant_set());
  EXPECT_EQ(third.authority()->snapshot().hash, first.authority()->snapshot().hash);
}

TEST(GrantSetTest, TheTurnsContextIsJudgedForEachResolution) {
  internal::ClearGrantMemoForTesting();
  const std::vector<CapabilityGrant> grants = {
      GrantBuilder("e1").WithCapability(Cap("files", {}, {"read"})).NotBefore(At(60)),
      GrantBuilder("e2").WithCapability(Cap("files", {}, {"read"})).Purposes({"assist"})};
  protocol::v1::AccessContext later = MakeContext();
  *later.mutable_now() = Ts(At(120));
  later.set_purpose("audit");
  const AuthorityResolution before = ResolveIn(MakeContext(), grants);
  const AuthorityResolution after = ResolveIn(later, grants);
  ASSERT_TRUE(before.resolved());
  ASSERT_TRUE(after.resolved());
  EXPECT_EQ(&before.authority()->grant_set(), &after.authority()->grant_set());
  // e1 opens at T0 + 60 s; e2 is for purpose "assist" only.
  EXPECT_TRUE(before.authority()->compiled().grants[0].activity.window_closed_at_admission);
  EXPECT_TRUE(before.authority()->compiled().grants[1].eligible_at_admission);
  EXPECT_TRUE(after.authority()->compiled().grants[0].eligible_at_admission);
  EXPECT_TRUE(after.authority()->compiled().grants[1].activity.purpose_excluded);
  EXPECT_EQ(after.authority()->snapshot().loaded_at.seconds(), Ts(At(120)).seconds());
  EXPECT_EQ(before.authority()->snapshot().loaded_at.seconds(), MakeContext().now().seconds());
}

TEST(GrantSetTest, TheOwnerDecidesTheIndex) {
  internal::ClearGrantMemoForTesting();
  // One capability owned by the context's owner ("alice"), one by someone else.
  const std::vector<CapabilityGrant> grants = {
      GrantBuilder("o1")
          .WithCapability(Cap("files", {"a"}, {"read"}, protocol::v1::SCOPE_EXACT, Human("alice")))
          .WithCapability(Cap("files", {"b"}, {"read"}, protocol::v1::SCOPE_EXACT, Human("bob")))};
  protocol::v1::AccessContext bobs = MakeContext();
  *bobs.mutable_owner() = Human("bob");
  const AuthorityResolution for_alice = ResolveIn(MakeContext(), grants);
  const AuthorityResolution for_bob = ResolveIn(bobs, grants);
  ASSERT_TRUE(for_alice.resolved());
  ASSERT_TRUE(for_bob.resolved());
  EXPECT_NE(&for_alice.authority()->grant_set(), &for_bob.authority()->grant_set());
  EXPECT_EQ(internal::GrantSetCacheSizeForTesting(), 2u);
  const internal::CompiledIndex& alice_index = *for_alice.authority()->compiled().index;
  const internal::CompiledIndex& bob_index = *for_bob.authority()->compiled().index;
  ASSERT_EQ(alice_index.capabilities.size(), 1u);
  ASSERT_EQ(bob_index.capabilities.size(), 1u);
  EXPECT_TRUE(alice_index.segment_ids.contains("a"));
  EXPECT_FALSE(alice_index.segment_ids.contains("b"));
  EXPECT_TRUE(bob_index.segment_ids.contains("b"));
  EXPECT_FALSE(bob_index.segment_ids.contains("a"));
  // Both authorities name the same grants and hash.
  EXPECT_EQ(for_alice.authority()->snapshot().hash, for_bob.authority()->snapshot().hash);
}

TEST(GrantSetTest, AChangedGrantIsAnotherSet) {
  internal::ClearGrantMemoForTesting();
  std::vector<CapabilityGrant> grants = {Grant("c1"), Grant("c2")};
  const AuthorityResolution kept = Resolve(grants);
  grants[1].mutable_capabilities(0)->set_actions(0, "write");
  const AuthorityResolution changed = Resolve(grants);
  ASSERT_TRUE(kept.resolved());
  ASSERT_TRUE(changed.resolved());
  EXPECT_NE(&kept.authority()->grant_set(), &changed.authority()->grant_set());
  EXPECT_TRUE(changed.authority()->compiled().index->action_ids.contains("write"));
  EXPECT_FALSE(kept.authority()->compiled().index->action_ids.contains("write"));
  EXPECT_EQ(changed.authority()->snapshot().hash, *common::AuthorityHash(grants));
  // The same grants in another order are another set (the order is the resolved order).
  const AuthorityResolution reordered = Resolve({grants[1], grants[0]});
  EXPECT_NE(&reordered.authority()->grant_set(), &changed.authority()->grant_set());
  EXPECT_EQ(reordered.authority()->grants()[0].id(), "c2");
  EXPECT_EQ(reordered.authority()->snapshot().hash, changed.authority()->snapshot().hash);
}

TEST(GrantSetTest, ARefusalIsNeverServedFromASet) {
  internal::ClearGrantMemoForTesting();
  const std::vector<CapabilityGrant> grants = {Grant("r1")};
  ASSERT_TRUE(Resolve(grants).resolved());
  // The same (known) grants for a context of another subject: refused, not found in a set.
  protocol::v1::AccessContext other = MakeContext();
  *other.mutable_actor() = Agent("other");
  const AuthorityResolution refused = ResolveIn(other, grants);
  ASSERT_FALSE(refused.resolved());
  EXPECT_EQ(refused.code(), capability::AuthorityCode::kGrantScopeMismatch);
}

TEST(GrantSetTest, ConcurrentResolutionsAgree) {
  internal::ClearGrantMemoForTesting();
  const std::vector<CapabilityGrant> left = {Grant("t1"), Grant("t2")};
  const std::vector<CapabilityGrant> right = {Grant("t2"), Grant("t3"), Grant("t4")};
  const std::string left_hash = *common::AuthorityHash(left);
  const std::string right_hash = *common::AuthorityHash(right);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        const bool use_left = (t + i) % 2 == 0;
        const AuthorityResolution resolution = Resolve(use_left ? left : right);
        if (!resolution.resolved() ||
            resolution.authority()->snapshot().hash != (use_left ? left_hash : right_hash) ||
            resolution.authority()->grants().size() != (use_left ? 2u : 3u)) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  // Threads that first met a grant at once each built a set (one is kept in the memo); from now
  // on the same grants find one set.
  EXPECT_EQ(&Resolve(right).authority()->grant_set(), &Resolve(right).authority()->grant_set());
}

TEST(GrantSetTest, Bounded) {
  internal::ClearGrantMemoForTesting();
  for (int set = 0; set < 1100; ++set) {
    ASSERT_TRUE(Resolve({Grant(absl::StrCat("k", set))}).resolved());
  }
  EXPECT_LE(internal::GrantSetCacheSizeForTesting(), 1024u);
  EXPECT_GT(internal::GrantSetCacheSizeForTesting(), 0u);
}

TEST(ResolveAuthorityTest, EmptyAuthorityResolves) {
  const AuthorityResolution resolution = Resolve({});
  ASSERT_TRUE(resolution.resolved());
  EXPECT_EQ(resolution.authority()->snapshot().hash,
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");
}

TEST(ResolveAuthorityTest, HoldsTheHostPolicyState) {
  HostPolicy policy{
      "v3", {HostPolicyRule{"r1", "files", {}, protocol::v1::SCOPE_DESCENDANTS, {}, {}, {}}}};
  const AuthorityResolution resolution =
      AuthorityResolution::Resolve(MakeContext(), Grants(1), HostPolicyState::Loaded(policy));
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
