// Kernel mediation of one tool call (semantics §3.9 `invokeTool`, audit source `kernel`):
//   1. call.trace_id ≠ the turn's trace                  → denied trace_mismatch
//   2. not one of the turn's tools                        → denied tool_unavailable /
//   not_registered
//   3. its tool namespace not enabled by the context      → denied tool_unavailable /
//   namespace_disabled
//   4. Discover on the declared ceiling at the operation instant (canDiscover, §2.4); a denial
//      is recorded as authorization.checked (pre-effect)  → denied tool_unavailable / <its code>
//   5. sharedos.escalate (never executed: drivers end the turn with FinishTurn(escalate))
//                                                         → failed escalation_not_terminated
//   6. arguments against the input schema (valijson)     → failed invalid_tool_arguments
//   7. requirement from the arguments                     → failed
//   tool_requirement_resolution_failed
//   8. a requirement naming another owner: Authorize, non-consuming (the authorizer records
//      authorization.checked)                             → denied invalid_request
//   9. requirement outside the declared ceiling          → failed invalid_tool_requirement
//  10. Authorize, consuming                               → denied <its code> (+ details
//      {"requiredAuthority": CapabilityRequest as protobuf JSON} on no_matching_grant)
//  11. the provider, bounded by a deadline                → failed tool_execution_failed
//  12. the result against the call and output schema     → failed invalid_tool_result
// Steps 4 and 10 (or 8) are one authorizer call on the common path: Authorize carries the
// declared ceiling and the authorizer checks discoverability first. Steps 5–9 are computed before
// it; a refusal of theirs is answered only after a separate Discover has passed (step 4 still
// comes first), and an Authorize that does not answer is followed by a Discover to tell which
// step failed (tool_unavailable/authority_unavailable, or denied authority_unavailable).
// then tool.invoked (post-effect, source kernel): reason, cause, failClosed, grantId, resource
// and action, authorityHash, metadata.catalogHash — never arguments or results. Every refusal
// carries ProtocolError{code, fixed message, retryable false}. An authorizer that cannot be
// reached (or a lease it no longer knows) is a fail-closed authority_unavailable; a decision
// refused audit_unavailable, or a discovery record audit cannot take, is reported so the turn
// can latch the outage. Thread-safe; borrows every dependency.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_MEDIATOR_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_MEDIATOR_H_

#include <string>

#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/time/clock.h"
#include "envelope_svc/core/audit_records.h"
#include "envelope_svc/tools/turn_tools.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

// The trusted view of one turn that mediation decides under.
struct MediationScope {
  // The turn's context (now = the admission instant).
  const protocol::v1::AccessContext* context = nullptr;
  std::string lease_id;
  std::string authority_hash;
  std::string catalog_hash;
  // The turn's tools, resolved once.
  const tools::TurnTools* tools = nullptr;
  // The turn's deadline on the turn's clock: providers are never given longer than is left.
  absl::Time turn_deadline = absl::InfiniteFuture();
};

struct MediationResult {
  protocol::v1::ToolResult result;
  // What tool.invoked recorded.
  ToolInvokedFacts facts;
  // The call reached its provider (it may have had an effect).
  bool provider_entered = false;
  // A pre-effect record could not be written (the turn latches the outage).
  bool audit_unavailable = false;
};

class Mediator {
 public:
  struct Options {
    // Per authorizer RPC.
    absl::Duration authorizer_timeout = absl::Seconds(2);
    // Per provider call (never past the turn's deadline).
    absl::Duration provider_timeout = absl::Seconds(30);
    // Provider deadlines are wall-clock time (tool_provider.h), whatever clock the turn runs on.
    const common::Clock* deadline_clock = &common::RealClock();
  };

  Mediator(authorizer::client::AuthorizerClient& authorizer, audit::client::AuditWriter& audit,
           const common::Clock& clock, Options options)
      : authorizer_(authorizer), audit_(audit), clock_(clock), options_(options) {}

  // Mediates `call` (already valid: ValidateToolCall) at the operation instant `now`.
  MediationResult Invoke(const MediationScope& scope, const protocol::v1::ToolCall& call,
                         absl::Time now);

 private:
  MediationResult Decide(const MediationScope& scope, const protocol::v1::ToolCall& call,
                         absl::Time now);

  authorizer::client::AuthorizerClient& authorizer_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  const Options options_;
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_MEDIATOR_H_
