#include "authorizer_svc/core/capability_authorizer.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "authorizer_svc/core/fakes.h"
#include "capability/capability_request.h"
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
using ::sharedos::capability::testing::Req;
using ::sharedos::capability::testing::T0;
using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;

using Explained = std::vector<std::pair<std::string, capability::RejectionReason>>;

// The ports of one test world; each can be left out.
struct World {
  FakeUsageCounter usage;
  FakeDelegationResolver resolver;
  FakeRevocationSource revocations;
  FakeGrantVerifier verifier;
  bool with_usage = true;
  bool with_resolver = true;
  bool with_revocations = false;
  bool with_verifier = false;

  CapabilityAuthorizer MakeAuthorizer() {
    CapabilityAuthorizer::Options options;
    if (with_usage) options.usage_counter = &usage;
    if (with_resolver) options.delegation_resolver = &resolver;
    if (with_revocations) options.revocation_source = &revocations;
    if (with_verifier) options.grant_verifier = &verifier;
    return CapabilityAuthorizer(options);
  }
};

std::shared_ptr<const ResolvedAuthority> Resolve(std::vector<CapabilityGrant> grants,
                                                 HostPolicyState policy = HostPolicyState::Absent(),
                                                 AccessContext context = MakeContext()) {
  AuthorityResolution resolution =
      AuthorityResolution::Resolve(context, std::move(grants), std::move(policy));
  EXPECT_TRUE(resolution.resolved()) << resolution.detail();
  return resolution.authority();
}

GrantBuilder ReadFiles(std::string id) {
  return GrantBuilder(id).WithCapability(Cap("files", {"docs"}, {"read"}));
}

// The delegator's grant; the delegated context exercises it through "leaf".
GrantBuilder DelegatorGrant() {
  return GrantBuilder("parent")
      .Subject(Agent("delegator"))
      .Issuer(Human("alice"))
      .WithCapability(Cap("files", {"docs"}, {"read"}))
      .DelegationDepth(1)
      .IssuedAt(T0() - absl::Hours(2));
}
GrantBuilder Leaf(std::string id = "leaf") {
  return GrantBuilder(id)
      .Issuer(Agent("delegator"))
      .WithCapability(Cap("files", {"docs"}, {"read"}))
      .Parent("parent");
}
AccessContext DelegatedContext() {
  AccessContext context = MakeContext();
  *context.mutable_authority() = Agent("delegator");
  return context;
}

HostPolicyState DenyDocs(std::string rule_id = "no-docs") {
  HostPolicyRule rule;
  rule.id = std::move(rule_id);
  rule.resource_namespace = "files";
  rule.path = {"docs"};
  rule.scope = SCOPE_DESCENDANTS;
  return HostPolicyState::Loaded(HostPolicy{"policy-v2", {rule}});
}

Explained ExplanationOf(const AuthorizationResult& result) {
  Explained explained;
  if (!result.explanation.has_value()) return explained;
  for (const GrantRejection& rejection : result.explanation->rejected_grants) {
    explained.emplace_back(rejection.grant_id, rejection.reason);
  }
  return explained;
}

// ---- Every reason code -------------------------------------------------------------------

struct CodeCase {
  std::string name;
  std::function<std::vector<CapabilityGrant>()> grants;
  std::function<void(World&)> setup;
  CapabilityRequirement request;
  CapabilityAuthorizer::AuthorizeOptions options;
  capability::ReasonCode expected;
  std::string matched_grant;
  HostPolicyState policy = HostPolicyState::Absent();
  AccessContext context = MakeContext();
};

