// Property tests over generated grants: a seeded PRNG, a few thousand cases per property,
// deterministic from run to run.

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "authorizer_svc/core/capability_authorizer.h"
#include "authorizer_svc/core/fakes.h"
#include "capability/derive_grant.h"
#include "capability/eligibility.h"
#include "capability/matching.h"
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
using ::sharedos::capability::testing::Ts;
using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;

constexpr int kCases = 3000;

// A small deterministic generator over a deliberately small vocabulary, so that generated
// grants and requests collide often.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  int Below(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool OneIn(int n) { return Below(n) == 0; }
  template <typename T>
  const T& Pick(const std::vector<T>& items) {
    return items[Below(static_cast<int>(items.size()))];
  }

  std::string Namespace() { return Pick<std::string>({"files", "repo", "notion"}); }
  std::string Segment() { return Pick<std::string>({"a", "b", "cell-3", "cell-30"}); }
  std::vector<std::string> Path(int max) {
    std::vector<std::string> path;
    for (int i = Below(max + 1); i > 0; --i) path.push_back(Segment());
    return path;
  }
  std::string Action() { return Pick<std::string>({"read", "write", "list", "*"}); }
  std::optional<protocol::v1::Address> Owner() {
    switch (Below(8)) {
      case 0:
        return Human("alice");  // The context owner, named.
      case 1:
        return Human("bob");
      default:
        return std::nullopt;
    }
  }

  Capability RandomCapability() {
    std::vector<std::string> actions;
    for (int i = Below(3); i >= 0; --i) actions.push_back(Action());
    return Cap(Namespace(), Path(3), actions, OneIn(2) ? SCOPE_EXACT : SCOPE_DESCENDANTS, Owner());
  }

  CapabilityRequirement Requirement() {
    std::optional<protocol::v1::Address> owner;
    if (OneIn(6)) owner = Human("alice");
    return ::sharedos::capability::testing::Req(Namespace(), Path(4), Action(), owner);
  }

  // Time and purpose constraints drawn around T0 (admission).
  void Constrain(GrantBuilder& grant) {
    double expires_at = 1e9;
    if (OneIn(4)) {
      expires_at = Pick<double>({-10, 0, 5, 100});
      grant.ExpiresAt(At(expires_at));
    }
    if (OneIn(6)) {
      const double not_before = Pick<double>({-100, 1});
      if (not_before <= expires_at) grant.NotBefore(At(not_before));
    }
    if (OneIn(6)) grant.IssuedAt(At(Pick<double>({-3600, 0, 1})));
    if (OneIn(5))
      grant.Purposes(OneIn(2) ? std::vector<std::string>{"assist"}
                              : std::vector<std::string>{"triage"});
  }

  CapabilityGrant Grant(const std::string& id, bool bounded) {
    GrantBuilder grant(id);
    for (int i = Below(4); i >= 0; --i) grant.WithCapability(RandomCapability());
    Constrain(grant);
    if (bounded && OneIn(4)) grant.MaxUses(1 + Below(2));
    return grant;
  }

  std::optional<absl::Time> OperationInstant() {
    switch (Below(4)) {
      case 0:
        return std::nullopt;
      case 1:
        return At(0);
      case 2:
        return At(5);
      default:
        return At(200);
    }
  }

  HostPolicyRule Rule(const std::string& id) {
    HostPolicyRule rule;
    rule.id = id;
    rule.resource_namespace = Namespace();
    rule.path = Path(2);
    rule.scope = OneIn(2) ? SCOPE_EXACT : SCOPE_DESCENDANTS;
    if (OneIn(2)) rule.actions = {Action()};
    if (OneIn(4)) rule.actors = {OneIn(2) ? Agent("alice-assistant") : Agent("someone")};
    if (OneIn(4)) rule.purposes = {OneIn(2) ? "assist" : "triage"};
    return rule;
  }

 private:
  std::mt19937_64 rng_;
};

std::shared_ptr<const ResolvedAuthority> Resolve(std::vector<CapabilityGrant> grants,
                                                 HostPolicyState policy,
                                                 AccessContext context = MakeContext()) {
  AuthorityResolution resolution =
      AuthorityResolution::Resolve(context, std::move(grants), std::move(policy));
  EXPECT_TRUE(resolution.resolved()) << resolution.detail();
  return resolution.authority();
}

