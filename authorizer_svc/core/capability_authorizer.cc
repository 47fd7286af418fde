#include "authorizer_svc/core/capability_authorizer.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "authorizer_svc/core/host_policy.h"
#include "capability/address.h"
#include "capability/capability_request.h"
#include "capability/eligibility.h"
#include "capability/reason_codes.h"
#include "common/json/canonical_json.h"
#include "common/json/code_unit_sort.h"
#include "common/json/protocol_json.h"
#include "common/validation/limits.h"

namespace sharedos::authorizer::core {
namespace {

namespace validation = ::sharedos::common::validation;
using internal::CompiledAuthority;
using internal::CompiledCapability;
using ::sharedos::protocol::v1::AccessContext;
using ::sharedos::protocol::v1::AuthorizationDecision;
using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::ReachResult;
using ::sharedos::protocol::v1::ResourceReach;

constexpr uint32_t kUnknownId = UINT32_MAX;
constexpr size_t kMaxGrants = validation::kMaxResolvedGrants;

void SetStringField(google::protobuf::Struct* object, const std::string& key,
                    absl::string_view value) {
  (*object->mutable_fields())[key].set_string_value(std::string(value));
}

google::protobuf::Struct* ObjectField(google::protobuf::Struct* object, const std::string& key) {
  return (*object->mutable_fields())[key].mutable_struct_value();
}

// The candidate capabilities of one request: those listing its action and those listing "*",
// merged in ascending index order (grant order, then capability order).
class CandidateCursor {
 public:
  CandidateCursor(const std::vector<uint32_t>* listed, const std::vector<uint32_t>* wildcard)
      : listed_(listed), wildcard_(wildcard) {}

  bool done() const { return !HasListed() && !HasWildcard(); }
  uint32_t peek() const {
    if (!HasWildcard()) return (*listed_)[l_];
    if (!HasListed()) return (*wildcard_)[w_];
    return std::min((*listed_)[l_], (*wildcard_)[w_]);
  }
  void advance() {
    if (HasListed() && (!HasWildcard() || (*listed_)[l_] < (*wildcard_)[w_])) {
      ++l_;
    } else {
      ++w_;
    }
  }

 private:
  bool HasListed() const { return listed_ != nullptr && l_ < listed_->size(); }
  bool HasWildcard() const { return wildcard_ != nullptr && w_ < wildcard_->size(); }

  const std::vector<uint32_t>* listed_;
  const std::vector<uint32_t>* wildcard_;
  size_t l_ = 0;
  size_t w_ = 0;
};

// The requirement's path as interned segment ids (kUnknownId where the authority never saw
// the segment, which then matches no capability segment).
using InternedPath = absl::InlinedVector<uint32_t, validation::kMaxPathSegments>;

bool PathMatches(const CompiledAuthority& compiled, const CompiledCapability& capability,
                 const InternedPath& request, bool discovery) {
  const size_t size = capability.path_size;
  if (size > 0 && !request.empty() && capability.first_segment != request[0]) return false;
  const uint32_t* segments = compiled.segments.data() + capability.path_begin;
  size_t compared;
  if (!discovery) {
    // §2.3: exact → equal; descendants → the capability's path is a prefix of the request's.
    if (capability.descendants ? size > request.size() : size != request.size()) return false;
    compared = size;
  } else if (!capability.descendants) {
    // §2.4 exact: the ceiling's path is a prefix of the capability's.
    if (request.size() > size) return false;
    compared = request.size();
  } else {
    // §2.4 descendants: either is a prefix of the other.
    compared = std::min(size, request.size());
  }
  // A hand loop: paths are short, and std::equal would call memcmp.
  for (size_t i = 1; i < compared; ++i) {
    if (segments[i] != request[i]) return false;
  }
  return true;
}

// Live revocation of `ids` (ADR 0027): whether any is revoked, or nullopt when the source
// failed or answered about an id it was not asked about (the caller fails closed).
std::optional<bool> AnyRevoked(RevocationSource& source, absl::string_view namespace_id,
                               const std::vector<std::string>& ids) {
  absl::StatusOr<RevocationResult> revocations = source.Check(namespace_id, ids);
  if (!revocations.ok()) return std::nullopt;
  for (const std::string& id : revocations->revoked_grant_ids) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) return std::nullopt;
  }
  return !revocations->revoked_grant_ids.empty();
}