TEST(AuthorizeTest, EveryReasonCode) {
  const auto none = [](World&) {};
  const CapabilityRequirement docs = Req("files", {"docs", "a.md"}, "read");
  std::vector<CodeCase> table = {
      {"allowed",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       none,
       docs,
       {},
       capability::ReasonCode::kAllowed,
       "g1"},
      {"no_matching_grant: deny by default",
       [] { return std::vector<CapabilityGrant>{}; },
       none,
       docs,
       {},
       capability::ReasonCode::kNoMatchingGrant,
       ""},
      {"grant_exhausted",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1").MaxUses(1)}; },
       [](World& w) { w.usage.SetUsage("world-1", "g1", 1); },
       docs,
       {std::nullopt, true},
       capability::ReasonCode::kGrantExhausted,
       "g1"},
      {"invalid_context: unparsable operation instant",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       none,
       docs,
       {absl::InfiniteFuture(), false},
       capability::ReasonCode::kInvalidContext,
       ""},
      {"invalid_request: another owner",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       none,
       Req("files", {"docs", "a.md"}, "read", Human("bob")),
       {},
       capability::ReasonCode::kInvalidRequest,
       ""},
      {"invalid_request: empty action",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       none,
       Req("files", {"docs"}, ""),
       {},
       capability::ReasonCode::kInvalidRequest,
       ""},
      {"invalid_request: empty namespace",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       none,
       Req("", {}, "read"),
       {},
       capability::ReasonCode::kInvalidRequest,
       ""},
      {"authority_unavailable: live revocation down",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       [](World& w) {
         w.with_revocations = true;
         w.revocations.SetFailure(absl::UnavailableError("down"));
       },
       docs,
       {},
       capability::ReasonCode::kAuthorityUnavailable,
       ""},
      {"usage_store_unavailable: no store",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1").MaxUses(3)}; },
       [](World& w) { w.with_usage = false; },
       docs,
       {},
       capability::ReasonCode::kUsageStoreUnavailable,
       ""},
      {"usage_store_unavailable: store fails",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1").MaxUses(3)}; },
       [](World& w) { w.usage.SetFailure(absl::UnavailableError("down")); },
       docs,
       {std::nullopt, true},
       capability::ReasonCode::kUsageStoreUnavailable,
       ""},
      {"delegation_chain_unverified",
       [] { return std::vector<CapabilityGrant>{Leaf()}; },
       [](World& w) { w.with_resolver = false; },
       docs,
       {},
       capability::ReasonCode::kDelegationChainUnverified,
       "",
       HostPolicyState::Absent(),
       DelegatedContext()},
      {"delegation_chain_invalid",
       [] { return std::vector<CapabilityGrant>{Leaf()}; },
       [](World& w) { w.resolver.Add(DelegatorGrant().DelegationDepth(0)); },
       docs,
       {},
       capability::ReasonCode::kDelegationChainInvalid,
       "",
       HostPolicyState::Absent(),
       DelegatedContext()},
      {"host_policy_denied",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       none,
       docs,
       {},
       capability::ReasonCode::kHostPolicyDenied,
       "g1",
       DenyDocs()},
      {"host_policy_unavailable",
       [] { return std::vector<CapabilityGrant>{ReadFiles("g1")}; },
       none,
       docs,
       {},
       capability::ReasonCode::kHostPolicyUnavailable,
       "",
       HostPolicyState::Unavailable()},
  };
  for (CodeCase& c : table) {
    World world;
    c.setup(world);
    const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
    const auto authority = Resolve(c.grants(), std::move(c.policy), c.context);
    const AuthorizationResult result = authorizer.Authorize(*authority, c.request, c.options);
    EXPECT_EQ(result.reason_code, c.expected) << c.name << ": got " << Name(result.reason_code);
    EXPECT_EQ(result.allowed, c.expected == capability::ReasonCode::kAllowed) << c.name;
    EXPECT_EQ(result.fail_closed(), capability::IsFailClosed(c.expected)) << c.name;
    EXPECT_EQ(result.matched_grant_id, c.matched_grant) << c.name;
    EXPECT_EQ(result.explanation.has_value(), !result.allowed) << c.name;
    EXPECT_EQ(result.required_authority.has_value(),
              c.expected == capability::ReasonCode::kNoMatchingGrant)
        << c.name;
  }
}

TEST(AuthorizeTest, UnusableContexts) {
  const std::vector<std::function<void(AccessContext&)>> breakers = {
      [](AccessContext& c) { c.set_purpose(""); },
      [](AccessContext& c) { c.set_purpose("   "); },
      [](AccessContext& c) { c.set_trace_id(""); },
      [](AccessContext& c) { c.clear_now(); },
      [](AccessContext& c) { c.mutable_now()->set_nanos(-1); },
  };
  for (size_t i = 0; i < breakers.size(); ++i) {
    AccessContext context = MakeContext();
    breakers[i](context);
    const auto authority = Resolve({ReadFiles("g1")}, HostPolicyState::Absent(), context);
    const AuthorizationResult result =
        CapabilityAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read"));
    EXPECT_EQ(result.reason_code, capability::ReasonCode::kInvalidContext) << i;
    EXPECT_FALSE(result.required_authority.has_value());
    ASSERT_TRUE(result.explanation.has_value());
    EXPECT_THAT(result.explanation->rejected_grants, IsEmpty());
  }
}

TEST(AuthorizeTest, InvalidContextComesBeforeInvalidRequest) {
  AccessContext context = MakeContext();
  context.set_trace_id("");
  const auto authority = Resolve({}, HostPolicyState::Absent(), context);
  EXPECT_EQ(CapabilityAuthorizer().Authorize(*authority, Req("", {}, "")).reason_code,
            capability::ReasonCode::kInvalidContext);
}

TEST(AuthorizeTest, RequestNamingTheContextOwnerIsFine) {
  const auto authority = Resolve({ReadFiles("g1")});
  EXPECT_TRUE(CapabilityAuthorizer()
                  .Authorize(*authority, Req("files", {"docs"}, "read", Human("alice")))
                  .allowed);
}

TEST(AuthorizeTest, AuthorityUnavailableResultCarriesTheInternalCode) {
  const AuthorizationResult result =
      AuthorityUnavailableResult(capability::AuthorityCode::kGrantScopeMismatch);
  EXPECT_EQ(result.reason_code, capability::ReasonCode::kAuthorityUnavailable);
  EXPECT_TRUE(result.fail_closed());
  const auto decision = result.ToDecision();
  EXPECT_FALSE(decision.allowed());
  EXPECT_EQ(decision.reason_code(), "authority_unavailable");
  EXPECT_EQ(decision.metadata()
                .fields()
                .at("authority")
                .struct_value()
                .fields()
                .at("code")
                .string_value(),
            "grant_scope_mismatch");
}

// ---- Every rejection reason ----------------------------------------------------------------
// issuer, subject and namespace cannot reach a decision: resolution refuses the whole authority
// with grant_scope_mismatch naming them (resolved_authority_test).

