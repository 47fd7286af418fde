#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "authorizer_svc/core/capability_authorizer.h"
#include "authorizer_svc/core/fakes.h"
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
using ::sharedos::protocol::v1::ReachResult;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::shared_ptr<const ResolvedAuthority> Resolve(std::vector<CapabilityGrant> grants,
                                                 HostPolicyState policy = HostPolicyState::Absent(),
                                                 AccessContext context = MakeContext()) {
  AuthorityResolution resolution =
      AuthorityResolution::Resolve(context, std::move(grants), std::move(policy));
  EXPECT_TRUE(resolution.resolved()) << resolution.detail();
  return resolution.authority();
}

// One line per entry: namespace, path, scope, actions (as the order key reads them).
std::vector<std::string> Lines(const ReachResult& result) {
  std::vector<std::string> lines;
  for (const auto& entry : result.reach()) {
    std::string line = entry.namespace_() + " [";
    for (const std::string& segment : entry.path()) line += segment + "/";
    line += "] " + std::string(entry.scope() == SCOPE_EXACT ? "exact" : "descendants") + " ";
    for (const std::string& action : entry.actions()) line += action + ",";
    lines.push_back(line);
  }
  return lines;
}

TEST(ReachTest, DeduplicatedAndOrderedByCanonicalJson) {
  const auto authority =
      Resolve({GrantBuilder("g1")
                   .WithCapability(Cap("files", {"docs"}, {"read", "list"}))
                   .WithCapability(Cap("files", {"docs"}, {"read"}, SCOPE_EXACT))
                   .WithCapability(Cap("files", {}, {"write"})),
               GrantBuilder("g2")
                   .WithCapability(Cap("Notion", {"p"}, {"*"}))
                   .WithCapability(Cap("files", {"docs", "a"}, {"read"}, SCOPE_EXACT))
                   .WithCapability(Cap("files", {"docs"}, {"list", "read"})),
               GrantBuilder("g3").WithCapability(
                   Cap("calendar", {"work"}, {"read"}, SCOPE_DESCENDANTS, Human("alice")))});
  const ReachResult result = CapabilityAuthorizer().Reach(*authority);
  EXPECT_EQ(result.status(), protocol::v1::REACH_STATUS_COMPUTED);
  // Node: [...new Set(entries.map(canonicalJson))].sort().
  EXPECT_THAT(Lines(result),
              ElementsAre("Notion [p/] descendants *,", "calendar [work/] descendants read,",
                          "files [docs/a/] exact read,", "files [docs/] descendants list,read,",
                          "files [docs/] exact read,", "files [] descendants write,"));
}

TEST(ReachTest, SkipsWhatCannotBeExercisedNow) {
  FakeUsageCounter usage;
  usage.SetUsage("world-1", "spent", 1);
  FakeDelegationResolver resolver;  // Knows no parent.
  CapabilityAuthorizer::Options options;
  options.usage_counter = &usage;
  options.delegation_resolver = &resolver;
  const auto authority = Resolve({
      GrantBuilder("expires").WithCapability(Cap("a", {}, {"read"})).ExpiresAt(At(10)),
      GrantBuilder("purpose").WithCapability(Cap("b", {}, {"read"})).Purposes({"triage"}),
      GrantBuilder("spent").WithCapability(Cap("c", {}, {"read"})).MaxUses(1),
      GrantBuilder("remaining").WithCapability(Cap("d", {}, {"read"})).MaxUses(2),
      GrantBuilder("orphan").WithCapability(Cap("e", {}, {"read"})).Parent("missing"),
      GrantBuilder("bobs").WithCapability(Cap("f", {}, {"read"}, SCOPE_DESCENDANTS, Human("bob"))),
  });
  const CapabilityAuthorizer authorizer(options);
  EXPECT_THAT(Lines(authorizer.Reach(*authority)),
              ElementsAre("a [] descendants read,", "d [] descendants read,"));
  // Expiry at the operation instant.
  EXPECT_THAT(Lines(authorizer.Reach(*authority, At(10))), ElementsAre("d [] descendants read,"));
  // Reach never consumes.
  EXPECT_EQ(usage.Used("world-1", "remaining"), 0);
}