AuthorizationResult Denial(capability::ReasonCode code) {
  AuthorizationResult result;
  result.reason_code = code;
  return result;
}

}  // namespace

AuthorizationDecision AuthorizationResult::ToDecision() const {
  AuthorizationDecision decision;
  decision.set_allowed(allowed);
  decision.set_reason_code(std::string(Name(reason_code)));
  if (!matched_grant_id.empty()) decision.set_matched_grant_id(matched_grant_id);
  if (required_authority.has_value()) *decision.mutable_required_authority() = *required_authority;
  if (delegation.has_value()) {
    google::protobuf::Struct* object = ObjectField(decision.mutable_metadata(), "delegation");
    SetStringField(object, "code", Name(delegation->code));
    SetStringField(object, "grantId", delegation->grant_id);
  }
  if (host_policy.has_value()) {
    google::protobuf::Struct* object = ObjectField(decision.mutable_metadata(), "hostPolicy");
    SetStringField(object, "ruleId", host_policy->rule_id);
    SetStringField(object, "version", host_policy->policy_version);
  }
  if (authority_code.has_value()) {
    SetStringField(ObjectField(decision.mutable_metadata(), "authority"), "code",
                   Name(*authority_code));
  }
  return decision;
}

AuthorizationResult AuthorityUnavailableResult(capability::AuthorityCode code) {
  AuthorizationResult result = Denial(capability::ReasonCode::kAuthorityUnavailable);
  result.authority_code = code;
  return result;
}

std::optional<capability::RejectionReason> CapabilityAuthorizer::Ineligibility(
    const ResolvedAuthority& authority, uint32_t g, int64_t expiry_observed_ms) const {
  const internal::CompiledGrant& grant = authority.compiled().grants[g];
  if (grant.scope_rejection.has_value()) return grant.scope_rejection;
  if (std::optional<capability::RejectionReason> inactive =
          grant.activity.ReasonAt(expiry_observed_ms)) {
    return inactive;
  }
  if (options_.grant_verifier != nullptr) {
    absl::StatusOr<bool> verified =
        options_.grant_verifier->Verify(authority.grants()[g], authority.context());
    if (!verified.ok() || !*verified) return capability::RejectionReason::kVerifier;
  }
  return std::nullopt;
}

