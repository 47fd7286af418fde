#include "capability/derive_grant.h"

#include <functional>
#include <string>
#include <vector>

#include "capability/test_builders.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::capability {
namespace {

using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::SCOPE_EXACT;
using testing::Agent;
using testing::At;
using testing::Cap;
using ::testing::ElementsAre;
using testing::GrantBuilder;
using ::testing::HasSubstr;
using testing::Human;
using testing::T0;
using testing::Ts;

GrantBuilder Parent() {
  return GrantBuilder("parent")
      .Subject(Agent("delegator"))
      .Issuer(Human("alice"))
      .WithCapability(Cap("files", {"shared"}, {"read", "list"}))
      .WithCapability(Cap("calendar", {}, {"*"}, protocol::v1::SCOPE_DESCENDANTS, Human("alice")))
      .DelegationDepth(2)
      .Purposes({"assist", "triage"})
      .NotBefore(T0() - absl::Hours(1))
      .ExpiresAt(At(3600))
      .IssuedAt(T0() - absl::Hours(2));
}

DeriveRequest Request() {
  DeriveRequest request;
  request.id = "child";
  request.subject = Agent("alice-assistant");
  request.capabilities = {Cap("files", {"shared", "notes"}, {"read"}, SCOPE_EXACT)};
  request.issued_at = Ts(T0());
  return request;
}

struct RefusalCase {
  std::string name;
  std::function<void(GrantBuilder& parent, DeriveRequest& request)> mutate;
  DeriveRefusal expected;
};

protocol::v1::CapabilityConstraints Constraints(
    std::function<void(protocol::v1::CapabilityConstraints&)> fill) {
  protocol::v1::CapabilityConstraints constraints;
  fill(constraints);
  return constraints;
}

TEST(DeriveGrantTest, EveryRefusalInOrder) {
  const std::vector<RefusalCase> table = {
      {"empty_capabilities", [](GrantBuilder&, DeriveRequest& r) { r.capabilities.clear(); },
       DeriveRefusal::kEmptyCapabilities},
      {"id_collides_with_parent", [](GrantBuilder&, DeriveRequest& r) { r.id = "parent"; },
       DeriveRefusal::kIdCollidesWithParent},
      {"id collides after trimming", [](GrantBuilder&, DeriveRequest& r) { r.id = " parent "; },
       DeriveRefusal::kIdCollidesWithParent},
      {"bounded_parent_not_delegable", [](GrantBuilder& p, DeriveRequest&) { p.MaxUses(3); },
       DeriveRefusal::kBoundedParentNotDelegable},
      {"parent_not_delegable: depth 0",
       [](GrantBuilder& p, DeriveRequest&) { p.DelegationDepth(0); },
       DeriveRefusal::kParentNotDelegable},
      {"parent_not_delegable: no depth",
       [](GrantBuilder& p, DeriveRequest&) {
         p = GrantBuilder("parent")
                 .Subject(Agent("delegator"))
                 .Issuer(Human("alice"))
                 .WithCapability(Cap("files", {"shared"}, {"read", "list"}))
                 .IssuedAt(T0() - absl::Hours(2));
       },
       DeriveRefusal::kParentNotDelegable},
      {"depth_exhausted",
       [](GrantBuilder&, DeriveRequest& r) {
         r.constraints = Constraints([](auto& c) { c.set_delegation_depth(2); });
       },
       DeriveRefusal::kDepthExhausted},
      {"capability_not_within_parent: broader path",
       [](GrantBuilder&, DeriveRequest& r) {
         r.capabilities.push_back(Cap("files", {}, {"read"}));
       },
       DeriveRefusal::kCapabilityNotWithinParent},
      {"capability_not_within_parent: action",
       [](GrantBuilder&, DeriveRequest& r) {
         r.capabilities = {Cap("files", {"shared"}, {"delete"})};
       },
       DeriveRefusal::kCapabilityNotWithinParent},
      {"capability_not_within_parent: * under a listed parent",
       [](GrantBuilder&, DeriveRequest& r) { r.capabilities = {Cap("files", {"shared"}, {"*"})}; },
       DeriveRefusal::kCapabilityNotWithinParent},
      {"capability_not_within_parent: owned child, unowned parent",
       [](GrantBuilder&, DeriveRequest& r) {
         r.capabilities = {
             Cap("files", {"shared"}, {"read"}, protocol::v1::SCOPE_DESCENDANTS, Human("alice"))};
       },
       DeriveRefusal::kCapabilityNotWithinParent},
      {"capability_not_within_parent: unowned child, owned parent",
       [](GrantBuilder&, DeriveRequest& r) { r.capabilities = {Cap("calendar", {}, {"read"})}; },
       DeriveRefusal::kCapabilityNotWithinParent},
      {"capability_not_within_parent: spread over two parent capabilities",
       [](GrantBuilder& p, DeriveRequest& r) {
         p.WithCapability(Cap("files", {"shared"}, {"write"}));
         r.capabilities = {Cap("files", {"shared"}, {"read", "write"})};
       },
       DeriveRefusal::kCapabilityNotWithinParent},
      {"purpose_not_within_parent",
       [](GrantBuilder&, DeriveRequest& r) {
         r.constraints = Constraints([](auto& c) { c.add_purposes("marketing"); });
       },
       DeriveRefusal::kPurposeNotWithinParent},
      {"window_not_within_parent: earlier notBefore",
       [](GrantBuilder&, DeriveRequest& r) {
         r.constraints = Constraints([](auto& c) {
           *c.mutable_not_before() = Ts(T0() - absl::Hours(1) - absl::Seconds(1));
         });
       },
       DeriveRefusal::kWindowNotWithinParent},
      {"window_not_within_parent: later expiresAt",
       [](GrantBuilder&, DeriveRequest& r) {
         r.constraints = Constraints([](auto& c) { *c.mutable_expires_at() = Ts(At(3601)); });
       },
       DeriveRefusal::kWindowNotWithinParent},
      {"window_not_within_parent: empty once inherited",
       [](GrantBuilder&, DeriveRequest& r) {
         r.constraints = Constraints([](auto& c) { *c.mutable_not_before() = Ts(At(3602)); });
       },
       DeriveRefusal::kWindowNotWithinParent},
      {"issued_before_parent",
       [](GrantBuilder&, DeriveRequest& r) { r.issued_at = Ts(T0() - absl::Hours(3)); },
       DeriveRefusal::kIssuedBeforeParent},
      // Order.
      {"empty capabilities before id collision",
       [](GrantBuilder&, DeriveRequest& r) {
         r.capabilities.clear();
         r.id = "parent";
       },
       DeriveRefusal::kEmptyCapabilities},
      {"bounded before not delegable",
       [](GrantBuilder& p, DeriveRequest&) { p.MaxUses(1).DelegationDepth(0); },
       DeriveRefusal::kBoundedParentNotDelegable},
      {"capability before purpose",
       [](GrantBuilder&, DeriveRequest& r) {
         r.capabilities = {Cap("repo", {}, {"read"})};
         r.constraints = Constraints([](auto& c) { c.add_purposes("marketing"); });
       },
       DeriveRefusal::kCapabilityNotWithinParent},
      {"window before issued",
       [](GrantBuilder&, DeriveRequest& r) {
         r.constraints = Constraints([](auto& c) { *c.mutable_expires_at() = Ts(At(9999)); });
         r.issued_at = Ts(T0() - absl::Hours(3));
       },
       DeriveRefusal::kWindowNotWithinParent},
  };
  for (const RefusalCase& c : table) {
    GrantBuilder parent = Parent();
    DeriveRequest request = Request();
    c.mutate(parent, request);
    absl::StatusOr<DeriveResult> result = DeriveGrant(parent, request);
    ASSERT_TRUE(result.ok()) << c.name << ": " << result.status();
    ASSERT_FALSE(result->ok()) << c.name;
    EXPECT_EQ(*result->refusal, c.expected) << c.name << ": got " << Name(*result->refusal);
  }
}

TEST(DeriveGrantTest, InheritsOmittedConstraintsAndImpliesIssuer) {
  absl::StatusOr<DeriveResult> result = DeriveGrant(Parent(), Request());
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->ok()) << Name(*result->refusal);
  const CapabilityGrant& child = result->grant;
  EXPECT_EQ(child.id(), "child");
  EXPECT_EQ(child.namespace_id(), "world-1");
  EXPECT_EQ(child.subject().agent_id(), "alice-assistant");
  EXPECT_EQ(child.issuer().agent_id(), "delegator");
  EXPECT_EQ(child.parent_grant_id(), "parent");
  EXPECT_THAT(child.constraints().purposes(), ElementsAre("assist", "triage"));
  EXPECT_EQ(child.constraints().not_before().seconds(), absl::ToUnixSeconds(T0() - absl::Hours(1)));
  EXPECT_EQ(child.constraints().expires_at().seconds(), absl::ToUnixSeconds(At(3600)));
  EXPECT_TRUE(child.constraints().has_delegation_depth());
  EXPECT_EQ(child.constraints().delegation_depth(), 1);
  EXPECT_FALSE(child.constraints().has_max_uses());
  EXPECT_EQ(child.issued_at().seconds(), absl::ToUnixSeconds(T0()));
}

