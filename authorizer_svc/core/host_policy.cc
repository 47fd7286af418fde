#include "authorizer_svc/core/host_policy.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "capability/address.h"
#include "capability/matching.h"
#include "capability/reason_codes.h"

namespace sharedos::authorizer::core {

using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::SCOPE_DESCENDANTS;
using ::sharedos::protocol::v1::SCOPE_EXACT;

HostPolicyState HostPolicyState::Loaded(HostPolicy policy) {
  if (policy.version.empty()) return Unavailable();
  absl::flat_hash_set<absl::string_view> ids;
  for (const HostPolicyRule& rule : policy.rules) {
    if (rule.id.empty() || !ids.insert(rule.id).second || rule.resource_namespace.empty() ||
        (rule.scope != SCOPE_EXACT && rule.scope != SCOPE_DESCENDANTS)) {
      return Unavailable();
    }
  }
  return HostPolicyState(Status::kLoaded, std::move(policy));
}

bool RuleAppliesTo(const HostPolicyRule& rule, const AccessContext& context) {
  const bool actor_matches =
      rule.actors.empty() ||
      std::any_of(rule.actors.begin(), rule.actors.end(), [&](const Address& actor) {
        return capability::AddressEquals(actor, context.actor());
      });
  const bool purpose_matches =
      rule.purposes.empty() || std::find(rule.purposes.begin(), rule.purposes.end(),
                                         context.purpose()) != rule.purposes.end();
  return actor_matches && purpose_matches;
}

bool RuleCovers(const HostPolicyRule& rule, const CapabilityRequirement& requirement) {
  const auto& resource = requirement.resource();
  if (resource.namespace_() != rule.resource_namespace) return false;
  if (!rule.actions.empty() &&
      std::none_of(rule.actions.begin(), rule.actions.end(), [&](const std::string& action) {
        return action == requirement.action() || action == capability::kWildcardAction;
      })) {
    return false;
  }
  const auto& path = resource.path();
  if (rule.path.size() > static_cast<size_t>(path.size())) return false;
  if (rule.scope == SCOPE_EXACT && rule.path.size() != static_cast<size_t>(path.size())) {
    return false;
  }
  return std::equal(rule.path.begin(), rule.path.end(), path.begin());
}

const HostPolicyRule* FirstDenyingRule(const HostPolicy& policy,
                                       const CapabilityRequirement& requirement,
                                       const AccessContext& context) {
  for (const HostPolicyRule& rule : policy.rules) {
    if (RuleAppliesTo(rule, context) && RuleCovers(rule, requirement)) return &rule;
  }
  return nullptr;
}

}  // namespace sharedos::authorizer::core
