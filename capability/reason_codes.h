// The one reason-code catalogue of SharedOS: every code a refusal, a decision or an audit record
// carries, named once, and the fixed caller-facing phrase of each. Decision codes (semantics
// §6.1) and the authorizer's internal vocabularies (§3.2, §3.6, §6.8) are enums with a Name()
// giving the reference's exact string; the codes of tool calls, turns and infrastructure (§6.2,
// §6.5, §3.5) and the causes behind tool_unavailable (seed ADR 0023) are string constants.
// Messages never carry arguments, results, paths or provider text. Stateless; thread-safe.

#ifndef SHAREDOS_CAPABILITY_REASON_CODES_H_
#define SHAREDOS_CAPABILITY_REASON_CODES_H_

#include <array>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace sharedos::capability {

// ---- Decision codes (AuthorizationDecision.reasonCode, semantics §6.1) as text. ----
inline constexpr absl::string_view kAllowed = "allowed";
inline constexpr absl::string_view kNoMatchingGrant = "no_matching_grant";
inline constexpr absl::string_view kGrantExhausted = "grant_exhausted";
inline constexpr absl::string_view kInvalidContext = "invalid_context";
inline constexpr absl::string_view kInvalidRequest = "invalid_request";
inline constexpr absl::string_view kAuthorityUnavailable = "authority_unavailable";
inline constexpr absl::string_view kUsageStoreUnavailable = "usage_store_unavailable";
inline constexpr absl::string_view kDelegationChainUnverified = "delegation_chain_unverified";
inline constexpr absl::string_view kDelegationChainInvalid = "delegation_chain_invalid";
inline constexpr absl::string_view kHostPolicyDenied = "host_policy_denied";
inline constexpr absl::string_view kHostPolicyUnavailable = "host_policy_unavailable";

// ---- Tool calls (semantics §6.2). ----
inline constexpr absl::string_view kToolUnavailable = "tool_unavailable";
inline constexpr absl::string_view kTraceMismatch = "trace_mismatch";
inline constexpr absl::string_view kStepLimitExceeded = "step_limit_exceeded";
inline constexpr absl::string_view kToolCallLimitExceeded = "tool_call_limit_exceeded";
inline constexpr absl::string_view kTurnDraining = "turn_draining";
inline constexpr absl::string_view kInvalidToolArguments = "invalid_tool_arguments";
inline constexpr absl::string_view kToolRequirementResolutionFailed =
    "tool_requirement_resolution_failed";
inline constexpr absl::string_view kInvalidToolRequirement = "invalid_tool_requirement";
inline constexpr absl::string_view kToolCatalogUnavailable = "tool_catalog_unavailable";
inline constexpr absl::string_view kToolExecutionFailed = "tool_execution_failed";
inline constexpr absl::string_view kInvalidToolResult = "invalid_tool_result";
// A call after the turn asked for a human over MCP (the escalation latch, seed ADR 0018).
inline constexpr absl::string_view kEscalationPending = "escalation_pending";
inline constexpr absl::string_view kEscalationNotTerminated = "escalation_not_terminated";

// ---- Causes behind tool_unavailable (seed ADR 0023, audit metadata.cause). A discovery
// denial's own code is the cause when discovery refused. ----
inline constexpr absl::string_view kCauseNotRegistered = "not_registered";
inline constexpr absl::string_view kCauseNamespaceDisabled = "namespace_disabled";
inline constexpr absl::string_view kCauseNotOffered = "not_offered";
inline constexpr absl::string_view kCauseNotDiscoverable = "not_discoverable";
// A requested tool the host ceiling withheld from the turn's catalogue (ADR 0020's count).
inline constexpr absl::string_view kCauseHostPolicyDenied = kHostPolicyDenied;
// Behind turn_draining: the call named a turn that had already ended (answered
// FAILED_PRECONDITION over gRPC, recorded as tool.invoked source envelope).
inline constexpr absl::string_view kCauseTurnEnded = "turn_ended";
// A turn ended because its calls kept being refused past its budget (ADR 0016): turn.ended's
// cause, beside the code of the refusal that reached the bound.
inline constexpr absl::string_view kCauseRefusalsExhausted = "refusals_exhausted";
// A tool's result would exceed its cap (per tool, or the envelope's): tool_execution_failed's
// cause; the result is never built past the cap.
inline constexpr absl::string_view kCauseResultTooLarge = "result_too_large";

// ---- Messages (semantics §6.4). A transport's own refusal code (e.g. route_lease_revoked) is
// returned verbatim by sendMessage and is the audit cause of message_request_not_accepted. ----
inline constexpr absl::string_view kMessageTransportNotConfigured =
    "message_transport_not_configured";
