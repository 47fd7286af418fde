// The reason codes envelope_svc's turn layer produces or relays (semantics §6.1, §6.2, §6.5) and
// the fixed caller-facing phrase of each. Messages never carry arguments, results, paths or
// provider text. Stateless; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TURN_CODES_H_
#define SHAREDOS_ENVELOPE_SVC_TURN_CODES_H_

#include "absl/strings/string_view.h"

namespace sharedos::envelope::turn {

// Tool calls (semantics §6.2).
inline constexpr absl::string_view kToolUnavailable = "tool_unavailable";
inline constexpr absl::string_view kTraceMismatch = "trace_mismatch";
inline constexpr absl::string_view kInvalidRequest = "invalid_request";
inline constexpr absl::string_view kStepLimitExceeded = "step_limit_exceeded";
inline constexpr absl::string_view kToolCallLimitExceeded = "tool_call_limit_exceeded";
inline constexpr absl::string_view kTurnDraining = "turn_draining";
inline constexpr absl::string_view kNoMatchingGrant = "no_matching_grant";

// Causes behind tool_unavailable (seed ADR 0023); a discovery denial's own code is the cause
// when discovery refused.
inline constexpr absl::string_view kCauseNotRegistered = "not_registered";
inline constexpr absl::string_view kCauseNamespaceDisabled = "namespace_disabled";
inline constexpr absl::string_view kCauseNotOffered = "not_offered";
inline constexpr absl::string_view kCauseNotDiscoverable = "not_discoverable";
// A requested tool the host ceiling withheld from the turn's catalogue (ADR 0020's count).
inline constexpr absl::string_view kCauseHostPolicyDenied = "host_policy_denied";
// Behind turn_draining: the call named a turn that had already ended (answered
// FAILED_PRECONDITION over gRPC, recorded as tool.invoked source envelope).
inline constexpr absl::string_view kCauseTurnEnded = "turn_ended";

// Turns (semantics §6.5) and infrastructure (§3.5).
inline constexpr absl::string_view kActorMismatch = "actor_mismatch";
inline constexpr absl::string_view kReceiverMismatch = "receiver_mismatch";
inline constexpr absl::string_view kMessageContextMismatch = "message_context_mismatch";
inline constexpr absl::string_view kAuthorityUnavailable = "authority_unavailable";
inline constexpr absl::string_view kAuditUnavailable = "audit_unavailable";
inline constexpr absl::string_view kTurnCancelled = "turn_cancelled";
inline constexpr absl::string_view kEscalationRequested = "escalation_requested";
inline constexpr absl::string_view kHarnessExitedWithoutOutcome = "harness_exited_without_outcome";

// True for the codes of infrastructure (fail-closed) refusals: authority_unavailable,
// usage_store_unavailable, delegation_chain_unverified, host_policy_unavailable,
// audit_unavailable.
bool IsFailClosedCode(absl::string_view code);

// The fixed phrase answered with `code` (a generic one for a code not listed here).
absl::string_view CodeMessage(absl::string_view code);

}  // namespace sharedos::envelope::turn

#endif  // SHAREDOS_ENVELOPE_SVC_TURN_CODES_H_
