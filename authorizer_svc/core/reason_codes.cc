#include "authorizer_svc/core/reason_codes.h"

namespace sharedos::authorizer::core {

absl::string_view Name(ReasonCode code) {
  switch (code) {
    case ReasonCode::kAllowed:
      return "allowed";
    case ReasonCode::kNoMatchingGrant:
      return "no_matching_grant";
    case ReasonCode::kGrantExhausted:
      return "grant_exhausted";
    case ReasonCode::kInvalidContext:
      return "invalid_context";
    case ReasonCode::kInvalidRequest:
      return "invalid_request";
    case ReasonCode::kAuthorityUnavailable:
      return "authority_unavailable";
    case ReasonCode::kUsageStoreUnavailable:
      return "usage_store_unavailable";
    case ReasonCode::kDelegationChainUnverified:
      return "delegation_chain_unverified";
    case ReasonCode::kDelegationChainInvalid:
      return "delegation_chain_invalid";
    case ReasonCode::kHostPolicyDenied:
      return "host_policy_denied";
    case ReasonCode::kHostPolicyUnavailable:
      return "host_policy_unavailable";
  }
  return "unknown";
}

bool IsFailClosed(ReasonCode code) {
  switch (code) {
    case ReasonCode::kAuthorityUnavailable:
    case ReasonCode::kUsageStoreUnavailable:
    case ReasonCode::kDelegationChainUnverified:
    case ReasonCode::kHostPolicyUnavailable:
      return true;
    default:
      return false;
  }
}

absl::string_view Name(RejectionReason reason) {
  switch (reason) {
    case RejectionReason::kIssuer:
      return "issuer";
    case RejectionReason::kSubject:
      return "subject";
    case RejectionReason::kNamespace:
      return "namespace";
    case RejectionReason::kWindow:
      return "window";
    case RejectionReason::kPurpose:
      return "purpose";
    case RejectionReason::kVerifier:
      return "verifier";
    case RejectionReason::kCapability:
      return "capability";
    case RejectionReason::kDelegation:
      return "delegation";
    case RejectionReason::kExhausted:
      return "exhausted";
  }
  return "unknown";
}

absl::string_view Name(MissingDependency dependency) {
  switch (dependency) {
    case MissingDependency::kNone:
      return "";
    case MissingDependency::kUsageStore:
      return "usageStore";
    case MissingDependency::kDelegationResolver:
      return "delegationResolver";
  }
  return "";
}

absl::string_view Name(DelegationCode code) {
  switch (code) {
    case DelegationCode::kResolverUnavailable:
      return "resolver_unavailable";
    case DelegationCode::kParentNotFound:
      return "parent_not_found";
    case DelegationCode::kResolverFailed:
      return "resolver_failed";
    case DelegationCode::kChainTooLong:
      return "chain_too_long";
    case DelegationCode::kChainCycle:
      return "chain_cycle";
    case DelegationCode::kNamespaceMismatch:
      return "namespace_mismatch";
    case DelegationCode::kIssuerNotParentSubject:
      return "issuer_not_parent_subject";
    case DelegationCode::kParentInactive:
      return "parent_inactive";
    case DelegationCode::kDelegationNotPermitted:
      return "delegation_not_permitted";
    case DelegationCode::kDelegationDepthExceeded:
      return "delegation_depth_exceeded";
    case DelegationCode::kBoundedParentNotDelegable:
      return "bounded_parent_not_delegable";
    case DelegationCode::kCapabilityWidened:
      return "capability_widened";
    case DelegationCode::kConstraintsWidened:
      return "constraints_widened";
  }
  return "unknown";
}

bool IsUnverified(DelegationCode code) {
  return code == DelegationCode::kResolverUnavailable ||
         code == DelegationCode::kParentNotFound ||
         code == DelegationCode::kResolverFailed;
}

absl::string_view Name(DeriveRefusal refusal) {
  switch (refusal) {
    case DeriveRefusal::kEmptyCapabilities:
      return "empty_capabilities";
    case DeriveRefusal::kIdCollidesWithParent:
      return "id_collides_with_parent";
    case DeriveRefusal::kBoundedParentNotDelegable:
      return "bounded_parent_not_delegable";
    case DeriveRefusal::kParentNotDelegable:
      return "parent_not_delegable";
    case DeriveRefusal::kDepthExhausted:
      return "depth_exhausted";
    case DeriveRefusal::kCapabilityNotWithinParent:
      return "capability_not_within_parent";
    case DeriveRefusal::kPurposeNotWithinParent:
      return "purpose_not_within_parent";
    case DeriveRefusal::kWindowNotWithinParent:
      return "window_not_within_parent";
    case DeriveRefusal::kIssuedBeforeParent:
      return "issued_before_parent";
  }
  return "unknown";
}

absl::string_view Name(AuthorityCode code) {
  switch (code) {
    case AuthorityCode::kGrantSourceFailed:
      return "grant_source_failed";
    case AuthorityCode::kInvalidGrantMaterial:
      return "invalid_grant_material";
    case AuthorityCode::kGrantScopeMismatch:
      return "grant_scope_mismatch";
    case AuthorityCode::kGrantLimitExceeded:
      return "grant_limit_exceeded";
    case AuthorityCode::kRevocationUnavailable:
      return "revocation_unavailable";
  }
  return "unknown";
}

}  // namespace sharedos::authorizer::core
