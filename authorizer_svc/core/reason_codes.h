// The authorization vocabulary of semantics §6.1 and §6.8: decision reason codes, per-grant
// rejection reasons, delegation link codes (use time), derive refusals (issue time) and the
// internal authority codes. Each enum has a Name() giving the reference's exact string.
// Stateless; thread-safe.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_REASON_CODES_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_REASON_CODES_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace sharedos::authorizer::core {

// AuthorizationDecision.reasonCode (semantics §6.1).
enum class ReasonCode : uint8_t {
  kAllowed,
  kNoMatchingGrant,
  kGrantExhausted,
  kInvalidContext,
  kInvalidRequest,
  kAuthorityUnavailable,
  kUsageStoreUnavailable,
  kDelegationChainUnverified,
  kDelegationChainInvalid,
  kHostPolicyDenied,
  kHostPolicyUnavailable,
};
absl::string_view Name(ReasonCode code);

// The four infrastructure denials (semantics §3.5): SharedOS could not establish a fact, so it
// refused. Audit marks them failClosed and denial rates exclude them.
bool IsFailClosed(ReasonCode code);

// Why one grant did not serve a request (GrantRejection.reason, host-only).
enum class RejectionReason : uint8_t {
  kIssuer,
  kSubject,
  kNamespace,
  kWindow,
  kPurpose,
  kVerifier,
  kCapability,
  kDelegation,
  kExhausted,
};
absl::string_view Name(RejectionReason reason);

// AuthorizationExplanation.missingDependency.
enum class MissingDependency : uint8_t {
  kNone,
  kUsageStore,
  kDelegationResolver,
};
// "usageStore" | "delegationResolver"; empty for kNone.
absl::string_view Name(MissingDependency dependency);

// Use-time delegation chain codes (semantics §3.6, §6.8). The first three make a chain
// unverified (delegation_chain_unverified); the others make it invalid.
enum class DelegationCode : uint8_t {
  kResolverUnavailable,
  kParentNotFound,
  kResolverFailed,
  kChainTooLong,
  kChainCycle,
  kNamespaceMismatch,
  kIssuerNotParentSubject,
  kParentInactive,
  kDelegationNotPermitted,
  kDelegationDepthExceeded,
  kBoundedParentNotDelegable,
  kCapabilityWidened,
  kConstraintsWidened,
};
absl::string_view Name(DelegationCode code);
// True for resolver_unavailable, parent_not_found and resolver_failed.
bool IsUnverified(DelegationCode code);

// Issue-time refusals of DeriveGrant (semantics §3.7, §6.8), in the order they are checked.
enum class DeriveRefusal : uint8_t {
  kEmptyCapabilities,
  kIdCollidesWithParent,
  kBoundedParentNotDelegable,
  kParentNotDelegable,
  kDepthExhausted,
  kCapabilityNotWithinParent,
  kPurposeNotWithinParent,
  kWindowNotWithinParent,
  kIssuedBeforeParent,
};
absl::string_view Name(DeriveRefusal refusal);

// Internal authority-resolution codes (semantics §3.2); all collapse to the caller-visible
// authority_unavailable.
enum class AuthorityCode : uint8_t {
  kGrantSourceFailed,
  kInvalidGrantMaterial,
  kGrantScopeMismatch,
  kGrantLimitExceeded,
  // A live revocation source failed or answered malformed (ADR 0027).
  kRevocationUnavailable,
};
absl::string_view Name(AuthorityCode code);

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_REASON_CODES_H_