inline constexpr absl::string_view kMessageRequirementResolutionFailed =
    "message_requirement_resolution_failed";
inline constexpr absl::string_view kMessageDeliveryFailed = "message_delivery_failed";
inline constexpr absl::string_view kInvalidMessageReceipt = "invalid_message_receipt";
inline constexpr absl::string_view kMessageRequestNotPrepared = "message_request_not_prepared";
inline constexpr absl::string_view kMessageRequestNotAccepted = "message_request_not_accepted";
inline constexpr absl::string_view kMessageReplyResolutionFailed =
    "message_reply_resolution_failed";
inline constexpr absl::string_view kInvalidMessageReply = "invalid_message_reply";

// ---- Resources (semantics §6.3): Envelope.InvokeResource after its decision. ----
inline constexpr absl::string_view kResourceProviderNotFound = "resource_provider_not_found";
inline constexpr absl::string_view kResourceExecutionFailed = "resource_execution_failed";
inline constexpr absl::string_view kInvalidResourceResult = "invalid_resource_result";

// ---- Turns (semantics §6.5) and infrastructure (§3.5). ----
inline constexpr absl::string_view kActorMismatch = "actor_mismatch";
inline constexpr absl::string_view kReceiverMismatch = "receiver_mismatch";
inline constexpr absl::string_view kMessageContextMismatch = "message_context_mismatch";
// Not an authorization code, but the fail-closed denial a decision or a turn gets when a
// pre-effect record cannot be made durable (semantics §3.5, ADR 0023).
inline constexpr absl::string_view kAuditUnavailable = "audit_unavailable";
inline constexpr absl::string_view kTurnCancelled = "turn_cancelled";
inline constexpr absl::string_view kEscalationRequested = "escalation_requested";
inline constexpr absl::string_view kHarnessExitedWithoutOutcome = "harness_exited_without_outcome";
// Turn endings a runtime or harness reports (semantics §6.5, §6.6): the codes a host passes in
// FinishTurn(fail) or harness_exited.error_code. Listed so each has a message of its own.
inline constexpr absl::string_view kDriverFailed = "driver_failed";
inline constexpr absl::string_view kInvalidDriverDecision = "invalid_driver_decision";
inline constexpr absl::string_view kRuntimeFailed = "runtime_failed";
inline constexpr absl::string_view kInvalidRuntimeOutcome = "invalid_runtime_outcome";
inline constexpr absl::string_view kHarnessNotStarted = "harness_not_started";
inline constexpr absl::string_view kHarnessEndedWithoutOutcome = "harness_ended_without_outcome";
inline constexpr absl::string_view kHarnessFrameLimitExceeded = "harness_frame_limit_exceeded";
inline constexpr absl::string_view kHarnessArgumentsUnparseable = "harness_arguments_unparseable";
inline constexpr absl::string_view kHarnessCommandRejected = "harness_command_rejected";
inline constexpr absl::string_view kHarnessFailed = "harness_failed";

// ---- Fixed vocabularies (metric labels: common/metrics/sinks.h takes them from here). ----
// Every code a decision or a turn's admission answers (semantics §6.1), and audit_unavailable;
// "allowed" first.
inline constexpr std::array<absl::string_view, 12> kDecisionReasonCodes = {
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
    kAuditUnavailable,
};
// The refusals of a turn's budget (semantics §6.3).
inline constexpr std::array<absl::string_view, 3> kTurnBudgetCodes = {
    kStepLimitExceeded, kToolCallLimitExceeded, kTurnDraining};
inline constexpr absl::string_view kModelCallFailed = "model_call_failed";
inline constexpr absl::string_view kModelOutputTruncated = "model_output_truncated";
inline constexpr absl::string_view kModelMalformedCallLimitExceeded =
    "model_malformed_call_limit_exceeded";
// A turn the envelope's process stopped under (a crash or kill): ended on restart, fail closed
// (semantics §5: the `interrupted` audit reason; ADR 0009).
inline constexpr absl::string_view kOperationAborted = "operation_aborted";

// The fixed phrase answered with `code`: every code SharedOS answers or records has its own,
// which says what happened (kUnknownCodeMessage only for a code outside this catalogue, e.g. one
// a harness invented).
absl::string_view CodeMessage(absl::string_view code);
inline constexpr absl::string_view kUnknownCodeMessage =
    "The call or turn ended with a code outside SharedOS's catalogue (named by its harness or "
    "host).";
// Every code with a message of its own (reason_codes_test checks each against the catalogue).
const std::vector<absl::string_view>& CodesWithMessages();

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

}  // namespace sharedos::capability

#endif  // SHAREDOS_CAPABILITY_REASON_CODES_H_
