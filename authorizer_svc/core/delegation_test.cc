#include "authorizer_svc/core/delegation.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "authorizer_svc/core/fakes.h"
#include "capability/reason_codes.h"
#include "capability/test_builders.h"
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
using ::sharedos::capability::testing::T0;
using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::SCOPE_EXACT;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The delegator exercises its grant through the leaf: context.authority = the delegator.
AccessContext DelegatedContext() {
  AccessContext context = MakeContext();
  *context.mutable_authority() = Agent("delegator");
  return context;
}

capability::DecisionInstants Instants(absl::Time now = T0()) {
  return capability::DecisionInstants{absl::ToUnixMillis(T0()), absl::ToUnixMillis(now)};
}

// The delegator's own grant, issued by alice, delegable one more hop.
GrantBuilder Parent() {
  return GrantBuilder("parent")
      .Subject(Agent("delegator"))
      .Issuer(Human("alice"))
      .WithCapability(Cap("files", {"shared"}, {"read", "list"}))
      .DelegationDepth(1)
      .IssuedAt(T0() - absl::Hours(2));
}

// What the delegator issued to the actor.
GrantBuilder Leaf() {
  return GrantBuilder("leaf")
      .Issuer(Agent("delegator"))
      .WithCapability(Cap("files", {"shared", "notes"}, {"read"}))
      .Parent("parent");
}

struct LinkCase {
  std::string name;
  std::function<void(GrantBuilder& parent, GrantBuilder& leaf)> mutate;
  ChainStatus status;
  capability::DelegationCode code;
};

