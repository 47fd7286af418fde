// The decision point (`CapabilityAuthorizer`, semantics §3.3–§3.8): authorize, discover, admit
// a turn and compute reach over a ResolvedAuthority. Deny by default; fail closed on every
// fact it cannot establish. No gRPC, no clock: time comes only from the context's admission
// instant and the optional operation instant.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_CAPABILITY_AUTHORIZER_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_CAPABILITY_AUTHORIZER_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "authorizer_svc/core/delegation.h"
#include "authorizer_svc/core/ports.h"
#include "authorizer_svc/core/resolved_authority.h"
#include "capability/reason_codes.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::authorizer::core {

struct GrantRejection {
  std::string grant_id;
  capability::RejectionReason reason;
};

// Why a request was denied, for the host (audit, operators) only: never part of the
// agent-facing decision. Grants after the one where a fail-closed denial stopped the scan are
// not listed.
struct AuthorizationExplanation {
  int grants_resolved = 0;
  std::vector<GrantRejection> rejected_grants;
  capability::MissingDependency missing_dependency = capability::MissingDependency::kNone;
};

struct DelegationDenial {
  capability::DelegationCode code;
  std::string grant_id;
};

struct HostPolicyDenial {
  std::string rule_id;
  std::string policy_version;
};

// One decision. On the allow path only `allowed`, `reason_code`, `matched_grant_id` and
// `consumed` are set.
struct AuthorizationResult {
  bool allowed = false;
  capability::ReasonCode reason_code = capability::ReasonCode::kNoMatchingGrant;
  // allowed: the matched grant; host_policy_denied: the overridden grant; grant_exhausted: the
  // first exhausted grant. Empty otherwise.
  std::string matched_grant_id;
  // A bounded use was consumed by this decision.
  bool consumed = false;
  // delegation_chain_unverified / delegation_chain_invalid.
  std::optional<DelegationDenial> delegation;
  // host_policy_denied.
  std::optional<HostPolicyDenial> host_policy;
  // authority_unavailable: the internal code.
  std::optional<capability::AuthorityCode> authority_code;
  // Only on an invocation no_matching_grant denial (ADR 0019).
  std::optional<protocol::v1::CapabilityRequest> required_authority;
  // Invocation denials only.
  std::optional<AuthorizationExplanation> explanation;

  // The four infrastructure codes (semantics §3.5).
  bool fail_closed() const { return capability::IsFailClosed(reason_code); }

  // The agent-facing AuthorizationDecision: allowed, reasonCode, matchedGrantId,
  // requiredAuthority, and metadata {delegation: {code, grantId}} | {hostPolicy: {ruleId,
  // version}} | {authority: {code}}. Never the explanation.
  protocol::v1::AuthorizationDecision ToDecision() const;
};

// authority_unavailable for a turn whose authority could not be resolved.
AuthorizationResult AuthorityUnavailableResult(capability::AuthorityCode code);

// Decides over resolved authorities. Holds no state of its own, so it is thread-safe as long
// as the ports are; the ports are borrowed and must outlive it.
class CapabilityAuthorizer {
 public:
  struct Options {
    // Bounded grants need it; without it a bounded grant that matches yields
    // usage_store_unavailable (missingDependency usageStore).
    UsageCounter* usage_counter = nullptr;
    // Derived grants need it; without it they yield delegation_chain_unverified.
    DelegationResolver* delegation_resolver = nullptr;
    // Live revocation (ADR 0027), optional.
    RevocationSource* revocation_source = nullptr;
    // Optional.
    GrantVerifier* grant_verifier = nullptr;
    int max_delegation_chain_length = kDefaultMaxDelegationChainLength;
  };

  struct AuthorizeOptions {
    // The operation instant; the admission instant (context.now) when unset.
    std::optional<absl::Time> now;
    // Consume a bounded use on allow (execution paths only).
    bool consume = false;
  };

  CapabilityAuthorizer() : CapabilityAuthorizer(Options()) {}
  explicit CapabilityAuthorizer(Options options) : options_(options) {}

  // `authorize` (§3.3) with capabilityMatches. In order: invalid_context; invalid_request
  // (empty action or namespace, or an owner other than the context's); then each grant in
  // resolved order through eligibility (issuer, subject, namespace, window, purpose,
  // verifier), capability, delegation chain, live revocation, host ceiling and bounded use.
  // The first grant through every step allows. Fail-closed denials stop at once:
  // authority_unavailable (revocation source failed), host_policy_unavailable,
  // usage_store_unavailable. Otherwise the denial is, by precedence, delegation_chain_unverified
  // / delegation_chain_invalid, host_policy_denied, grant_exhausted, no_matching_grant (with
  // required_authority). Every denial carries an explanation.
  AuthorizationResult Authorize(const ResolvedAuthority& authority,
                                const protocol::v1::CapabilityRequirement& requirement,
                                const AuthorizeOptions& options) const;
  AuthorizationResult Authorize(const ResolvedAuthority& authority,
                                const protocol::v1::CapabilityRequirement& requirement) const {
    return Authorize(authority, requirement, AuthorizeOptions());
  }

  // `canDiscover` against a tool's declared ceiling (capabilityIntersectsCeiling): the same
  // procedure, the host ceiling included, but never consuming and with neither
  // required_authority nor explanation.
  AuthorizationResult Discover(const ResolvedAuthority& authority,
                               const protocol::v1::CapabilityRequirement& ceiling,
                               std::optional<absl::Time> now = std::nullopt) const;

  // `admitTurn`: authorize sharedos.execution / addressPath(agent) / owner = context owner /
  // invoke, consuming.
  AuthorizationResult AdmitTurn(const ResolvedAuthority& authority,
                                const protocol::v1::Address& agent,
                                std::optional<absl::Time> now = std::nullopt) const;

  // `reach` (§3.8): what the actor can reach now, as deduplicated entries {namespace, path,
  // sorted actions, scope} ordered by the canonical JSON of [namespace, path, scope, actions].
  // Skips grants that are ineligible, whose chain is not valid, revoked or spent, and
  // capabilities of another owner. Never consults the host ceiling. An unusable context yields
  // an empty computed reach. Unavailable (usage_store_unavailable) when a bounded grant cannot
  // be counted; unavailable (authority_unavailable) when live revocation fails.
  protocol::v1::ReachResult Reach(const ResolvedAuthority& authority,
                                  std::optional<absl::Time> now = std::nullopt) const;

 private:
  enum class Mode { kInvoke, kDiscover };
  // One decision's state and its steps (capability_authorizer.cc).
  class Decision;

  // §3.3: instants, request, then each candidate grant through eligibility, capability,
  // delegation, revocation, host ceiling and bounded use; then the final precedence.
  AuthorizationResult Decide(const ResolvedAuthority& authority,
                             const protocol::v1::CapabilityRequirement& requirement, Mode mode,
                             bool consume, std::optional<absl::Time> now) const;

  // Eligibility of grant `g` at `expiry_observed_ms`; nullopt when eligible.
  std::optional<capability::RejectionReason> Ineligibility(const ResolvedAuthority& authority,
                                                           uint32_t g,
                                                           int64_t expiry_observed_ms) const;

  Options options_;
};

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_CAPABILITY_AUTHORIZER_H_