// ---- The compiled decision path agrees with the definitions of §2.3, §2.4 and §3.4 --------

TEST(AuthorizerPropertyTest, CompiledPathAgreesWithTheDefinitions) {
  Gen gen(0x5eed0001);
  int allowed = 0;
  for (int c = 0; c < kCases; ++c) {
    std::vector<CapabilityGrant> grants;
    for (int i = gen.Below(6); i >= 0; --i) {
      grants.push_back(gen.Grant(absl::StrCat("g", i), /*bounded=*/false));
    }
    const CapabilityRequirement request = gen.Requirement();
    const std::optional<absl::Time> now = gen.OperationInstant();
    const bool discovery = gen.OneIn(2);
    const auto authority = Resolve(grants, HostPolicyState::Absent());
    const AccessContext& context = authority->context();
    const capability::DecisionInstants instants = *capability::ResolveInstants(context, now);

    std::string expected;  // The first grant serving the request, per the definitions.
    for (const CapabilityGrant& grant : authority->grants()) {
      if (capability::InactiveReason(grant, context.purpose(), instants).has_value()) continue;
      for (const Capability& capability : grant.capabilities()) {
        if (discovery
                ? capability::CapabilityIntersectsCeiling(capability, request, context.owner())
                : capability::CapabilityMatches(capability, request, context.owner())) {
          expected = grant.id();
          break;
        }
      }
      if (!expected.empty()) break;
    }
    const CapabilityAuthorizer authorizer;
    const AuthorizationResult result =
        discovery ? authorizer.Discover(*authority, request, now)
                  : authorizer.Authorize(*authority, request, {now, false});
    ASSERT_EQ(result.allowed, !expected.empty()) << "case " << c;
    ASSERT_EQ(result.matched_grant_id, expected) << "case " << c;
    if (!result.allowed) {
      ASSERT_EQ(result.reason_code, capability::ReasonCode::kNoMatchingGrant);
    }
    allowed += result.allowed;
  }
  // The generator must exercise both outcomes.
  EXPECT_GT(allowed, kCases / 10);
  EXPECT_LT(allowed, kCases * 9 / 10);
}

// ---- A derived grant never authorizes a request its parent would not -------------------------

// A capability within `parent` most of the time, anything some of the time.
Capability ChildCapability(Gen& gen, const CapabilityGrant& parent) {
  if (gen.OneIn(5)) return gen.RandomCapability();
  const Capability from =
      gen.Pick(std::vector<Capability>(parent.capabilities().begin(), parent.capabilities().end()));
  std::vector<std::string> path(from.resource().path().begin(), from.resource().path().end());
  protocol::v1::Scope scope = SCOPE_EXACT;
  if (from.scope() == SCOPE_DESCENDANTS) {
    for (int i = gen.Below(3); i > 0; --i) path.push_back(gen.Segment());
    scope = gen.OneIn(2) ? SCOPE_EXACT : SCOPE_DESCENDANTS;
  }
  std::vector<std::string> actions;
  for (const std::string& action : from.actions()) {
    if (gen.OneIn(2)) actions.push_back(action);
  }
  if (actions.empty())
    actions.push_back(capability::ActionsCover(from.actions(), "*") ? gen.Action()
                                                                    : from.actions(0));
  std::optional<protocol::v1::Address> owner;
  if (from.resource().has_owner()) owner = from.resource().owner();
  return Cap(from.resource().namespace_(), path, actions, scope, owner);
}

