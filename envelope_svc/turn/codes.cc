#include "envelope_svc/turn/codes.h"

#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::turn {

bool IsFailClosedCode(absl::string_view code) {
  return code == kAuthorityUnavailable || code == "usage_store_unavailable" ||
         code == "delegation_chain_unverified" || code == "host_policy_unavailable" ||
         code == kAuditUnavailable;
}

absl::string_view CodeMessage(absl::string_view code) {
  if (code == kToolUnavailable) return "The tool is not available to this turn.";
  if (code == kTraceMismatch) return "The tool call's trace does not match the turn's.";
  if (code == kInvalidRequest) return "The request names a resource of another owner or world.";
  if (code == kStepLimitExceeded) return "The turn's step budget is spent.";
  if (code == kToolCallLimitExceeded) return "The turn's tool call budget is spent.";
  if (code == kTurnDraining) return "The turn is ending; no new tool calls are accepted.";
  if (code == kNoMatchingGrant) return "No grant authorizes this operation.";
  if (code == "grant_exhausted") return "The matching grant has no uses left.";
  if (code == "host_policy_denied") return "The host policy does not allow this operation.";
  if (code == "delegation_chain_invalid") return "The grant's delegation chain is invalid.";
  if (code == "invalid_context") return "The access context is not usable.";
  if (code == kActorMismatch) return "The context's actor is not the turn's agent.";
  if (code == kReceiverMismatch) return "The message's receiver is not the turn's agent.";
  if (code == kMessageContextMismatch)
    return "The message's trace or purpose does not match the context.";
  if (code == kAuthorityUnavailable) return "The authority of the turn could not be resolved.";
  if (code == "usage_store_unavailable") return "Grant usage could not be counted.";
  if (code == "delegation_chain_unverified")
    return "The grant's delegation chain could not be verified.";
  if (code == "host_policy_unavailable") return "The host policy could not be evaluated.";
  if (code == kAuditUnavailable) return "The audit log could not record the operation.";
  if (code == kTurnCancelled) return "The turn was cancelled.";
  if (code == kHarnessExitedWithoutOutcome) return "The harness exited without an outcome.";
  return tools::RefusalMessage(code);
}

}  // namespace sharedos::envelope::turn
