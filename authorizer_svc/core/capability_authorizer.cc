#include "authorizer_svc/core/capability_authorizer.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/base/attributes.h"
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
using internal::CompiledIndex;
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

bool PathMatches(const CompiledIndex& index, const CompiledCapability& capability,
                 const InternedPath& request, bool discovery) {
  const size_t size = capability.path_size;
  if (size > 0 && !request.empty() && capability.first_segment != request[0]) return false;
  const uint32_t* segments = index.segments.data() + capability.path_begin;
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

// ---------------------------------------------------------------------------------------------
// The decision procedure (§3.3), step by step

// One decision's state, all on the stack (one per decision, never shared between threads): the
// allow path allocates nothing, and every step writes the one result in place. Each step of §3.3
// is a member below, in the order Decide runs them. Inlining is chosen, not left to the
// compiler, because the steps once were one function and BM_Decide measures them: the scan
// (ScanGrants with a, b) is forced inline into Decide, its cursor a local kept in registers; the
// steps after a match (c-f) are forced inline into one out-of-line DecidesAfterMatch, so the loop
// carries their code only where a capability matched.
class CapabilityAuthorizer::Decision {
 public:
  Decision(const CapabilityAuthorizer& authorizer, const ResolvedAuthority& authority,
           const CapabilityRequirement& requirement, Mode mode, bool consume)
      : authorizer_(authorizer),
        options_(authorizer.options_),
        authority_(authority),
        compiled_(authority.compiled()),
        index_(*compiled_.index),
        context_(authority.context()),
        grants_(authority.grants()),
        requirement_(requirement),
        invoke_(mode == Mode::kInvoke),
        consume_(consume),
        stop_(grants_.size()) {}

  // 1. The two instants (admission, operation) and a usable context, else invalid_context.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool ResolveInstants(std::optional<absl::Time> now) {
    if (compiled_.context_usable) instants_ = capability::ResolveInstants(context_, now);
    if (!instants_.has_value()) return false;
    expiry_observed_ms_ = instants_->expiry_observed_ms();
    return true;
  }

  // 2. An action, a namespace and the context's owner, else invalid_request.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool RequestIsValid() const {
    const auto& resource = requirement_.resource();
    return !requirement_.action().empty() && !resource.namespace_().empty() &&
           (!resource.has_owner() || capability::AddressEquals(resource.owner(), context_.owner()));
  }

  // 3. The grants to consider: those with a capability in the request's namespace listing its
  // action or "*" (the others are rejected for eligibility or capability, see Deny), with the
  // request's path interned.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void FindCandidates() {
    const std::vector<uint32_t>* listed = nullptr;
    const std::vector<uint32_t>* wildcard = nullptr;
    const auto& resource = requirement_.resource();
    if (auto ns = index_.namespace_ids.find(resource.namespace_());
        ns != index_.namespace_ids.end()) {
      if (auto action = index_.action_ids.find(requirement_.action());
          action != index_.action_ids.end()) {
        if (auto it = index_.by_action.find((uint64_t{ns->second} << 32) | action->second);
            it != index_.by_action.end()) {
          listed = &it->second;
        }
      }
      if (auto it = index_.wildcard.find(ns->second); it != index_.wildcard.end()) {
        wildcard = &it->second;
      }
    }
    if (listed != nullptr || wildcard != nullptr) {
      for (const std::string& segment : resource.path()) {
        auto it = index_.segment_ids.find(segment);
        path_.push_back(it == index_.segment_ids.end() ? kUnknownId : it->second);
      }
    }
    cursor_ = CandidateCursor(listed, wildcard);
  }

  // 3a–f for each candidate grant in resolved order: the first through every step allows; a
  // fail-closed denial stops the scan. Whether a grant decided (into `result`, written in place:
  // the allow path moves no result). The cursor is a local so that the scan keeps it in
  // registers.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool ScanGrants(AuthorizationResult& result) {
    CandidateCursor cursor = cursor_;
    while (!cursor.done()) {
      const uint32_t g = index_.capabilities[cursor.peek()].grant;
      examined_[g] = true;
      if (IsEligibleAndMatches(g, cursor) && DecidesAfterMatch(g, result)) return true;
    }
    return false;
  }

  // 4. After the scan, the denial by precedence: delegation, host_policy_denied,
  // grant_exhausted, no_matching_grant (with required_authority on invocation); into `result`.
  void Precedence(AuthorizationResult& result) {
    if (worst_chain_.has_value()) {
      const bool unverified = worst_chain_->status == ChainStatus::kUnverified;
      result.reason_code = unverified ? capability::ReasonCode::kDelegationChainUnverified
                                      : capability::ReasonCode::kDelegationChainInvalid;
      result.delegation = DelegationDenial{worst_chain_->code, std::move(worst_chain_->grant_id)};
      if (unverified && options_.delegation_resolver == nullptr) {
        missing_ = capability::MissingDependency::kDelegationResolver;
      }
    } else if (host_denied_grant_ >= 0) {
      result.reason_code = capability::ReasonCode::kHostPolicyDenied;
      result.matched_grant_id = grants_[host_denied_grant_].id();
      result.host_policy =
          HostPolicyDenial{host_rule_->id, authority_.host_policy().policy().version};
    } else if (exhausted_grant_ >= 0) {
      result.reason_code = capability::ReasonCode::kGrantExhausted;
      result.matched_grant_id = grants_[exhausted_grant_].id();
    } else {
      result.reason_code = capability::ReasonCode::kNoMatchingGrant;
      if (invoke_) {
        absl::StatusOr<protocol::v1::CapabilityRequest> described =
            capability::DescribeRequiredAuthority(context_, requirement_);
        if (described.ok()) result.required_authority = *std::move(described);
      }
    }
    Deny(result);
  }

  // A denial decided before the scan (steps 1 and 2: no grant was looked at), into `result`.
  void DenyBeforeScan(capability::ReasonCode code, AuthorizationResult& result) {
    stop_ = 0;
    result.reason_code = code;
    Deny(result);
  }

 private:
  // What a step made of the grant under consideration.
  enum class Step { kPass, kRejected, kStopped };

  // Per-grant outcomes, kept on the stack.
  struct Rejection {
    uint32_t grant;
    capability::RejectionReason reason;
  };

  // c–f for grant `g`, whose capability matched: whether it decided (into `result`).
  ABSL_ATTRIBUTE_NOINLINE bool DecidesAfterMatch(uint32_t g, AuthorizationResult& result) {
    std::optional<ChainVerdict> chain;
    if (!ChainIsValid(g, chain)) return false;
    switch (CheckRevocation(g, chain)) {
      case Step::kPass:
        break;
      case Step::kRejected:
        return false;
      case Step::kStopped:
        result.authority_code = capability::AuthorityCode::kRevocationUnavailable;
        return Stop(g, capability::ReasonCode::kAuthorityUnavailable, result);
    }
    switch (CheckCeiling(g)) {
      case Step::kPass:
        break;
      case Step::kRejected:
        return false;
      case Step::kStopped:
        return Stop(g, capability::ReasonCode::kHostPolicyUnavailable, result);
    }
    return UseBounded(g, result);
  }

  // a. Eligibility (inline when only expiry can still refuse the grant), then b. a candidate
  // capability of this grant satisfying the predicate; `cursor` passes all of them.
  bool IsEligibleAndMatches(uint32_t g, CandidateCursor& cursor) {
    const internal::CompiledGrant& grant = compiled_.grants[g];
    std::optional<capability::RejectionReason> ineligible;
    if (!grant.eligible_at_admission || expiry_observed_ms_ >= grant.activity.expires_at_ms ||
        options_.grant_verifier != nullptr) {
      ineligible = authorizer_.Ineligibility(authority_, g, expiry_observed_ms_);
    }
    bool matched = false;
    for (; !cursor.done() && index_.capabilities[cursor.peek()].grant == g; cursor.advance()) {
      matched =
          matched || (!ineligible.has_value() &&
                      PathMatches(index_, index_.capabilities[cursor.peek()], path_, !invoke_));
    }
    if (ineligible.has_value()) return Reject(g, *ineligible);
    if (!matched) return Reject(g, capability::RejectionReason::kCapability);
    return true;
  }

  // c. The delegation chain, only now that a capability matched; the worst failure is kept
  // (unverified outranks invalid).
  bool ChainIsValid(uint32_t g, std::optional<ChainVerdict>& chain) {
    if (!compiled_.grants[g].has_parent) return true;
    chain = ValidateDelegationChain(grants_[g], context_, *instants_, options_.delegation_resolver,
                                    options_.max_delegation_chain_length);
    if (chain->valid()) return true;
    Reject(g, capability::RejectionReason::kDelegation);
    if (!worst_chain_.has_value() || (chain->status == ChainStatus::kUnverified &&
                                      worst_chain_->status == ChainStatus::kInvalid)) {
      worst_chain_ = std::move(chain);
    }
    return false;
  }

  // d. Live revocation (ADR 0027) of the candidate and its validated chain; a source that fails
  // stops the scan (authority_unavailable).
  ABSL_ATTRIBUTE_ALWAYS_INLINE Step CheckRevocation(uint32_t g,
                                                    const std::optional<ChainVerdict>& chain) {
    if (options_.revocation_source == nullptr) return Step::kPass;
    std::vector<std::string> ids = {grants_[g].id()};
    if (chain.has_value()) {
      ids.insert(ids.end(), chain->ancestor_ids.begin(), chain->ancestor_ids.end());
    }
    const std::optional<bool> revoked =
        AnyRevoked(*options_.revocation_source, context_.namespace_id(), ids);
    if (!revoked.has_value()) return Step::kStopped;
    if (*revoked) {
      Reject(g, capability::RejectionReason::kWindow);
      return Step::kRejected;
    }
    return Step::kPass;
  }

  // e. The host ceiling: its rules depend only on the request and the turn, so they are
  // evaluated once. A covering rule overrides the grant (the first is remembered) and the scan
  // goes on; an unavailable policy stops it (host_policy_unavailable).
  ABSL_ATTRIBUTE_ALWAYS_INLINE Step CheckCeiling(uint32_t g) {
    switch (authority_.host_policy().status()) {
      case HostPolicyState::Status::kAbsent:
        break;
      case HostPolicyState::Status::kUnavailable:
        return Step::kStopped;
      case HostPolicyState::Status::kLoaded:
        if (!ceiling_evaluated_) {
          ceiling_evaluated_ = true;
          for (const HostPolicyRule* rule : compiled_.rules) {
            if (RuleCovers(*rule, requirement_)) {
              host_rule_ = rule;
              break;
            }
          }
        }
        break;
    }
    if (host_rule_ == nullptr) return Step::kPass;
    if (host_denied_grant_ < 0) host_denied_grant_ = static_cast<int>(g);
    return Step::kRejected;
  }

  // f. Bounded use: no maxUses allows; otherwise the usage store counts (consuming on execution
  // paths). Exhausted grants are remembered and the scan goes on; a missing or failing store
  // stops it (usage_store_unavailable).
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool UseBounded(uint32_t g, AuthorizationResult& result) {
    const std::optional<int64_t>& max_uses = compiled_.grants[g].max_uses;
    if (!max_uses.has_value()) return Allow(g, /*consumed=*/false, result);
    if (options_.usage_counter == nullptr) {
      missing_ = capability::MissingDependency::kUsageStore;
      return Stop(g, capability::ReasonCode::kUsageStoreUnavailable, result);
    }
    const CapabilityGrant& grant = grants_[g];
    bool available;
    if (consume_) {
      absl::StatusOr<bool> consumed =
          options_.usage_counter->TryConsume(context_.namespace_id(), grant.id(), *max_uses);
      if (!consumed.ok()) {
        return Stop(g, capability::ReasonCode::kUsageStoreUnavailable, result);
      }
      available = *consumed;
    } else {
      absl::StatusOr<int64_t> used =
          options_.usage_counter->GetUsage(context_.namespace_id(), grant.id());
      if (!used.ok()) {
        return Stop(g, capability::ReasonCode::kUsageStoreUnavailable, result);
      }
      available = *used < *max_uses;
    }
    if (available) return Allow(g, /*consumed=*/consume_, result);
    Reject(g, capability::RejectionReason::kExhausted);
    if (exhausted_grant_ < 0) exhausted_grant_ = static_cast<int>(g);
    return false;
  }

  // Grant `g` allows: written into `result` (a default AuthorizationResult) in place.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Allow(uint32_t g, bool consumed,
                                          AuthorizationResult& result) const {
    result.allowed = true;
    result.reason_code = capability::ReasonCode::kAllowed;
    result.matched_grant_id = grants_[g].id();
    result.consumed = consumed;
    return true;
  }

  // Records grant `g`'s rejection; false (the grant goes no further).
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Reject(uint32_t g, capability::RejectionReason reason) {
    rejections_[rejection_count_++] = {g, reason};
    return false;
  }

  // A fail-closed denial `code` at grant `g`, into `result`: the scan stops there. True (the
  // grant decided).
  bool Stop(uint32_t g, capability::ReasonCode code, AuthorizationResult& result) {
    stop_ = g + 1;
    result.reason_code = code;
    Deny(result);
    return true;
  }

  // Finishes the denial in `result`: the explanation (invocation only) lists the rejection of
  // every grant before the stop, examined or not (a grant with no candidate capability was
  // rejected for eligibility or capability without needing a closer look).
  void Deny(AuthorizationResult& result) const {
    if (!invoke_) return;
    AuthorizationExplanation& explanation = result.explanation.emplace();
    explanation.grants_resolved = static_cast<int>(grants_.size());
    explanation.missing_dependency = missing_;
    size_t next = 0;
    for (uint32_t g = 0; g < stop_; ++g) {
      if (examined_[g]) {
        if (next < rejection_count_ && rejections_[next].grant == g) {
          explanation.rejected_grants.push_back({grants_[g].id(), rejections_[next++].reason});
        }
        continue;
      }
      explanation.rejected_grants.push_back(
          {grants_[g].id(), authorizer_.Ineligibility(authority_, g, expiry_observed_ms_)
                                .value_or(capability::RejectionReason::kCapability)});
    }
  }

  const CapabilityAuthorizer& authorizer_;
  const Options& options_;
  const ResolvedAuthority& authority_;
  const CompiledAuthority& compiled_;
  const CompiledIndex& index_;
  const AccessContext& context_;
  const std::vector<CapabilityGrant>& grants_;
  const CapabilityRequirement& requirement_;
  const bool invoke_;
  const bool consume_;

  std::optional<capability::DecisionInstants> instants_;
  int64_t expiry_observed_ms_ = 0;
  InternedPath path_;
  CandidateCursor cursor_{nullptr, nullptr};
  std::array<Rejection, kMaxGrants> rejections_;
  size_t rejection_count_ = 0;
  std::bitset<kMaxGrants> examined_;
  // The grants before it are explained on a denial.
  size_t stop_;
  capability::MissingDependency missing_ = capability::MissingDependency::kNone;
  std::optional<ChainVerdict> worst_chain_;
  int host_denied_grant_ = -1;
  const HostPolicyRule* host_rule_ = nullptr;
  bool ceiling_evaluated_ = false;
  int exhausted_grant_ = -1;
};

AuthorizationResult CapabilityAuthorizer::Decide(const ResolvedAuthority& authority,
                                                 const CapabilityRequirement& requirement,
                                                 Mode mode, bool consume,
                                                 std::optional<absl::Time> now) const {
  Decision decision(*this, authority, requirement, mode, consume);
  // One result, returned by name: every step writes it in place.
  AuthorizationResult result;
  if (!decision.ResolveInstants(now)) {
    decision.DenyBeforeScan(capability::ReasonCode::kInvalidContext, result);
  } else if (!decision.RequestIsValid()) {
    decision.DenyBeforeScan(capability::ReasonCode::kInvalidRequest, result);
  } else {
    decision.FindCandidates();
    if (!decision.ScanGrants(result)) decision.Precedence(result);
  }
  return result;
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