AuthorizationResult CapabilityAuthorizer::Decide(const ResolvedAuthority& authority,
                                                 const CapabilityRequirement& requirement,
                                                 Mode mode, bool consume,
                                                 std::optional<absl::Time> now) const {
  const CompiledAuthority& compiled = authority.compiled();
  const AccessContext& context = authority.context();
  const std::vector<CapabilityGrant>& grants = authority.grants();
  const bool invoke = mode == Mode::kInvoke;

  // Per-grant outcomes, kept on the stack: the allow path allocates nothing.
  struct Rejection {
    uint32_t grant;
    capability::RejectionReason reason;
  };
  std::array<Rejection, kMaxGrants> rejections;
  size_t rejection_count = 0;
  std::bitset<kMaxGrants> examined;
  size_t stop = grants.size();
  int64_t expiry_observed_ms = 0;
  capability::MissingDependency missing = capability::MissingDependency::kNone;

  // Finishes a denial: the explanation (invocation only) lists the rejection of every grant
  // before `stop`, examined or not (a grant with no candidate capability was rejected for
  // eligibility or capability without needing a closer look).
  const auto deny = [&](AuthorizationResult result) {
    if (!invoke) return result;
    AuthorizationExplanation& explanation = result.explanation.emplace();
    explanation.grants_resolved = static_cast<int>(grants.size());
    explanation.missing_dependency = missing;
    size_t next = 0;
    for (uint32_t g = 0; g < stop; ++g) {
      if (examined[g]) {
        if (next < rejection_count && rejections[next].grant == g) {
          explanation.rejected_grants.push_back({grants[g].id(), rejections[next++].reason});
        }
        continue;
      }
      explanation.rejected_grants.push_back(
          {grants[g].id(), Ineligibility(authority, g, expiry_observed_ms)
                               .value_or(capability::RejectionReason::kCapability)});
    }
    return result;
  };

  // 1. invalid_context.
  std::optional<capability::DecisionInstants> instants;
  if (compiled.context_usable) instants = capability::ResolveInstants(context, now);
  if (!instants.has_value()) {
    stop = 0;
    return deny(Denial(capability::ReasonCode::kInvalidContext));
  }
  expiry_observed_ms = instants->expiry_observed_ms();

  // 2. invalid_request.
  const auto& resource = requirement.resource();
  if (requirement.action().empty() || resource.namespace_().empty() ||
      (resource.has_owner() && !capability::AddressEquals(resource.owner(), context.owner()))) {
    stop = 0;
    return deny(Denial(capability::ReasonCode::kInvalidRequest));
  }

  // 3. The grants that have a capability in the request's namespace listing its action or "*".
  const std::vector<uint32_t>* listed = nullptr;
  const std::vector<uint32_t>* wildcard = nullptr;
  if (auto ns = compiled.namespace_ids.find(resource.namespace_());
      ns != compiled.namespace_ids.end()) {
    if (auto action = compiled.action_ids.find(requirement.action());
        action != compiled.action_ids.end()) {
      if (auto it = compiled.by_action.find((uint64_t{ns->second} << 32) | action->second);
          it != compiled.by_action.end()) {
        listed = &it->second;
      }
    }
    if (auto it = compiled.wildcard.find(ns->second); it != compiled.wildcard.end()) {
      wildcard = &it->second;
    }
  }
  InternedPath path;
  if (listed != nullptr || wildcard != nullptr) {
    for (const std::string& segment : resource.path()) {
      auto it = compiled.segment_ids.find(segment);
      path.push_back(it == compiled.segment_ids.end() ? kUnknownId : it->second);
    }
  }

  std::optional<ChainVerdict> worst_chain;
  int host_denied_grant = -1;
  const HostPolicyRule* host_rule = nullptr;
  bool ceiling_evaluated = false;
  int exhausted_grant = -1;
  const auto reject = [&](uint32_t g, capability::RejectionReason reason) {
    rejections[rejection_count++] = {g, reason};
  };

  CandidateCursor cursor(listed, wildcard);
  while (!cursor.done()) {
    const uint32_t g = compiled.capabilities[cursor.peek()].grant;
    examined[g] = true;
    const CapabilityGrant& grant = grants[g];

    // a. Eligibility (inline when only expiry can still refuse the grant).
    const internal::CompiledGrant& compiled_grant = compiled.grants[g];
    std::optional<capability::RejectionReason> ineligible;
    if (!compiled_grant.eligible_at_admission ||
        expiry_observed_ms >= compiled_grant.activity.expires_at_ms ||
        options_.grant_verifier != nullptr) {
      ineligible = Ineligibility(authority, g, expiry_observed_ms);
    }
    // b. Capability: any candidate capability of this grant satisfying the predicate.
    bool matched = false;
    for (; !cursor.done() && compiled.capabilities[cursor.peek()].grant == g; cursor.advance()) {
      matched =
          matched || (!ineligible.has_value() &&
                      PathMatches(compiled, compiled.capabilities[cursor.peek()], path, !invoke));
    }
    if (ineligible.has_value()) {
      reject(g, *ineligible);
      continue;
    }
    if (!matched) {
      reject(g, capability::RejectionReason::kCapability);
      continue;
    }

    // c. Delegation chain, only now that a capability matched.
    std::optional<ChainVerdict> chain;
    if (compiled_grant.has_parent) {
      chain = ValidateDelegationChain(grant, context, *instants, options_.delegation_resolver,
                                      options_.max_delegation_chain_length);
      if (!chain->valid()) {
        reject(g, capability::RejectionReason::kDelegation);
        if (!worst_chain.has_value() || (chain->status == ChainStatus::kUnverified &&
                                         worst_chain->status == ChainStatus::kInvalid)) {
          worst_chain = std::move(chain);
        }
        continue;
      }
    }

    // d. Live revocation of the candidate and its validated chain.
    if (options_.revocation_source != nullptr) {
      std::vector<std::string> ids = {grant.id()};
      if (chain.has_value()) {
        ids.insert(ids.end(), chain->ancestor_ids.begin(), chain->ancestor_ids.end());
      }
      const std::optional<bool> revoked =
          AnyRevoked(*options_.revocation_source, context.namespace_id(), ids);
      if (!revoked.has_value()) {
        stop = g + 1;
        return deny(AuthorityUnavailableResult(capability::AuthorityCode::kRevocationUnavailable));
      }
      if (*revoked) {
        reject(g, capability::RejectionReason::kWindow);
        continue;
      }
    }

    // e. Host ceiling: rules depend only on the request and the turn, so evaluate them once.
    switch (authority.host_policy().status()) {
      case HostPolicyState::Status::kAbsent:
        break;
      case HostPolicyState::Status::kUnavailable:
        stop = g + 1;
        return deny(Denial(capability::ReasonCode::kHostPolicyUnavailable));
      case HostPolicyState::Status::kLoaded:
        if (!ceiling_evaluated) {
          ceiling_evaluated = true;
          for (const HostPolicyRule* rule : compiled.rules) {
            if (RuleCovers(*rule, requirement)) {
              host_rule = rule;
              break;
            }
          }
        }
        break;
    }
    if (host_rule != nullptr) {
      if (host_denied_grant < 0) host_denied_grant = static_cast<int>(g);
      continue;
    }

    // f. Bounded use.
    const std::optional<int64_t>& max_uses = compiled_grant.max_uses;
    const auto allow = [&grant](bool consumed) {
      AuthorizationResult result;
      result.allowed = true;
      result.reason_code = capability::ReasonCode::kAllowed;
      result.matched_grant_id = grant.id();
      result.consumed = consumed;
      return result;
    };
    if (!max_uses.has_value()) return allow(/*consumed=*/false);
    if (options_.usage_counter == nullptr) {
      stop = g + 1;
      missing = capability::MissingDependency::kUsageStore;
      return deny(Denial(capability::ReasonCode::kUsageStoreUnavailable));
    }
    bool available;
    if (consume) {
      absl::StatusOr<bool> consumed =
          options_.usage_counter->TryConsume(context.namespace_id(), grant.id(), *max_uses);
      if (!consumed.ok()) {
        stop = g + 1;
        return deny(Denial(capability::ReasonCode::kUsageStoreUnavailable));
      }
      available = *consumed;
    } else {
      absl::StatusOr<int64_t> used =
          options_.usage_counter->GetUsage(context.namespace_id(), grant.id());
      if (!used.ok()) {
        stop = g + 1;
        return deny(Denial(capability::ReasonCode::kUsageStoreUnavailable));
      }
      available = *used < *max_uses;
    }
    if (available) return allow(/*consumed=*/consume);
    reject(g, capability::RejectionReason::kExhausted);
    if (exhausted_grant < 0) exhausted_grant = static_cast<int>(g);
  }

  // 4. Denial precedence.
  if (worst_chain.has_value()) {
    const bool unverified = worst_chain->status == ChainStatus::kUnverified;
    AuthorizationResult result =
        Denial(unverified ? capability::ReasonCode::kDelegationChainUnverified
                          : capability::ReasonCode::kDelegationChainInvalid);
    result.delegation = DelegationDenial{worst_chain->code, std::move(worst_chain->grant_id)};
    if (unverified && options_.delegation_resolver == nullptr) {
      missing = capability::MissingDependency::kDelegationResolver;
    }
    return deny(std::move(result));
  }
  if (host_denied_grant >= 0) {
    AuthorizationResult result = Denial(capability::ReasonCode::kHostPolicyDenied);
    result.matched_grant_id = grants[host_denied_grant].id();
    result.host_policy = HostPolicyDenial{host_rule->id, authority.host_policy().policy().version};
    return deny(std::move(result));
  }
  if (exhausted_grant >= 0) {
    AuthorizationResult result = Denial(capability::ReasonCode::kGrantExhausted);
    result.matched_grant_id = grants[exhausted_grant].id();
    return deny(std::move(result));
  }
  AuthorizationResult result = Denial(capability::ReasonCode::kNoMatchingGrant);
  if (invoke) {
    absl::StatusOr<protocol::v1::CapabilityRequest> described =
        capability::DescribeRequiredAuthority(context, requirement);
    if (described.ok()) result.required_authority = *std::move(described);
  }
  return deny(std::move(result));
}

