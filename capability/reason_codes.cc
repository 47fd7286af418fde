#include "capability/reason_codes.h"

namespace sharedos::capability {

absl::string_view Name(ReasonCode code) {
  switch (code) {
    case ReasonCode::kAllowed:
      return kAllowed;
    case ReasonCode::kNoMatchingGrant:
      return kNoMatchingGrant;
    case ReasonCode::kGrantExhausted:
      return kGrantExhausted;
    case ReasonCode::kInvalidContext:
      return kInvalidContext;
    case ReasonCode::kInvalidRequest:
      return kInvalidRequest;
    case ReasonCode::kAuthorityUnavailable:
      return kAuthorityUnavailable;
    case ReasonCode::kUsageStoreUnavailable:
      return kUsageStoreUnavailable;
    case ReasonCode::kDelegationChainUnverified:
      return kDelegationChainUnverified;
    case ReasonCode::kDelegationChainInvalid:
      return kDelegationChainInvalid;
    case ReasonCode::kHostPolicyDenied:
      return kHostPolicyDenied;
    case ReasonCode::kHostPolicyUnavailable:
      return kHostPolicyUnavailable;
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

bool IsFailClosedCode(absl::string_view code) {
  return code == kAuthorityUnavailable || code == kUsageStoreUnavailable ||
         code == kDelegationChainUnverified || code == kHostPolicyUnavailable ||
         code == kAuditUnavailable || code == kOperationAborted;
}

absl::string_view CodeMessage(absl::string_view code) {
  if (code == kToolUnavailable) return "The tool is not available to this turn.";
  if (code == kOperationAborted) return "The turn was stopped by a restart of its envelope.";
  if (code == kTraceMismatch) return "The tool call's trace does not match the turn's.";
  if (code == kInvalidRequest) return "The request names a resource of another owner or world.";
  if (code == kStepLimitExceeded) return "The turn's step budget is spent.";
  if (code == kToolCallLimitExceeded) return "The turn's tool call budget is spent.";
  if (code == kTurnDraining) return "The turn is ending; no new tool calls are accepted.";
  if (code == kNoMatchingGrant) return "No grant authorizes this operation.";
  if (code == kGrantExhausted) return "The matching grant has no uses left.";
  if (code == kHostPolicyDenied) return "The host policy does not allow this operation.";
  if (code == kDelegationChainInvalid) return "The grant's delegation chain is invalid.";
  if (code == kInvalidContext) return "The access context is not usable.";
  if (code == kActorMismatch) return "The context's actor is not the turn's agent.";
  if (code == kReceiverMismatch) return "The message's receiver is not the turn's agent.";
  if (code == kMessageTransportNotConfigured) return "No message transport is configured.";
  if (code == kMessageRequirementResolutionFailed)
    return "The message's receiver could not be resolved to a resource.";
  if (code == kMessageDeliveryFailed) return "The message transport failed.";
  if (code == kInvalidMessageReceipt) return "The message transport answered a malformed receipt.";
  if (code == kMessageRequestNotPrepared) return "The message request was not prepared.";
  if (code == kMessageRequestNotAccepted)
    return "The message transport did not accept the request.";
  if (code == kMessageReplyResolutionFailed)
    return "The reply to the message could not be resolved.";
  if (code == kInvalidMessageReply) return "The reply does not answer the message.";
  if (code == kResourceProviderNotFound)
    return "No resource provider serves the resource's namespace.";
  if (code == kResourceExecutionFailed) return "The resource provider failed.";
  if (code == kInvalidResourceResult) return "The resource provider answered a malformed result.";
  if (code == kMessageContextMismatch)
    return "The message's sender, trace or purpose does not match the context.";
  if (code == kAuthorityUnavailable) return "The authority of the turn could not be resolved.";
  if (code == kUsageStoreUnavailable) return "Grant usage could not be counted.";
  if (code == kDelegationChainUnverified)
    return "The grant's delegation chain could not be verified.";
  if (code == kHostPolicyUnavailable) return "The host policy could not be evaluated.";
  if (code == kAuditUnavailable) return "The audit log could not record the operation.";
  if (code == kTurnCancelled) return "The turn was cancelled.";
  if (code == kHarnessExitedWithoutOutcome) return "The harness exited without an outcome.";
  if (code == kInvalidToolArguments)
    return "The tool arguments do not satisfy the tool's input schema.";
  if (code == kToolRequirementResolutionFailed)
    return "The tool's requirement could not be resolved from its arguments.";
  if (code == kInvalidToolRequirement)
    return "The tool's resolved requirement lies outside its declared capability.";
  if (code == kToolCatalogUnavailable) return "A tool provider could not list its tools.";
  if (code == kToolExecutionFailed) return "The tool provider failed to run the call.";
  if (code == kInvalidToolResult)
    return "The tool provider returned an invalid result for the call.";
  if (code == kEscalationNotTerminated)
    return "sharedos.escalate ends the turn and is never executed as a tool.";
  return "The tool call was refused.";
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
  return code == DelegationCode::kResolverUnavailable || code == DelegationCode::kParentNotFound ||
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

}  // namespace sharedos::capability