TEST(ValidateDelegationChainTest, EveryLinkCode) {
  const std::vector<LinkCase> table = {
      {"namespace_mismatch", [](GrantBuilder& p, GrantBuilder&) { p.Namespace("world-2"); },
       ChainStatus::kInvalid, capability::DelegationCode::kNamespaceMismatch},
      {"issuer_not_parent_subject",
       [](GrantBuilder& p, GrantBuilder&) { p.Subject(Agent("someone-else")); },
       ChainStatus::kInvalid, capability::DelegationCode::kIssuerNotParentSubject},
      {"parent_inactive: expired", [](GrantBuilder& p, GrantBuilder&) { p.ExpiresAt(T0()); },
       ChainStatus::kInvalid, capability::DelegationCode::kParentInactive},
      {"parent_inactive: revoked", [](GrantBuilder& p, GrantBuilder&) { p.RevokedAt(At(-1)); },
       ChainStatus::kInvalid, capability::DelegationCode::kParentInactive},
      {"parent_inactive: purpose",
       [](GrantBuilder& p, GrantBuilder& l) {
         p.Purposes({"triage"});
         l.Purposes({"triage"});
       },
       ChainStatus::kInvalid, capability::DelegationCode::kParentInactive},
      {"parent_inactive: issued after admission",
       [](GrantBuilder& p, GrantBuilder& l) {
         p.IssuedAt(At(1));
         l.IssuedAt(At(1));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kParentInactive},
      {"delegation_not_permitted: depth 0",
       [](GrantBuilder& p, GrantBuilder&) { p.DelegationDepth(0); }, ChainStatus::kInvalid,
       capability::DelegationCode::kDelegationNotPermitted},
      {"delegation_depth_exceeded", [](GrantBuilder&, GrantBuilder& l) { l.DelegationDepth(1); },
       ChainStatus::kInvalid, capability::DelegationCode::kDelegationDepthExceeded},
      {"bounded_parent_not_delegable", [](GrantBuilder& p, GrantBuilder&) { p.MaxUses(5); },
       ChainStatus::kInvalid, capability::DelegationCode::kBoundedParentNotDelegable},
      {"capability_widened: path",
       [](GrantBuilder&, GrantBuilder& l) { l.WithCapability(Cap("files", {}, {"read"})); },
       ChainStatus::kInvalid, capability::DelegationCode::kCapabilityWidened},
      {"capability_widened: action",
       [](GrantBuilder&, GrantBuilder& l) {
         l.WithCapability(Cap("files", {"shared"}, {"delete"}));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kCapabilityWidened},
      {"capability_widened: other owner",
       [](GrantBuilder&, GrantBuilder& l) {
         l.WithCapability(
             Cap("files", {"shared"}, {"read"}, protocol::v1::SCOPE_DESCENDANTS, Human("bob")));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kCapabilityWidened},
      {"constraints_widened: issued before parent",
       [](GrantBuilder&, GrantBuilder& l) { l.IssuedAt(T0() - absl::Hours(3)); },
       ChainStatus::kInvalid, capability::DelegationCode::kConstraintsWidened},
      {"constraints_widened: parent expires, child does not",
       [](GrantBuilder& p, GrantBuilder&) { p.ExpiresAt(At(60)); }, ChainStatus::kInvalid,
       capability::DelegationCode::kConstraintsWidened},
      {"constraints_widened: child expires later",
       [](GrantBuilder& p, GrantBuilder& l) {
         p.ExpiresAt(At(60));
         l.ExpiresAt(At(61));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kConstraintsWidened},
      {"constraints_widened: parent notBefore, child issued earlier",
       [](GrantBuilder& p, GrantBuilder& l) {
         p.NotBefore(T0() - absl::Minutes(30));
         l.IssuedAt(T0() - absl::Minutes(45));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kConstraintsWidened},
      {"constraints_widened: parent purposes, child none",
       [](GrantBuilder& p, GrantBuilder&) { p.Purposes({"assist"}); }, ChainStatus::kInvalid,
       capability::DelegationCode::kConstraintsWidened},
      {"constraints_widened: child purposes not a subset",
       [](GrantBuilder& p, GrantBuilder& l) {
         p.Purposes({"assist"});
         l.Purposes({"assist", "triage"});
       },
       ChainStatus::kInvalid, capability::DelegationCode::kConstraintsWidened},
      // Order: the first failing rule is reported.
      {"namespace before issuer",
       [](GrantBuilder& p, GrantBuilder&) {
         p.Namespace("world-2").Subject(Agent("someone-else"));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kNamespaceMismatch},
      {"not permitted before bounded",
       [](GrantBuilder& p, GrantBuilder&) { p.DelegationDepth(0).MaxUses(2); },
       ChainStatus::kInvalid, capability::DelegationCode::kDelegationNotPermitted},
      {"bounded before capability",
       [](GrantBuilder& p, GrantBuilder& l) {
         p.MaxUses(2);
         l.WithCapability(Cap("repo", {}, {"read"}));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kBoundedParentNotDelegable},
      {"capability before constraints",
       [](GrantBuilder& p, GrantBuilder& l) {
         p.Purposes({"assist"});
         l.WithCapability(Cap("repo", {}, {"read"}));
       },
       ChainStatus::kInvalid, capability::DelegationCode::kCapabilityWidened},
  };
  for (const LinkCase& c : table) {
    GrantBuilder parent = Parent();
    GrantBuilder leaf = Leaf();
    c.mutate(parent, leaf);
    FakeDelegationResolver resolver;
    resolver.AddUnder("world-1", parent.Build());
    const ChainVerdict verdict =
        ValidateDelegationChain(leaf, DelegatedContext(), Instants(), &resolver);
    EXPECT_EQ(verdict.status, c.status) << c.name;
    EXPECT_EQ(verdict.code, c.code) << c.name << ": got " << Name(verdict.code);
    EXPECT_EQ(verdict.grant_id, "leaf") << c.name;
  }
}

TEST(ValidateDelegationChainTest, RootIsValidWithoutResolver) {
  const ChainVerdict verdict = ValidateDelegationChain(Parent(), DelegatedContext(), Instants(),
                                                       /*resolver=*/nullptr);
  EXPECT_TRUE(verdict.valid());
  EXPECT_THAT(verdict.ancestor_ids, IsEmpty());
}

TEST(ValidateDelegationChainTest, ValidLinkListsAncestors) {
  FakeDelegationResolver resolver;
  resolver.Add(Parent());
  const ChainVerdict verdict =
      ValidateDelegationChain(Leaf(), DelegatedContext(), Instants(), &resolver);
  EXPECT_TRUE(verdict.valid()) << Name(verdict.code);
  EXPECT_THAT(verdict.ancestor_ids, ElementsAre("parent"));
}

TEST(ValidateDelegationChainTest, ParentExpiryIsInstantBound) {
  FakeDelegationResolver resolver;
  resolver.Add(Parent().ExpiresAt(At(10)));
  const CapabilityGrant leaf = Leaf().ExpiresAt(At(10));
  EXPECT_TRUE(
      ValidateDelegationChain(leaf, DelegatedContext(), Instants(At(9.999)), &resolver).valid());
  const ChainVerdict expired =
      ValidateDelegationChain(leaf, DelegatedContext(), Instants(At(10)), &resolver);
  EXPECT_EQ(expired.code, capability::DelegationCode::kParentInactive);
}

TEST(ValidateDelegationChainTest, ParentRevocationIsSnapshotBound) {
  FakeDelegationResolver resolver;
  resolver.Add(Parent().RevokedAt(At(5)));
  EXPECT_TRUE(
      ValidateDelegationChain(Leaf(), DelegatedContext(), Instants(At(10)), &resolver).valid());
}

TEST(ValidateDelegationChainTest, UnverifiedCodes) {
  const AccessContext context = DelegatedContext();
  ChainVerdict verdict = ValidateDelegationChain(Leaf(), context, Instants(), nullptr);
  EXPECT_EQ(verdict.status, ChainStatus::kUnverified);
  EXPECT_EQ(verdict.code, capability::DelegationCode::kResolverUnavailable);
  EXPECT_EQ(verdict.grant_id, "leaf");

  FakeDelegationResolver empty;
  verdict = ValidateDelegationChain(Leaf(), context, Instants(), &empty);
  EXPECT_EQ(verdict.status, ChainStatus::kUnverified);
  EXPECT_EQ(verdict.code, capability::DelegationCode::kParentNotFound);

  FakeDelegationResolver failing;
  failing.Add(Parent());
  failing.Fail("parent", absl::UnavailableError("store down"));
  verdict = ValidateDelegationChain(Leaf(), context, Instants(), &failing);
  EXPECT_EQ(verdict.status, ChainStatus::kUnverified);
  EXPECT_EQ(verdict.code, capability::DelegationCode::kResolverFailed);

  // An answer that is not a valid grant is a failed lookup too.
  CapabilityGrant invalid_parent = Parent().Build();
  invalid_parent.clear_capabilities();
  FakeDelegationResolver invalid;
  invalid.Add(invalid_parent);
  EXPECT_EQ(ValidateDelegationChain(Leaf(), context, Instants(), &invalid).code,
            capability::DelegationCode::kResolverFailed);
}

TEST(ValidateDelegationChainTest, ResolverAnsweringAnotherIdFails) {
  class WrongId : public DelegationResolver {
   public:
    absl::StatusOr<std::optional<CapabilityGrant>> Resolve(absl::string_view,
                                                           absl::string_view) override {
      CapabilityGrant grant = Parent().Build();
      grant.set_id("not-the-parent");
      return std::optional<CapabilityGrant>(grant);
    }
  } resolver;
  EXPECT_EQ(ValidateDelegationChain(Leaf(), DelegatedContext(), Instants(), &resolver).code,
            capability::DelegationCode::kResolverFailed);
}

// A valid chain of `length` grants c0 (the leaf) … c{length-1} (the root).
std::vector<CapabilityGrant> Chain(int length) {
  std::vector<CapabilityGrant> chain;
  for (int i = 0; i < length; ++i) {
    GrantBuilder grant(absl::StrCat("c", i));
    grant.Subject(i == 0 ? Agent("alice-assistant") : Agent(absl::StrCat("d", i)))
        .Issuer(i == length - 1 ? Human("alice") : Agent(absl::StrCat("d", i + 1)))
        .WithCapability(Cap("files", {}, {"read"}))
        .DelegationDepth(i)
        .IssuedAt(T0() - absl::Minutes(i + 1));
    if (i + 1 < length) grant.Parent(absl::StrCat("c", i + 1));
    chain.push_back(grant);
  }
  return chain;
}

TEST(ValidateDelegationChainTest, ChainOfSixteenIsTheLongestAccepted) {
  for (int length : {2, 15, 16}) {
    const std::vector<CapabilityGrant> chain = Chain(length);
    FakeDelegationResolver resolver;
    for (size_t i = 1; i < chain.size(); ++i) resolver.Add(chain[i]);
    AccessContext context = MakeContext();
    *context.mutable_authority() = chain[0].issuer();
    const ChainVerdict verdict = ValidateDelegationChain(chain[0], context, Instants(), &resolver);
    EXPECT_TRUE(verdict.valid()) << length << ": " << Name(verdict.code);
    EXPECT_EQ(verdict.ancestor_ids.size(), static_cast<size_t>(length - 1));
  }
  const std::vector<CapabilityGrant> chain = Chain(17);
  FakeDelegationResolver resolver;
  for (size_t i = 1; i < chain.size(); ++i) resolver.Add(chain[i]);
  const ChainVerdict verdict =
      ValidateDelegationChain(chain[0], MakeContext(), Instants(), &resolver);
  EXPECT_EQ(verdict.status, ChainStatus::kInvalid);
  EXPECT_EQ(verdict.code, capability::DelegationCode::kChainTooLong);
  EXPECT_EQ(verdict.grant_id, "c15");
  EXPECT_EQ(resolver.calls(), 15);
}

TEST(ValidateDelegationChainTest, CycleDetected) {
  // leaf → p → q → p.
  FakeDelegationResolver resolver;
  resolver.Add(Parent().Parent("q").DelegationDepth(1));
  resolver.Add(GrantBuilder("q")
                   .Subject(Human("alice"))
                   .Issuer(Human("root"))
                   .WithCapability(Cap("files", {}, {"*"}))
                   .DelegationDepth(2)
                   .IssuedAt(T0() - absl::Hours(3))
                   .Parent("parent"));
  const ChainVerdict verdict =
      ValidateDelegationChain(Leaf(), DelegatedContext(), Instants(), &resolver);
  EXPECT_EQ(verdict.status, ChainStatus::kInvalid);
  EXPECT_EQ(verdict.code, capability::DelegationCode::kChainCycle);
  EXPECT_EQ(verdict.grant_id, "q");
  EXPECT_THAT(verdict.ancestor_ids, ElementsAre("parent", "q"));
}

TEST(ValidateDelegationChainTest, CycleBackToTheLeaf) {
  FakeDelegationResolver resolver;
  resolver.Add(Parent().Parent("leaf"));
  resolver.Add(Leaf());
  const ChainVerdict verdict =
      ValidateDelegationChain(Leaf(), DelegatedContext(), Instants(), &resolver);
  EXPECT_EQ(verdict.code, capability::DelegationCode::kChainCycle);
  EXPECT_EQ(verdict.grant_id, "parent");
}

TEST(ValidateDelegationChainTest, SecondLinkFailureNamesItsChild) {
  // leaf → parent → grandparent, where the grandparent does not permit delegation.
  FakeDelegationResolver resolver;
  resolver.Add(Parent().Parent("grandparent"));
  resolver.Add(GrantBuilder("grandparent")
                   .Subject(Human("alice"))
                   .Issuer(Human("root"))
                   .WithCapability(Cap("files", {}, {"*"}))
                   .IssuedAt(T0() - absl::Hours(3)));
  const ChainVerdict verdict =
      ValidateDelegationChain(Leaf(), DelegatedContext(), Instants(), &resolver);
  EXPECT_EQ(verdict.code, capability::DelegationCode::kDelegationNotPermitted);
  EXPECT_EQ(verdict.grant_id, "parent");
  EXPECT_THAT(verdict.ancestor_ids, ElementsAre("parent"));
}

}  // namespace
}  // namespace sharedos::authorizer::core