AuthorizationResult CapabilityAuthorizer::Authorize(const ResolvedAuthority& authority,
                                                    const CapabilityRequirement& requirement,
                                                    const AuthorizeOptions& options) const {
  return Decide(authority, requirement, Mode::kInvoke, options.consume, options.now);
}

AuthorizationResult CapabilityAuthorizer::Discover(const ResolvedAuthority& authority,
                                                   const CapabilityRequirement& ceiling,
                                                   std::optional<absl::Time> now) const {
  return Decide(authority, ceiling, Mode::kDiscover, /*consume=*/false, now);
}

AuthorizationResult CapabilityAuthorizer::AdmitTurn(const ResolvedAuthority& authority,
                                                    const protocol::v1::Address& agent,
                                                    std::optional<absl::Time> now) const {
  CapabilityRequirement requirement;
  auto* resource = requirement.mutable_resource();
  resource->set_namespace_("sharedos.execution");
  for (std::string& segment : capability::AddressPath(agent))
    resource->add_path(std::move(segment));
  *resource->mutable_owner() = authority.context().owner();
  requirement.set_action("invoke");
  return Decide(authority, requirement, Mode::kInvoke, /*consume=*/true, now);
}

ReachResult CapabilityAuthorizer::Reach(const ResolvedAuthority& authority,
                                        std::optional<absl::Time> now) const {
  const CompiledAuthority& compiled = authority.compiled();
  const AccessContext& context = authority.context();
  const std::vector<CapabilityGrant>& grants = authority.grants();
  ReachResult result;
  const auto unavailable = [&result](capability::ReasonCode code) {
    result.Clear();
    result.set_status(protocol::v1::REACH_STATUS_UNAVAILABLE);
    result.set_reason_code(std::string(Name(code)));
    return result;
  };
  result.set_status(protocol::v1::REACH_STATUS_COMPUTED);
  std::optional<capability::DecisionInstants> instants;
  if (compiled.context_usable) instants = capability::ResolveInstants(context, now);
  if (!instants.has_value()) return result;

  struct Entry {
    std::string key;
    ResourceReach reach;
  };
  std::vector<Entry> entries;
  for (uint32_t g = 0; g < grants.size(); ++g) {
    const CapabilityGrant& grant = grants[g];
    if (Ineligibility(authority, g, instants->expiry_observed_ms()).has_value()) continue;
    std::vector<std::string> ids = {grant.id()};
    if (compiled.grants[g].has_parent) {
      ChainVerdict chain =
          ValidateDelegationChain(grant, context, *instants, options_.delegation_resolver,
                                  options_.max_delegation_chain_length);
      if (!chain.valid()) continue;
      ids.insert(ids.end(), chain.ancestor_ids.begin(), chain.ancestor_ids.end());
    }
    if (options_.revocation_source != nullptr) {
      const std::optional<bool> revoked =
          AnyRevoked(*options_.revocation_source, context.namespace_id(), ids);
      if (!revoked.has_value()) return unavailable(capability::ReasonCode::kAuthorityUnavailable);
      if (*revoked) continue;
    }
    if (const std::optional<int64_t>& max_uses = compiled.grants[g].max_uses) {
      if (options_.usage_counter == nullptr) {
        return unavailable(capability::ReasonCode::kUsageStoreUnavailable);
      }
      absl::StatusOr<int64_t> used =
          options_.usage_counter->GetUsage(context.namespace_id(), grant.id());
      if (!used.ok()) return unavailable(capability::ReasonCode::kUsageStoreUnavailable);
      if (*used >= *max_uses) continue;
    }
    for (const Capability& capability : grant.capabilities()) {
      if (!capability::AddressEquals(
              capability::OwnerOrDefault(capability.resource(), context.owner()),
              context.owner())) {
        continue;
      }
      const absl::string_view scope = common::ScopeName(capability.scope());
      if (scope.empty()) continue;
      Entry& entry = entries.emplace_back();
      ResourceReach& reach = entry.reach;
      reach.set_namespace_(capability.resource().namespace_());
      *reach.mutable_path() = capability.resource().path();
      std::vector<std::string> actions(capability.actions().begin(), capability.actions().end());
      common::SortByCodeUnits(&actions);
      for (const std::string& action : actions) reach.add_actions(action);
      reach.set_scope(capability.scope());
      entry.key = common::CanonicalJson(nlohmann::json::array(
          {reach.namespace_(), std::vector<std::string>(reach.path().begin(), reach.path().end()),
           std::string(scope), std::move(actions)}));
    }
  }
  common::SortByCodeUnits(&entries,
                          [](const Entry& entry) -> const std::string& { return entry.key; });
  for (size_t i = 0;
       i < entries.size() && result.reach_size() < static_cast<int>(validation::kMaxReachEntries);
       ++i) {
    if (i > 0 && entries[i].key == entries[i - 1].key) continue;
    *result.add_reach() = std::move(entries[i].reach);
  }
  return result;
}

}  // namespace sharedos::authorizer::core
