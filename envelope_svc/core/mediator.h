// Kernel mediation of one tool call (semantics §3.9 `invokeTool`, audit source `kernel`): a
// pipeline of named steps, each a refusal or the next step. §3.9's steps 2 (authority) and 3
// (registry) are the turn's: its lease and its tools, resolved once at OpenTurn. So are steps 4
// (registered) and 5 (tool namespace enabled): the turn's one offered check (Turn::OfferOf, under
// the selection in force) refuses those calls in the envelope, before mediation, and hands the
// mediator the tool it resolved — docs/adr/0024. The steps, in the order they run (§3.9's number,
// then the refusal):
//   CheckTrace           1  call.trace_id ≠ the turn's trace     denied trace_mismatch
//   the kernel's own checks, which need no authorizer:
//   CheckEscalation         sharedos.escalate, never executed    failed escalation_not_terminated
//                           (drivers end the turn with FinishTurn(escalate))
//   ParseArguments       7  against the input schema (valijson)  failed invalid_tool_arguments
//   ResolveRequirement   8  from the arguments                   failed
//                                                                tool_requirement_resolution_failed
//   NamesForeignOwner    9  another owner's resource: no ceiling check, decided without consuming
//   CheckCeiling        10  outside the declared ceiling         failed invalid_tool_requirement
//   then the authorizer:
//   CheckDiscovery       6  canDiscover on the declared ceiling at the operation instant (§2.4,
//                           host ceiling included); a denial is recorded as authorization.checked
//                           (pre-effect)                         denied tool_unavailable / <code>
//   RefuseForeignOwner   9  decided (and recorded) by the        denied invalid_request
//                           authorizer
//   CheckDecision       11  Authorize, consuming                 denied <its code> (+ details
//                           {"requiredAuthority": CapabilityRequest as protobuf JSON} on
//                           no_matching_grant)
//   InvokeProvider      12  the provider, bounded by a deadline  failed tool_execution_failed;
//                           the result against the call and      failed invalid_tool_result
//                           the output schema
//                           — for messages.request, the kernel's messaging (messaging.h:
//                           Messenger::Request; tool.invoked's cause the receipt's code)
// Discovery (6) runs after the kernel's own checks so that on the common path it rides on the
// Authorize of 9 or 11 (declared_ceiling: the authorizer checks discoverability first) — one
// authorizer call per tool call. A refusal of the kernel's own checks is therefore held, and
// answered only once a Discover of this one tool has passed (AnswerAfterDiscovery): what a
// caller sees is §3.9's order, a withheld tool is tool_unavailable whatever its arguments. An
// Authorize that does not answer is followed by that Discover too, to tell which step failed
// (tool_unavailable/authority_unavailable, or denied authority_unavailable).
// Then tool.invoked (post-effect, source kernel): reason, cause, failClosed, grantId, resource
// and action, authorityHash, metadata.catalogHash — never arguments or results. Every refusal
// carries ProtocolError{code, fixed message, retryable false}. An authorizer that cannot be
// reached (or a lease it no longer knows) is a fail-closed authority_unavailable; a decision
// refused audit_unavailable, or a discovery record audit cannot take, is reported so the turn
// can latch the outage.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_MEDIATOR_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_MEDIATOR_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/time/clock.h"
#include "envelope_svc/core/audit_records.h"
#include "envelope_svc/core/messaging.h"
#include "envelope_svc/core/values.h"
#include "envelope_svc/tools/turn_tools.h"
#include "sharedos/authorizer/v1/authorizer.pb.h"
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
  // A no_matching_grant denial's required authority (InvokeToolResponse.required_authority).
  std::optional<protocol::v1::CapabilityRequest> required_authority;
};

// Mediates the tool calls of turns through the pipeline above. Holds no state of its own;
// thread-safe.
class Mediator {
 public:
  struct Options {
    // Per authorizer RPC.
    absl::Duration authorizer_timeout = absl::Seconds(2);
    // Per provider call (never past the turn's deadline).
    absl::Duration provider_timeout = absl::Seconds(30);
    // Provider deadlines are wall-clock time (tool_provider.h), whatever clock the turn runs on.
    const common::Clock* deadline_clock = &common::RealClock();
    // Runs messages.request once its requirement is allowed (messaging.h); null: the tool is
    // never offered, and a call reaching step 12 fails message_transport_not_configured.
    Messenger* messenger = nullptr;
    // The largest tool result accepted (a tool's own cap may be lower; turn_tools.h): a larger
    // one fails tool_execution_failed, cause result_too_large. 0: none.
    uint64_t max_tool_result_bytes = 0;
  };

  Mediator(authorizer::client::AuthorizerClient& authorizer, audit::client::AuditWriter& audit,
           const common::Clock& clock, Options options)
      : authorizer_(authorizer), audit_(audit), clock_(clock), options_(options) {}

  // Mediates `call` (already valid: ValidateToolCall) of the offered `tool` (the turn's tool the
  // call names: Turn::OfferOf) at the operation instant `now`.
  MediationResult Invoke(const MediationScope& scope, const tools::Tool& tool,
                         const protocol::v1::ToolCall& call, absl::Time now);

 private:
  // One call as it passes the steps (mediator.cc).
  struct Call;

  // The pipeline: the steps below, in the order they run.
  MediationResult Decide(const MediationScope& scope, const tools::Tool& tool,
                         const protocol::v1::ToolCall& call, absl::Time now);

  // Each step answers the call's refusal, or nullopt to go on.
  static std::optional<MediationResult> CheckTrace(const Call& call);
  static std::optional<MediationResult> CheckEscalation(const Call& call);
  static std::optional<MediationResult> ParseArguments(Call& call);
  static std::optional<MediationResult> ResolveRequirement(Call& call);
  static bool NamesForeignOwner(const Call& call);
  static std::optional<MediationResult> CheckCeiling(const Call& call);
  // Discovery of the tool on its own (a Discover of this one tool), then — when it passes —
  // `held`, the refusal that waited for it.
  MediationResult AnswerAfterDiscovery(const Call& call, MediationResult held);
  // Discovery's verdict of `entry` (nullptr: the authorizer did not answer).
  std::optional<MediationResult> CheckDiscovery(const Call& call,
                                                const authorizer::v1::DiscoveryEntry* entry);
  // A tool withheld by discovery's verdict `withheld`: authorization.checked (pre-effect), then
  // tool_unavailable / its code.
  MediationResult Withhold(const Call& call, const values::Refusal& withheld);
  absl::StatusOr<authorizer::v1::AuthorizeResponse> Authorize(const Call& call);
  static MediationResult RefuseForeignOwner(const Call& call,
                                            const authorizer::v1::AuthorizeResponse& decided);
  static std::optional<MediationResult> CheckDecision(
      const Call& call, const authorizer::v1::AuthorizeResponse& decided);
  MediationResult InvokeProvider(const Call& call, const std::string& grant_id);
  // Step 12 for messages.request: the kernel's messaging instead of a provider.
  MediationResult InvokeMessaging(const Call& call, const std::string& grant_id);

  authorizer::client::AuthorizerClient& authorizer_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  const Options options_;
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_MEDIATOR_H_
