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

namespace {

struct CodeAndMessage {
  absl::string_view code;
  absl::string_view message;
};

// One sentence per code: what happened, in words a model or a person can act on.
constexpr CodeAndMessage kMessages[] = {
    {kAllowed, "A grant of this turn authorizes the operation."},
    {kNoMatchingGrant, "No grant authorizes this operation."},
    {kGrantExhausted, "The matching grant has no uses left."},
    {kInvalidContext, "The access context is not usable."},
    {kInvalidRequest, "The request names a resource of another owner or world."},
    {kAuthorityUnavailable, "The authority of the turn could not be resolved."},
    {kUsageStoreUnavailable, "Grant usage could not be counted."},
    {kDelegationChainUnverified, "The grant's delegation chain could not be verified."},
    {kDelegationChainInvalid, "The grant's delegation chain is invalid."},
    {kHostPolicyDenied, "The host policy does not allow this operation."},
    {kHostPolicyUnavailable, "The host policy could not be evaluated."},
    {kToolUnavailable, "The tool is not available to this turn."},
    {kTraceMismatch, "The tool call's trace does not match the turn's."},
    {kStepLimitExceeded, "The turn's step budget is spent."},
    {kToolCallLimitExceeded, "The turn's tool call budget is spent."},
    {kTurnDraining, "The turn is ending; no new tool calls are accepted."},
    {kInvalidToolArguments, "The tool arguments do not satisfy the tool's input schema."},
    {kToolRequirementResolutionFailed,
     "The tool's requirement could not be resolved from its arguments."},
    {kInvalidToolRequirement,
     "The tool's resolved requirement lies outside its declared capability."},
    {kToolCatalogUnavailable, "A tool provider could not list its tools."},
    {kToolExecutionFailed, "The tool provider failed to run the call."},
    {kInvalidToolResult, "The tool provider returned an invalid result for the call."},
    {kEscalationPending,
     "The turn has asked for a human; no further tool calls are run until a reviewer decides."},
    {kEscalationNotTerminated, "sharedos.escalate ends the turn and is never executed as a tool."},
    {kMessageTransportNotConfigured, "No message transport is configured."},
    {kMessageRequirementResolutionFailed,
     "The message's receiver could not be resolved to a resource."},
    {kMessageDeliveryFailed, "The message transport failed."},
    {kInvalidMessageReceipt, "The message transport answered a malformed receipt."},
    {kMessageRequestNotPrepared, "The message request was not prepared."},
    {kMessageRequestNotAccepted, "The message transport did not accept the request."},
    {kMessageReplyResolutionFailed, "The reply to the message could not be resolved."},
    {kInvalidMessageReply, "The reply does not answer the message."},
    {kResourceProviderNotFound, "No resource provider serves the resource's namespace."},
    {kResourceExecutionFailed, "The resource provider failed."},
    {kInvalidResourceResult, "The resource provider answered a malformed result."},
    {kActorMismatch, "The context's actor is not the turn's agent."},
    {kReceiverMismatch, "The message's receiver is not the turn's agent."},
    {kMessageContextMismatch, "The message's sender, trace or purpose does not match the context."},
    {kAuditUnavailable, "The audit log could not record the operation."},
    {kTurnCancelled, "The turn was cancelled."},
    {kEscalationRequested, "The turn asked for a human; a reviewer decides on the authority."},
    {kHarnessExitedWithoutOutcome, "The harness exited without an outcome."},
    {kOperationAborted, "The turn was stopped by a restart of its envelope."},
    {kDriverFailed, "The turn's driver failed."},
    {kInvalidDriverDecision, "The turn's driver made a malformed decision."},
    {kRuntimeFailed, "The turn's runtime failed."},
    {kInvalidRuntimeOutcome, "The turn's runtime reported a malformed outcome."},
    {kHarnessNotStarted, "The harness could not be started."},
    {kHarnessEndedWithoutOutcome, "The harness ended its turn without an outcome."},
    {kHarnessFrameLimitExceeded, "The harness sent too many frames that could not be used."},
    {kHarnessArgumentsUnparseable, "The harness sent tool arguments that could not be parsed."},
    {kHarnessCommandRejected, "The harness refused the command it was given."},
    {kHarnessFailed, "The harness failed or was stopped at its limit."},
    {kModelCallFailed, "The call to the model failed."},
    {kModelOutputTruncated, "The model's output was cut off at its length limit."},
    {kModelMalformedCallLimitExceeded, "The model made too many malformed tool calls."},
};

}  // namespace

absl::string_view CodeMessage(absl::string_view code) {
  for (const CodeAndMessage& entry : kMessages) {
    if (entry.code == code) return entry.message;
  }
  return kUnknownCodeMessage;
}

const std::vector<absl::string_view>& CodesWithMessages() {
  static const auto* const codes = [] {
    auto* out = new std::vector<absl::string_view>();
    for (const CodeAndMessage& entry : kMessages) out->push_back(entry.code);
    return out;
  }();
  return *codes;
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