TEST(DeriveGrantTest, KeepsNarrowerRequestedConstraints) {
  DeriveRequest request = Request();
  request.constraints = Constraints([](auto& c) {
    c.add_purposes(" assist ");
    *c.mutable_expires_at() = Ts(At(60));
    c.set_max_uses(2);
    c.set_delegation_depth(0);
  });
  request.capabilities.push_back(Cap("calendar", {"work"}, {"read"}, SCOPE_EXACT, Human("alice")));
  absl::StatusOr<DeriveResult> result = DeriveGrant(Parent(), request);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->ok()) << Name(*result->refusal);
  const auto& constraints = result->grant.constraints();
  EXPECT_THAT(constraints.purposes(), ElementsAre("assist"));
  EXPECT_EQ(constraints.expires_at().seconds(), absl::ToUnixSeconds(At(60)));
  EXPECT_EQ(constraints.max_uses(), 2);
  EXPECT_EQ(constraints.delegation_depth(), 0);
}

TEST(DeriveGrantTest, MalformedInputIsAnError) {
  DeriveRequest request = Request();
  request.id = "  ";
  EXPECT_THAT(DeriveGrant(Parent(), request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request.id")));
  request = Request();
  request.subject.Clear();
  EXPECT_THAT(DeriveGrant(Parent(), request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request.subject")));
  CapabilityGrant bad_parent = Parent();
  bad_parent.clear_issued_at();
  EXPECT_THAT(DeriveGrant(bad_parent, Request()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("parent")));
}

}  // namespace
}  // namespace sharedos::capability