TEST(AuthorizeTest, RejectionReasonsInGrantOrder) {
  World world;
  world.with_verifier = true;
  world.verifier.Reject("unverified");
  world.verifier.Fail("verifier-error");
  world.usage.SetUsage("world-1", "spent", 2);
  world.resolver.Add(DelegatorGrant());
  const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
  AccessContext context = DelegatedContext();
  std::vector<CapabilityGrant> grants = {
      GrantBuilder("expired")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("files", {"docs"}, {"read"}))
          .ExpiresAt(T0()),
      GrantBuilder("purpose")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("files", {"docs"}, {"read"}))
          .Purposes({"triage"}),
      GrantBuilder("unverified")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("files", {"docs"}, {"read"})),
      GrantBuilder("verifier-error")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("files", {"docs"}, {"read"})),
      GrantBuilder("other-path")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("files", {"src"}, {"read"})),
      GrantBuilder("other-namespace")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("repo", {}, {"*"})),
      GrantBuilder("bad-chain")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("files", {"docs"}, {"read", "write"}))
          .Parent("parent"),
      GrantBuilder("spent")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("files", {"docs"}, {"read"}))
          .MaxUses(2),
      GrantBuilder("unmatched-expired")
          .Issuer(Agent("delegator"))
          .WithCapability(Cap("repo", {}, {"read"}))
          .ExpiresAt(T0()),
  };
  const auto authority = Resolve(grants, HostPolicyState::Absent(), context);
  const AuthorizationResult result =
      authorizer.Authorize(*authority, Req("files", {"docs", "a"}, "read"), {std::nullopt, true});
  EXPECT_EQ(result.reason_code, capability::ReasonCode::kDelegationChainInvalid);
  ASSERT_TRUE(result.explanation.has_value());
  EXPECT_EQ(result.explanation->grants_resolved, 9);
  EXPECT_EQ(result.explanation->missing_dependency, capability::MissingDependency::kNone);
  EXPECT_THAT(
      ExplanationOf(result),
      ElementsAre(std::make_pair("expired", capability::RejectionReason::kWindow),
                  std::make_pair("purpose", capability::RejectionReason::kPurpose),
                  std::make_pair("unverified", capability::RejectionReason::kVerifier),
                  std::make_pair("verifier-error", capability::RejectionReason::kVerifier),
                  std::make_pair("other-path", capability::RejectionReason::kCapability),
                  std::make_pair("other-namespace", capability::RejectionReason::kCapability),
                  std::make_pair("bad-chain", capability::RejectionReason::kDelegation),
                  std::make_pair("spent", capability::RejectionReason::kExhausted),
                  std::make_pair("unmatched-expired", capability::RejectionReason::kWindow)));
}

TEST(AuthorizeTest, ExplanationStopsWhereAFailClosedDenialStopped) {
  World world;
  world.with_usage = false;
  const auto authority = Resolve({GrantBuilder("wrong").WithCapability(Cap("repo", {}, {"*"})),
                                  ReadFiles("bounded").MaxUses(1), ReadFiles("never-reached")});
  const AuthorizationResult result =
      world.MakeAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read"));
  EXPECT_EQ(result.reason_code, capability::ReasonCode::kUsageStoreUnavailable);
  EXPECT_EQ(result.explanation->missing_dependency, capability::MissingDependency::kUsageStore);
  EXPECT_THAT(ExplanationOf(result),
              ElementsAre(std::make_pair("wrong", capability::RejectionReason::kCapability)));
}

// ---- Matching through the compiled path ---------------------------------------------------