TEST(AuthorizerPropertyTest, DerivedGrantNeverExceedsItsParent) {
  Gen gen(0x5eed0002);
  AccessContext parent_context = MakeContext();
  *parent_context.mutable_actor() = Agent("delegator");
  AccessContext child_context = MakeContext();
  *child_context.mutable_authority() = Agent("delegator");
  int derived = 0;
  int child_allowed = 0;
  for (int c = 0; c < kCases; ++c) {
    GrantBuilder parent_builder("parent");
    parent_builder.Subject(Agent("delegator")).IssuedAt(At(-7200));
    for (int i = gen.Below(3); i >= 0; --i) parent_builder.WithCapability(gen.RandomCapability());
    gen.Constrain(parent_builder);
    parent_builder.IssuedAt(At(gen.Pick<double>({-7200, -7200, 1})));
    if (!gen.OneIn(8)) parent_builder.DelegationDepth(1 + gen.Below(2));
    if (gen.OneIn(10)) parent_builder.MaxUses(3);
    const CapabilityGrant parent = parent_builder;

    capability::DeriveRequest request;
    request.id = "child";
    request.subject = Agent("alice-assistant");
    for (int i = gen.Below(3); i >= 0; --i)
      request.capabilities.push_back(ChildCapability(gen, parent));
    request.issued_at = Ts(At(gen.Pick<double>({-3600, -7200, -9000})));
    if (gen.OneIn(2)) {
      protocol::v1::CapabilityConstraints& constraints = request.constraints.emplace();
      if (gen.OneIn(3)) constraints.add_purposes(gen.OneIn(2) ? "assist" : "triage");
      if (gen.OneIn(3)) *constraints.mutable_expires_at() = Ts(At(gen.Pick<double>({3, 50, 500})));
      if (gen.OneIn(4)) *constraints.mutable_not_before() = Ts(At(gen.Pick<double>({-200, 0})));
      if (gen.OneIn(4)) constraints.set_delegation_depth(0);
    }
    absl::StatusOr<capability::DeriveResult> result = capability::DeriveGrant(parent, request);
    ASSERT_TRUE(result.ok()) << result.status();
    if (!result->ok()) continue;
    ++derived;

    FakeDelegationResolver resolver;
    resolver.Add(parent);
    CapabilityAuthorizer::Options options;
    options.delegation_resolver = &resolver;
    const CapabilityAuthorizer authorizer(options);
    const auto child_authority = Resolve({result->grant}, HostPolicyState::Absent(), child_context);
    const auto parent_authority = Resolve({parent}, HostPolicyState::Absent(), parent_context);
    for (int r = 0; r < 8; ++r) {
      const CapabilityRequirement requirement = gen.OneIn(2) ? gen.Requirement() : [&] {
        const Capability& granted = result->grant.capabilities(0);
        std::vector<std::string> path(granted.resource().path().begin(),
                                      granted.resource().path().end());
        if (gen.OneIn(2)) path.push_back(gen.Segment());
        return ::sharedos::capability::testing::Req(
            granted.resource().namespace_(), path,
            gen.Pick(std::vector<std::string>(granted.actions().begin(), granted.actions().end())));
      }();
      const std::optional<absl::Time> now = gen.OperationInstant();
      for (bool discovery : {false, true}) {
        const AuthorizationResult child =
            discovery ? authorizer.Discover(*child_authority, requirement, now)
                      : authorizer.Authorize(*child_authority, requirement, {now, false});
        if (!child.allowed) continue;
        ++child_allowed;
        const AuthorizationResult by_parent =
            discovery ? authorizer.Discover(*parent_authority, requirement, now)
                      : authorizer.Authorize(*parent_authority, requirement, {now, false});
        ASSERT_TRUE(by_parent.allowed)
            << "case " << c << ": the child allows what its parent refuses ("
            << Name(by_parent.reason_code) << ")";
      }
    }
  }
  EXPECT_GT(derived, kCases / 5);
  EXPECT_GT(child_allowed, kCases / 4);
}

// ---- Adding a ceiling rule never turns a denial into an allow ----------------------------------

