#include "authorizer_svc/core/host_policy.h"

#include <string>
#include <vector>

#include "capability/test_builders.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::authorizer::core {
namespace {

using ::sharedos::capability::testing::Agent;
using ::sharedos::capability::testing::MakeContext;
using ::sharedos::capability::testing::Req;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;
using ::sharedos::protocol::v1::SCOPE_UNSPECIFIED;

HostPolicyRule Rule(std::string id, std::vector<std::string> path,
                    protocol::v1::Scope scope = SCOPE_DESCENDANTS) {
  HostPolicyRule rule;
  rule.id = std::move(id);
  rule.resource_namespace = "files";
  rule.path = std::move(path);
  rule.scope = scope;
  return rule;
}

TEST(HostPolicyStateTest, MalformedPoliciesAreUnavailable) {
  EXPECT_EQ(HostPolicyState::Loaded(HostPolicy{"v1", {Rule("r", {})}}).status(),
            HostPolicyState::Status::kLoaded);
  EXPECT_EQ(HostPolicyState::Loaded(HostPolicy{"", {}}).status(),
            HostPolicyState::Status::kUnavailable);
  EXPECT_EQ(HostPolicyState::Loaded(HostPolicy{"v1", {Rule("", {})}}).status(),
            HostPolicyState::Status::kUnavailable);
  EXPECT_EQ(HostPolicyState::Loaded(HostPolicy{"v1", {Rule("r", {}), Rule("r", {"a"})}}).status(),
            HostPolicyState::Status::kUnavailable);
  EXPECT_EQ(HostPolicyState::Loaded(HostPolicy{"v1", {Rule("r", {}, SCOPE_UNSPECIFIED)}}).status(),
            HostPolicyState::Status::kUnavailable);
  HostPolicyRule no_namespace = Rule("r", {});
  no_namespace.resource_namespace.clear();
  EXPECT_EQ(HostPolicyState::Loaded(HostPolicy{"v1", {no_namespace}}).status(),
            HostPolicyState::Status::kUnavailable);
  EXPECT_EQ(HostPolicyState::Absent().status(), HostPolicyState::Status::kAbsent);
  EXPECT_EQ(HostPolicyState::Unavailable().status(), HostPolicyState::Status::kUnavailable);
}

TEST(RuleCoversTest, NamespacePathAndAction) {
  const HostPolicyRule secret = Rule("secret", {"secret"});
  EXPECT_TRUE(RuleCovers(secret, Req("files", {"secret"}, "read")));
  EXPECT_TRUE(RuleCovers(secret, Req("files", {"secret", "x"}, "write")));
  EXPECT_FALSE(RuleCovers(secret, Req("files", {"secrets"}, "read")));
  EXPECT_FALSE(RuleCovers(secret, Req("files", {}, "read")));
  EXPECT_FALSE(RuleCovers(secret, Req("repo", {"secret"}, "read")));

  const HostPolicyRule exact = Rule("exact", {"a"}, SCOPE_EXACT);
  EXPECT_TRUE(RuleCovers(exact, Req("files", {"a"}, "read")));
  EXPECT_FALSE(RuleCovers(exact, Req("files", {"a", "b"}, "read")));

  HostPolicyRule deletes = Rule("deletes", {});
  deletes.actions = {"delete"};
  EXPECT_TRUE(RuleCovers(deletes, Req("files", {"x"}, "delete")));
  EXPECT_FALSE(RuleCovers(deletes, Req("files", {"x"}, "read")));
  deletes.actions = {"*"};
  EXPECT_TRUE(RuleCovers(deletes, Req("files", {"x"}, "read")));
}

TEST(RuleAppliesToTest, ActorsAndPurposes) {
  const protocol::v1::AccessContext context = MakeContext();
  HostPolicyRule rule = Rule("r", {});
  EXPECT_TRUE(RuleAppliesTo(rule, context));
  rule.actors = {Agent("someone-else")};
  EXPECT_FALSE(RuleAppliesTo(rule, context));
  rule.actors.push_back(Agent("alice-assistant"));
  EXPECT_TRUE(RuleAppliesTo(rule, context));
  rule.purposes = {"triage"};
  EXPECT_FALSE(RuleAppliesTo(rule, context));
  rule.purposes.push_back("assist");
  EXPECT_TRUE(RuleAppliesTo(rule, context));
}

TEST(FirstDenyingRuleTest, FirstInOrder) {
  HostPolicy policy{"v7", {Rule("narrow", {"a", "b"}), Rule("broad", {"a"})}};
  const protocol::v1::AccessContext context = MakeContext();
  EXPECT_EQ(FirstDenyingRule(policy, Req("files", {"a", "b", "c"}, "read"), context)->id, "narrow");
  EXPECT_EQ(FirstDenyingRule(policy, Req("files", {"a", "z"}, "read"), context)->id, "broad");
  EXPECT_EQ(FirstDenyingRule(policy, Req("files", {"z"}, "read"), context), nullptr);
}

}  // namespace
}  // namespace sharedos::authorizer::core