TEST(AuthorizeTest, OneRequirementOneCapabilityOneGrant) {
  // The path of one capability and the action of another never combine, within a grant or
  // across grants.
  const auto within = Resolve({GrantBuilder("g")
                                   .WithCapability(Cap("files", {"a"}, {"read"}, SCOPE_EXACT))
                                   .WithCapability(Cap("files", {"b"}, {"write"}))});
  EXPECT_EQ(CapabilityAuthorizer().Authorize(*within, Req("files", {"a"}, "write")).reason_code,
            capability::ReasonCode::kNoMatchingGrant);
  const auto across =
      Resolve({GrantBuilder("g1").WithCapability(Cap("files", {"a"}, {"read"}, SCOPE_EXACT)),
               GrantBuilder("g2").WithCapability(Cap("files", {"b"}, {"write"}))});
  EXPECT_EQ(CapabilityAuthorizer().Authorize(*across, Req("files", {"a"}, "write")).reason_code,
            capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(
      CapabilityAuthorizer().Authorize(*across, Req("files", {"b", "x"}, "write")).matched_grant_id,
      "g2");
}

TEST(AuthorizeTest, PathActionAndOwnerRules) {
  const auto authority = Resolve(
      {GrantBuilder("cells").WithCapability(Cap("files", {"cell-3"}, {"read"})),
       GrantBuilder("exact").WithCapability(Cap("files", {"x", "y"}, {"read"}, SCOPE_EXACT)),
       GrantBuilder("star").WithCapability(Cap("notion", {}, {"*"})),
       GrantBuilder("snap").WithCapability(Cap("files", {"snaps"}, {"snapshot:*"})),
       GrantBuilder("bob").WithCapability(
           Cap("calendar", {}, {"read"}, SCOPE_DESCENDANTS, Human("bob"))),
       GrantBuilder("alice").WithCapability(
           Cap("calendar", {"work"}, {"read"}, SCOPE_DESCENDANTS, Human("alice")))});
  const CapabilityAuthorizer authorizer;
  const auto code = [&](const CapabilityRequirement& request) {
    return authorizer.Authorize(*authority, request).reason_code;
  };
  EXPECT_EQ(code(Req("files", {"cell-3", "f"}, "read")), capability::ReasonCode::kAllowed);
  EXPECT_EQ(code(Req("files", {"cell-30"}, "read")), capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(code(Req("files", {"x", "y"}, "read")), capability::ReasonCode::kAllowed);
  EXPECT_EQ(code(Req("files", {"x", "y", "z"}, "read")), capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(code(Req("files", {"x"}, "read")), capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(code(Req("notion", {"p"}, "delete")), capability::ReasonCode::kAllowed);
  EXPECT_EQ(code(Req("notion", {"p"}, "*")), capability::ReasonCode::kAllowed);
  EXPECT_EQ(code(Req("files", {"snaps"}, "snapshot:create")),
            capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(code(Req("files", {"snaps"}, "snapshot:*")), capability::ReasonCode::kAllowed);
  EXPECT_EQ(code(Req("files", {"cell-3"}, "*")), capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(code(Req("calendar", {"home"}, "read")), capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(code(Req("calendar", {"work", "monday"}, "read")), capability::ReasonCode::kAllowed);
  EXPECT_EQ(code(Req("calendar", {"home"}, "read", Human("bob"))),
            capability::ReasonCode::kInvalidRequest);
}

TEST(AuthorizeTest, FirstServingGrantIsNamed) {
  const auto authority = Resolve({GrantBuilder("other").WithCapability(Cap("repo", {}, {"*"})),
                                  ReadFiles("first"), ReadFiles("second")});
  EXPECT_EQ(
      CapabilityAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read")).matched_grant_id,
      "first");
}

// ---- Two instants ---------------------------------------------------------------------------

TEST(AuthorizeTest, ExpiryIsInstantBoundRevocationIsSnapshotBound) {
  const auto authority = Resolve(
      {ReadFiles("expiring").ExpiresAt(At(30)), ReadFiles("revoked-mid-turn").RevokedAt(At(10))});
  const CapabilityAuthorizer authorizer;
  const CapabilityRequirement docs = Req("files", {"docs"}, "read");
  EXPECT_EQ(authorizer.Authorize(*authority, docs, {At(29.999), false}).matched_grant_id,
            "expiring");
  // At and after expiry the first grant is refused; the second was revoked after admission,
  // which this turn does not observe.
  AuthorizationResult at_expiry = authorizer.Authorize(*authority, docs, {At(30), false});
  EXPECT_EQ(at_expiry.matched_grant_id, "revoked-mid-turn");
  // An operation instant before admission never revives an expired grant.
  const auto admitted_late =
      Resolve({ReadFiles("expiring").ExpiresAt(At(30))}, HostPolicyState::Absent(), [] {
        AccessContext context = MakeContext();
        *context.mutable_now() = ::sharedos::capability::testing::Ts(At(30));
        return context;
      }());
  EXPECT_EQ(authorizer.Authorize(*admitted_late, docs, {At(0), false}).reason_code,
            capability::ReasonCode::kNoMatchingGrant);
}

TEST(AuthorizeTest, IssuedAtAndNotBeforeJudgedAtAdmission) {
  const auto authority =
      Resolve({ReadFiles("issued-later").IssuedAt(At(5)), ReadFiles("not-yet").NotBefore(At(5))});
  const AuthorizationResult result =
      CapabilityAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read"), {At(10), false});
  EXPECT_EQ(result.reason_code, capability::ReasonCode::kNoMatchingGrant);
  EXPECT_THAT(ExplanationOf(result),
              ElementsAre(std::make_pair("issued-later", capability::RejectionReason::kWindow),
                          std::make_pair("not-yet", capability::RejectionReason::kWindow)));
}

// ---- Denial precedence -----------------------------------------------------------------------

TEST(AuthorizeTest, UnverifiedOutranksInvalidWhateverTheOrder) {
  World world;
  world.resolver.Add(DelegatorGrant());
  world.resolver.Add(GrantBuilder("narrow-parent")
                         .Subject(Agent("delegator"))
                         .Issuer(Human("alice"))
                         .WithCapability(Cap("files", {"other"}, {"read"}))
                         .DelegationDepth(1)
                         .IssuedAt(T0() - absl::Hours(2)));
  const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
  const CapabilityGrant invalid = Leaf("invalid").Parent("narrow-parent");
  const CapabilityGrant unverified = Leaf("unverified").Parent("missing-parent");
  for (const auto& grants : {std::vector<CapabilityGrant>{invalid, unverified},
                             std::vector<CapabilityGrant>{unverified, invalid}}) {
    const auto authority = Resolve(grants, HostPolicyState::Absent(), DelegatedContext());
    const AuthorizationResult result =
        authorizer.Authorize(*authority, Req("files", {"docs"}, "read"));
    EXPECT_EQ(result.reason_code, capability::ReasonCode::kDelegationChainUnverified);
    ASSERT_TRUE(result.delegation.has_value());
    EXPECT_EQ(result.delegation->code, capability::DelegationCode::kParentNotFound);
    EXPECT_EQ(result.delegation->grant_id, "unverified");
    // A resolver is installed: nothing is missing, the parent just was not found.
    EXPECT_EQ(result.explanation->missing_dependency, capability::MissingDependency::kNone);
  }
}

TEST(AuthorizeTest, DenialPrecedence) {
  World world;
  world.usage.SetUsage("world-1", "spent", 1);
  const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
  const CapabilityRequirement docs = Req("files", {"docs"}, "read");
  // Ceiling rules depend on the request, not the grant, so each pair gets its own authority.
  HostPolicyRule rule{"deny-docs", "files", {"docs"}, SCOPE_DESCENDANTS, {}, {}, {}};
  const CapabilityGrant spent = ReadFiles("spent").MaxUses(1);
  const CapabilityGrant chained = Leaf("chained").Parent("missing");

  // delegation failure > host_policy_denied.
  {
    const auto authority =
        Resolve({ReadFiles("denied").Issuer(Agent("delegator")), chained},
                HostPolicyState::Loaded(HostPolicy{"v", {rule}}), DelegatedContext());
    EXPECT_EQ(authorizer.Authorize(*authority, docs).reason_code,
              capability::ReasonCode::kDelegationChainUnverified);
  }
  // host_policy_denied over grant_exhausted: rules depend on the request, so every grant
  // reaching the ceiling gets the same verdict and the two never co-occur; what holds is that
  // the ceiling comes first, so a spent grant it covers is host_policy_denied, uncounted.
  {
    const int calls = world.usage.calls();
    const auto authority =
        Resolve({spent, ReadFiles("denied")}, HostPolicyState::Loaded(HostPolicy{"v", {rule}}));
    const AuthorizationResult result = authorizer.Authorize(*authority, docs, {std::nullopt, true});
    EXPECT_EQ(result.reason_code, capability::ReasonCode::kHostPolicyDenied);
    EXPECT_EQ(result.matched_grant_id, "spent");  // The first grant the ceiling overrode.
    EXPECT_EQ(world.usage.calls(), calls);
  }
  // grant_exhausted > no_matching_grant.
  {
    const auto authority =
        Resolve({GrantBuilder("other").WithCapability(Cap("repo", {}, {"*"})), spent});
    const AuthorizationResult result = authorizer.Authorize(*authority, docs, {std::nullopt, true});
    EXPECT_EQ(result.reason_code, capability::ReasonCode::kGrantExhausted);
    EXPECT_EQ(result.matched_grant_id, "spent");
    EXPECT_FALSE(result.required_authority.has_value());
  }
  // Any later grant that serves wins over every earlier soft denial.
  {
    const auto authority = Resolve({spent, ReadFiles("fresh").MaxUses(5)});
    const AuthorizationResult result = authorizer.Authorize(*authority, docs, {std::nullopt, true});
    EXPECT_TRUE(result.allowed);
    EXPECT_EQ(result.matched_grant_id, "fresh");
    EXPECT_TRUE(result.consumed);
  }
}

TEST(AuthorizeTest, FailClosedDenialsStopAtOnce) {
  // usage_store_unavailable on the first bounded grant, though a later grant would allow.
  World world;
  world.usage.SetFailure(absl::UnavailableError("down"));
  const auto authority = Resolve({ReadFiles("bounded").MaxUses(1), ReadFiles("unbounded")});
  EXPECT_EQ(world.MakeAuthorizer()
                .Authorize(*authority, Req("files", {"docs"}, "read"), {std::nullopt, true})
                .reason_code,
            capability::ReasonCode::kUsageStoreUnavailable);
  // host_policy_unavailable as soon as a grant matches; never for a request nothing matches.
  const auto unavailable =
      Resolve({ReadFiles("g1"), ReadFiles("g2")}, HostPolicyState::Unavailable());
  EXPECT_EQ(
      CapabilityAuthorizer().Authorize(*unavailable, Req("files", {"docs"}, "read")).reason_code,
      capability::ReasonCode::kHostPolicyUnavailable);
  EXPECT_EQ(CapabilityAuthorizer().Authorize(*unavailable, Req("repo", {}, "read")).reason_code,
            capability::ReasonCode::kNoMatchingGrant);
}

// ---- Host ceiling ----------------------------------------------------------------------------

TEST(AuthorizeTest, CeilingNarrowsAndNamesGrantAndRule) {
  World world;
  const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
  const auto authority = Resolve(
      {ReadFiles("g1").MaxUses(5), GrantBuilder("g2").WithCapability(Cap("files", {}, {"read"}))},
      DenyDocs("no-docs"));
  const AuthorizationResult result =
      authorizer.Authorize(*authority, Req("files", {"docs", "a"}, "read"), {std::nullopt, true});
  EXPECT_EQ(result.reason_code, capability::ReasonCode::kHostPolicyDenied);
  EXPECT_FALSE(result.fail_closed());
  EXPECT_EQ(result.matched_grant_id, "g1");
  ASSERT_TRUE(result.host_policy.has_value());
  EXPECT_EQ(result.host_policy->rule_id, "no-docs");
  EXPECT_EQ(result.host_policy->policy_version, "policy-v2");
  // Consulted before consumption: the bounded grant was not charged.
  EXPECT_EQ(world.usage.calls(), 0);
  EXPECT_FALSE(result.required_authority.has_value());
  const auto decision = result.ToDecision();
  EXPECT_EQ(decision.matched_grant_id(), "g1");
  const auto& host = decision.metadata().fields().at("hostPolicy").struct_value().fields();
  EXPECT_EQ(host.at("ruleId").string_value(), "no-docs");
  EXPECT_EQ(host.at("version").string_value(), "policy-v2");
  // Outside the rule the same authority allows.
  EXPECT_TRUE(authorizer.Authorize(*authority, Req("files", {"src"}, "read")).allowed);
}

TEST(AuthorizeTest, CeilingRulesScopedToActorsAndPurposes) {
  HostPolicyRule rule{"interns-only", "files",           {}, SCOPE_DESCENDANTS,
                      {"read"},       {Agent("intern")}, {}};
  const auto authority =
      Resolve({ReadFiles("g1")}, HostPolicyState::Loaded(HostPolicy{"v", {rule}}));
  EXPECT_TRUE(CapabilityAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read")).allowed);
  rule.actors.push_back(Agent("alice-assistant"));
  rule.purposes = {"assist"};
  const auto narrowed =
      Resolve({ReadFiles("g1")}, HostPolicyState::Loaded(HostPolicy{"v", {rule}}));
  EXPECT_EQ(CapabilityAuthorizer().Authorize(*narrowed, Req("files", {"docs"}, "read")).reason_code,
            capability::ReasonCode::kHostPolicyDenied);
}

TEST(AuthorizeTest, CeilingNeverWidens) {
  // A loaded policy with no rule covering the request changes nothing, and a policy never
  // turns a missing grant into an allow.
  const auto authority = Resolve({}, DenyDocs());
  EXPECT_EQ(CapabilityAuthorizer().Authorize(*authority, Req("files", {"src"}, "read")).reason_code,
            capability::ReasonCode::kNoMatchingGrant);
}

// ---- Bounded use -----------------------------------------------------------------------------

TEST(AuthorizeTest, BoundedUseConsumesOnlyWhenAsked) {
  World world;
  const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
  const auto authority = Resolve({ReadFiles("twice").MaxUses(2)});
  const CapabilityRequirement docs = Req("files", {"docs"}, "read");
  for (int i = 0; i < 3; ++i) {
    const AuthorizationResult peek = authorizer.Authorize(*authority, docs);
    EXPECT_TRUE(peek.allowed);
    EXPECT_FALSE(peek.consumed);
    EXPECT_TRUE(authorizer.Discover(*authority, docs).allowed);
  }
  EXPECT_EQ(world.usage.Used("world-1", "twice"), 0);
  EXPECT_TRUE(authorizer.Authorize(*authority, docs, {std::nullopt, true}).consumed);
  EXPECT_TRUE(authorizer.Authorize(*authority, docs, {std::nullopt, true}).consumed);
  const AuthorizationResult third = authorizer.Authorize(*authority, docs, {std::nullopt, true});
  EXPECT_EQ(third.reason_code, capability::ReasonCode::kGrantExhausted);
  EXPECT_FALSE(third.consumed);
  EXPECT_EQ(world.usage.Used("world-1", "twice"), 2);
  EXPECT_EQ(authorizer.Authorize(*authority, docs).reason_code,
            capability::ReasonCode::kGrantExhausted);
  EXPECT_EQ(authorizer.Discover(*authority, docs).reason_code,
            capability::ReasonCode::kGrantExhausted);
}

// ---- Delegation at use -----------------------------------------------------------------------

TEST(AuthorizeTest, DerivedGrantAuthorizesThroughAValidChain) {
  World world;
  world.resolver.Add(DelegatorGrant());
  const auto authority = Resolve({Leaf()}, HostPolicyState::Absent(), DelegatedContext());
  const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
  EXPECT_EQ(authorizer.Authorize(*authority, Req("files", {"docs", "a"}, "read")).matched_grant_id,
            "leaf");
  // The chain is only walked once a capability matched.
  const int calls = world.resolver.calls();
  EXPECT_EQ(authorizer.Authorize(*authority, Req("repo", {}, "read")).reason_code,
            capability::ReasonCode::kNoMatchingGrant);
  EXPECT_EQ(world.resolver.calls(), calls);
}

TEST(AuthorizeTest, DelegationDenialMetadata) {
  World world;
  world.with_resolver = false;
  const auto authority = Resolve({Leaf()}, HostPolicyState::Absent(), DelegatedContext());
  const AuthorizationResult result =
      world.MakeAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read"));
  EXPECT_EQ(result.reason_code, capability::ReasonCode::kDelegationChainUnverified);
  EXPECT_TRUE(result.fail_closed());
  EXPECT_EQ(result.explanation->missing_dependency,
            capability::MissingDependency::kDelegationResolver);
  const auto decision = result.ToDecision();
  const auto& delegation = decision.metadata().fields().at("delegation").struct_value().fields();
  EXPECT_EQ(delegation.at("code").string_value(), "resolver_unavailable");
  EXPECT_EQ(delegation.at("grantId").string_value(), "leaf");
  EXPECT_TRUE(decision.matched_grant_id().empty());
}

// ---- Live revocation -------------------------------------------------------------------------

TEST(AuthorizeTest, LiveRevocationOfLeafOrAncestor) {
  for (const std::string revoked : {"leaf", "parent"}) {
    World world;
    world.with_revocations = true;
    world.resolver.Add(DelegatorGrant());
    world.revocations.Revoke(revoked);
    const auto authority = Resolve({Leaf()}, HostPolicyState::Absent(), DelegatedContext());
    const AuthorizationResult result = world.MakeAuthorizer().Authorize(
        *authority, Req("files", {"docs"}, "read"), {std::nullopt, true});
    EXPECT_EQ(result.reason_code, capability::ReasonCode::kNoMatchingGrant) << revoked;
    EXPECT_THAT(ExplanationOf(result),
                ElementsAre(std::make_pair("leaf", capability::RejectionReason::kWindow)));
    EXPECT_THAT(world.revocations.checked(), ElementsAre("leaf", "parent"));
  }
}

TEST(AuthorizeTest, RevocationOutageFailsClosedWithoutConsuming) {
  for (bool malformed : {false, true}) {
    World world;
    world.with_revocations = true;
    if (malformed) {
      world.revocations.SetMalformed(true);
    } else {
      world.revocations.SetFailure(absl::UnavailableError("down"));
    }
    const auto authority = Resolve({ReadFiles("bounded").MaxUses(3)});
    const AuthorizationResult result = world.MakeAuthorizer().Authorize(
        *authority, Req("files", {"docs"}, "read"), {std::nullopt, true});
    EXPECT_EQ(result.reason_code, capability::ReasonCode::kAuthorityUnavailable) << malformed;
    EXPECT_TRUE(result.fail_closed());
    EXPECT_EQ(result.authority_code, capability::AuthorityCode::kRevocationUnavailable);
    EXPECT_EQ(world.usage.calls(), 0);
  }
}

// ---- requiredAuthority (ADR 0019) ------------------------------------------------------------

TEST(AuthorizeTest, RequiredAuthorityOnlyOnInvocationNoMatchingGrant) {
  const CapabilityRequirement wanted = Req("files", {"Memory", "project-x"}, "read");
  const auto authority = Resolve({});
  const AuthorizationResult denied = CapabilityAuthorizer().Authorize(*authority, wanted);
  ASSERT_TRUE(denied.required_authority.has_value());
  EXPECT_EQ(denied.required_authority->id(),
            "capreq-e9b6e0cb3554a851fdc1e2b0b2720432991db61f8f0b632e033a70fec8a792eb");
  EXPECT_EQ(denied.ToDecision().required_authority().id(), denied.required_authority->id());
  EXPECT_FALSE(CapabilityAuthorizer().Discover(*authority, wanted).required_authority.has_value());
}

TEST(AuthorizeTest, RequiredAuthorityIdStableAcrossTurns) {
  AccessContext later = MakeContext();
  *later.mutable_now() = ::sharedos::capability::testing::Ts(At(7200));
  later.set_trace_id("trace-2");
  const CapabilityRequirement wanted = Req("files", {"docs", "x"}, "write");
  const auto first = CapabilityAuthorizer().Authorize(*Resolve({}), wanted);
  const auto second =
      CapabilityAuthorizer().Authorize(*Resolve({}, HostPolicyState::Absent(), later), wanted);
  EXPECT_EQ(first.required_authority->id(), second.required_authority->id());
  EXPECT_NE(first.required_authority->requested_at().seconds(),
            second.required_authority->requested_at().seconds());
}

TEST(AuthorizeTest, NoExistenceOracle) {
  // Whatever the authority holds around the path — nothing, a grant for a sibling, for
  // another action on the same path, expired, or for the parent folder exact — the description
  // of a no_matching_grant denial is the same object.
  const CapabilityRequirement wanted = Req("files", {"docs", "secret.md"}, "write");
  const std::vector<std::vector<CapabilityGrant>> authorities = {
      {},
      {GrantBuilder("sibling").WithCapability(Cap("files", {"docs", "public.md"}, {"write"}))},
      {GrantBuilder("read-only").WithCapability(Cap("files", {"docs", "secret.md"}, {"read"}))},
      {GrantBuilder("expired").WithCapability(Cap("files", {"docs"}, {"write"})).ExpiresAt(T0())},
      {GrantBuilder("folder").WithCapability(Cap("files", {"docs"}, {"write"}, SCOPE_EXACT))},
  };
  std::string first;
  for (const auto& grants : authorities) {
    const AuthorizationResult result = CapabilityAuthorizer().Authorize(*Resolve(grants), wanted);
    ASSERT_EQ(result.reason_code, capability::ReasonCode::kNoMatchingGrant);
    ASSERT_TRUE(result.required_authority.has_value());
    const std::string serialized = result.ToDecision().SerializeAsString();
    if (first.empty()) first = serialized;
    EXPECT_EQ(serialized, first);
  }
}

// ---- Discovery -------------------------------------------------------------------------------

TEST(DiscoverTest, NarrowGrantMakesBroadToolDiscoverable) {
  const auto authority =
      Resolve({GrantBuilder("one-file")
                   .WithCapability(Cap("files", {"docs", "a.md"}, {"read"}, SCOPE_EXACT))});
  const CapabilityAuthorizer authorizer;
  const CapabilityRequirement ceiling = Req("files", {}, "read");
  const AuthorizationResult discovered = authorizer.Discover(*authority, ceiling);
  EXPECT_TRUE(discovered.allowed);
  EXPECT_EQ(discovered.matched_grant_id, "one-file");
  EXPECT_FALSE(discovered.explanation.has_value());
  // …but invoking it on the ceiling itself is refused, as is another file.
  EXPECT_FALSE(authorizer.Authorize(*authority, ceiling).allowed);
  EXPECT_FALSE(authorizer.Authorize(*authority, Req("files", {"docs", "b.md"}, "read")).allowed);
  const AuthorizationResult denied = authorizer.Discover(*authority, Req("files", {}, "write"));
  EXPECT_EQ(denied.reason_code, capability::ReasonCode::kNoMatchingGrant);
  EXPECT_FALSE(denied.explanation.has_value());
  EXPECT_FALSE(denied.required_authority.has_value());
}

TEST(DiscoverTest, CeilingConsultedOnDiscovery) {
  const auto authority =
      Resolve({GrantBuilder("g").WithCapability(Cap("files", {}, {"read"}))}, DenyDocs());
  const CapabilityAuthorizer authorizer;
  // The rule covers files/docs/…; a tool whose ceiling is files/docs is hidden, a tool whose
  // ceiling is the whole namespace is not (its calls are re-checked at invocation).
  EXPECT_EQ(authorizer.Discover(*authority, Req("files", {"docs"}, "read")).reason_code,
            capability::ReasonCode::kHostPolicyDenied);
  EXPECT_TRUE(authorizer.Discover(*authority, Req("files", {}, "read")).allowed);
  EXPECT_EQ(authorizer.Authorize(*authority, Req("files", {"docs", "a"}, "read")).reason_code,
            capability::ReasonCode::kHostPolicyDenied);
  const auto unavailable = Resolve({GrantBuilder("g").WithCapability(Cap("files", {}, {"read"}))},
                                   HostPolicyState::Unavailable());
  EXPECT_EQ(authorizer.Discover(*unavailable, Req("files", {}, "read")).reason_code,
            capability::ReasonCode::kHostPolicyUnavailable);
}

// ---- Turn admission --------------------------------------------------------------------------

TEST(AdmitTurnTest, AuthorizesExecutionOfTheAgentAndConsumes) {
  World world;
  const CapabilityAuthorizer authorizer = world.MakeAuthorizer();
  const auto authority =
      Resolve({GrantBuilder("run-bob")
                   .WithCapability(Cap("sharedos.execution", {"agent", "bob-assistant"}, {"invoke"},
                                       SCOPE_EXACT))
                   .MaxUses(1)});
  const AuthorizationResult admitted = authorizer.AdmitTurn(*authority, Agent("bob-assistant"));
  EXPECT_TRUE(admitted.allowed);
  EXPECT_TRUE(admitted.consumed);
  EXPECT_EQ(authorizer.AdmitTurn(*authority, Agent("bob-assistant")).reason_code,
            capability::ReasonCode::kGrantExhausted);
  const AuthorizationResult other = authorizer.AdmitTurn(*authority, Human("bob-assistant"));
  EXPECT_EQ(other.reason_code, capability::ReasonCode::kNoMatchingGrant);
  ASSERT_TRUE(other.required_authority.has_value());
  const auto& capability = other.required_authority->capabilities(0);
  EXPECT_EQ(capability.resource().namespace_(), "sharedos.execution");
  EXPECT_THAT(capability.resource().path(), ElementsAre("human", "bob-assistant"));
  EXPECT_EQ(capability.resource().owner().human_user_id(), "alice");
  EXPECT_THAT(capability.actions(), ElementsAre("invoke"));
}

// ---- The agent-facing answer -----------------------------------------------------------------

TEST(ToDecisionTest, AllowedCarriesOnlyTheGrant) {
  const auto authority = Resolve({ReadFiles("g1")});
  const auto decision =
      CapabilityAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read")).ToDecision();
  EXPECT_TRUE(decision.allowed());
  EXPECT_EQ(decision.reason_code(), "allowed");
  EXPECT_EQ(decision.matched_grant_id(), "g1");
  EXPECT_FALSE(decision.has_required_authority());
  EXPECT_FALSE(decision.has_metadata());
}

TEST(ToDecisionTest, ExplanationNeverReachesTheAgent) {
  const auto authority = Resolve({ReadFiles("g1").Purposes({"triage"})});
  const AuthorizationResult result =
      CapabilityAuthorizer().Authorize(*authority, Req("files", {"docs"}, "read"));
  ASSERT_TRUE(result.explanation.has_value());
  ASSERT_FALSE(result.explanation->rejected_grants.empty());
  const auto decision = result.ToDecision();
  EXPECT_FALSE(decision.has_metadata());
  EXPECT_TRUE(decision.matched_grant_id().empty());
  EXPECT_EQ(decision.SerializeAsString().find("g1"), std::string::npos);
}

}  // namespace
}  // namespace sharedos::authorizer::core