TEST(AuthorizerPropertyTest, CeilingRulesOnlyNarrow) {
  Gen gen(0x5eed0003);
  int turned = 0;
  for (int c = 0; c < kCases; ++c) {
    std::vector<CapabilityGrant> grants;
    for (int i = gen.Below(5); i >= 0; --i) {
      grants.push_back(gen.Grant(absl::StrCat("g", i), /*bounded=*/true));
    }
    std::vector<HostPolicyRule> rules;
    for (int i = gen.Below(3); i > 0; --i) rules.push_back(gen.Rule(absl::StrCat("r", i)));
    std::vector<HostPolicyRule> more = rules;
    more.push_back(gen.Rule("added"));
    const CapabilityRequirement request = gen.Requirement();
    const std::optional<absl::Time> now = gen.OperationInstant();
    FakeUsageCounter usage;
    for (const CapabilityGrant& grant : grants) {
      usage.SetUsage("world-1", grant.id(), gen.Below(2));
    }
    CapabilityAuthorizer::Options options;
    options.usage_counter = &usage;
    const CapabilityAuthorizer authorizer(options);
    const auto absent = Resolve(grants, HostPolicyState::Absent());
    const auto before = Resolve(grants, HostPolicyState::Loaded(HostPolicy{"v1", rules}));
    const auto after = Resolve(grants, HostPolicyState::Loaded(HostPolicy{"v2", more}));
    for (bool discovery : {false, true}) {
      const auto decide = [&](const ResolvedAuthority& authority) {
        return discovery ? authorizer.Discover(authority, request, now)
                         : authorizer.Authorize(authority, request, {now, false});
      };
      const AuthorizationResult without = decide(*absent);
      const AuthorizationResult with_rules = decide(*before);
      const AuthorizationResult with_more = decide(*after);
      ASSERT_TRUE(!with_rules.allowed || without.allowed) << "case " << c;
      ASSERT_TRUE(!with_more.allowed || with_rules.allowed) << "case " << c;
      turned += with_rules.allowed && !with_more.allowed;
    }
  }
  EXPECT_GT(turned, 0);  // The added rule did bite sometimes.
}

// ---- Decisions do not depend on grant order, except for the grant they name ------------------

TEST(AuthorizerPropertyTest, GrantOrderOnlyChangesTheNamedGrant) {
  Gen gen(0x5eed0004);
  std::mt19937_64 shuffler(0x5eed0005);
  for (int c = 0; c < kCases; ++c) {
    std::vector<CapabilityGrant> grants;
    for (int i = gen.Below(6); i >= 0; --i) {
      grants.push_back(gen.Grant(absl::StrCat("g", i), /*bounded=*/true));
    }
    std::vector<CapabilityGrant> shuffled = grants;
    std::shuffle(shuffled.begin(), shuffled.end(), shuffler);
    std::vector<HostPolicyRule> rules;
    if (gen.OneIn(3)) rules.push_back(gen.Rule("r"));
    const CapabilityRequirement request = gen.Requirement();
    const std::optional<absl::Time> now = gen.OperationInstant();
    const bool consume = gen.OneIn(2);
    const bool discovery = gen.OneIn(3);

    std::vector<int64_t> used;
    for (size_t i = 0; i < grants.size(); ++i) used.push_back(gen.Below(2));
    const auto decide = [&](const std::vector<CapabilityGrant>& order) {
      FakeUsageCounter usage;  // A fresh store per run: consumption must not leak across.
      for (size_t i = 0; i < grants.size(); ++i) {
        usage.SetUsage("world-1", grants[i].id(), used[i]);
      }
      CapabilityAuthorizer::Options options;
      options.usage_counter = &usage;
      const auto authority =
          Resolve(order, rules.empty() ? HostPolicyState::Absent()
                                       : HostPolicyState::Loaded(HostPolicy{"v", rules}));
      return discovery
                 ? CapabilityAuthorizer(options).Discover(*authority, request, now)
                 : CapabilityAuthorizer(options).Authorize(*authority, request, {now, consume});
    };
    const AuthorizationResult a = decide(grants);
    const AuthorizationResult b = decide(shuffled);
    ASSERT_EQ(a.allowed, b.allowed) << "case " << c;
    ASSERT_EQ(a.reason_code, b.reason_code) << "case " << c;
    // `consumed` follows the named grant (bounded or not), so it may differ too.
    ASSERT_EQ(a.required_authority.has_value(), b.required_authority.has_value());
    if (a.required_authority.has_value()) {
      ASSERT_EQ(a.required_authority->id(), b.required_authority->id());
    }
    if (a.explanation.has_value()) {
      ASSERT_EQ(a.explanation->rejected_grants.size(), b.explanation->rejected_grants.size());
    }
  }
}

}  // namespace
}  // namespace sharedos::authorizer::core