TEST(ReachTest, DelegatedGrantReachesWithAValidChain) {
  FakeDelegationResolver resolver;
  resolver.Add(GrantBuilder("parent")
                   .Subject(Agent("delegator"))
                   .Issuer(Human("alice"))
                   .WithCapability(Cap("files", {"docs"}, {"read"}))
                   .DelegationDepth(1)
                   .IssuedAt(T0() - absl::Hours(2)));
  AccessContext context = MakeContext();
  *context.mutable_authority() = Agent("delegator");
  const auto authority = Resolve({GrantBuilder("leaf")
                                      .Issuer(Agent("delegator"))
                                      .WithCapability(Cap("files", {"docs", "x"}, {"read"}))
                                      .Parent("parent")},
                                 HostPolicyState::Absent(), context);
  CapabilityAuthorizer::Options options;
  EXPECT_THAT(CapabilityAuthorizer(options).Reach(*authority).reach(), IsEmpty());
  options.delegation_resolver = &resolver;
  EXPECT_THAT(Lines(CapabilityAuthorizer(options).Reach(*authority)),
              ElementsAre("files [docs/x/] descendants read,"));
}

TEST(ReachTest, UnavailableWhenABudgetCannotBeRead) {
  const auto authority =
      Resolve({GrantBuilder("bounded").WithCapability(Cap("a", {}, {"read"})).MaxUses(1)});
  ReachResult result = CapabilityAuthorizer().Reach(*authority);
  EXPECT_EQ(result.status(), protocol::v1::REACH_STATUS_UNAVAILABLE);
  EXPECT_EQ(result.reason_code(), "usage_store_unavailable");
  EXPECT_THAT(result.reach(), IsEmpty());
  FakeUsageCounter failing;
  failing.SetFailure(absl::UnavailableError("down"));
  CapabilityAuthorizer::Options options;
  options.usage_counter = &failing;
  result = CapabilityAuthorizer(options).Reach(*authority);
  EXPECT_EQ(result.status(), protocol::v1::REACH_STATUS_UNAVAILABLE);
  EXPECT_EQ(result.reason_code(), "usage_store_unavailable");
}

TEST(ReachTest, LiveRevocation) {
  FakeRevocationSource revocations;
  revocations.Revoke("revoked");
  CapabilityAuthorizer::Options options;
  options.revocation_source = &revocations;
  const auto authority = Resolve({GrantBuilder("revoked").WithCapability(Cap("a", {}, {"read"})),
                                  GrantBuilder("kept").WithCapability(Cap("b", {}, {"read"}))});
  EXPECT_THAT(Lines(CapabilityAuthorizer(options).Reach(*authority)),
              ElementsAre("b [] descendants read,"));
  revocations.SetFailure(absl::UnavailableError("down"));
  const ReachResult result = CapabilityAuthorizer(options).Reach(*authority);
  EXPECT_EQ(result.status(), protocol::v1::REACH_STATUS_UNAVAILABLE);
  EXPECT_EQ(result.reason_code(), "authority_unavailable");
}

TEST(ReachTest, NeverConsultsTheCeiling) {
  HostPolicyRule everything{"deny-all", "a", {}, SCOPE_DESCENDANTS, {}, {}, {}};
  for (HostPolicyState policy :
       {HostPolicyState::Loaded(HostPolicy{"v", {everything}}), HostPolicyState::Unavailable()}) {
    const auto authority =
        Resolve({GrantBuilder("g").WithCapability(Cap("a", {}, {"read"}))}, policy);
    EXPECT_THAT(Lines(CapabilityAuthorizer().Reach(*authority)),
                ElementsAre("a [] descendants read,"));
  }
}

TEST(ReachTest, UnusableContextReachesNothing) {
  AccessContext context = MakeContext();
  context.set_purpose("");
  const auto authority = Resolve({GrantBuilder("g").WithCapability(Cap("a", {}, {"read"}))},
                                 HostPolicyState::Absent(), context);
  const ReachResult result = CapabilityAuthorizer().Reach(*authority);
  EXPECT_EQ(result.status(), protocol::v1::REACH_STATUS_COMPUTED);
  EXPECT_THAT(result.reach(), IsEmpty());
  EXPECT_THAT(CapabilityAuthorizer()
                  .Reach(*Resolve({GrantBuilder("g").WithCapability(Cap("a", {}, {"read"}))}),
                         absl::InfiniteFuture())
                  .reach(),
              IsEmpty());
}

}  // namespace
}  // namespace sharedos::authorizer::core
