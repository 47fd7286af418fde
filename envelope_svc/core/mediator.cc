#include "envelope_svc/core/mediator.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "capability/address.h"
#include "capability/reason_codes.h"
#include "envelope_svc/tools/escalation_tool.h"
#include "envelope_svc/tools/tool_provider.h"
#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;

using values::Refusal;
using values::TimestampOf;

// `out` refused with `refusal`'s code (`status`): its result and the facts tool.invoked records,
// the verdict carried as decided.
MediationResult Refuse(MediationResult out, const pb::ToolCall& call, pb::ToolResultStatus status,
                       const Refusal& refusal) {
  out.result = values::RefusedResult(call, status, refusal.code);
  out.facts.reason = refusal.code;
  out.facts.cause = refusal.cause;
  out.facts.fail_closed = refusal.fail_closed;
  if (refusal.audit_outage) out.audit_unavailable = true;
  return out;
}

// `out` refused by a tool layer refusal (tool_refusal.h) at `now`.
MediationResult RefuseWith(MediationResult out, const pb::ToolCall& call,
                           const absl::Status& refusal, absl::Time now) {
  out.result = tools::RefusalResult(call, refusal, now);
  out.facts.reason = out.result.error().code();
  out.facts.cause = tools::RefusalCause(refusal);
  return out;
}

// The CapabilityRequest as protobuf JSON in a Struct (what a gRPC host parses back with
// JsonStringToMessage to pass it into FinishTurn(escalate)).
std::optional<google::protobuf::Struct> AsStruct(const pb::CapabilityRequest& request) {
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(request, &json).ok()) return std::nullopt;
  google::protobuf::Struct out;
  if (!google::protobuf::util::JsonStringToMessage(json, &out).ok()) return std::nullopt;
  return out;
}

}  // namespace

MediationResult Mediator::Invoke(const MediationScope& scope, const tools::Tool& tool,
                                 const pb::ToolCall& call, absl::Time now) {
  MediationResult outcome = Decide(scope, tool, call, now);
  outcome.facts.source = pb::AUDIT_SOURCE_KERNEL;
  outcome.facts.status = outcome.result.status();
  if (outcome.result.has_error() && outcome.facts.reason.empty()) {
    outcome.facts.reason = outcome.result.error().code();
  }
  outcome.facts.authority_hash = scope.authority_hash;
  outcome.facts.catalog_hash = scope.catalog_hash;
  *outcome.result.mutable_completed_at() = TimestampOf(clock_.Now());
  // Post-effect: an outage delays the record (the writer's outbox), never the answer.
  (void)audit_.RecordPostEffect(ToolInvokedEvent(*scope.context, now, call, outcome.facts));
  return outcome;
}

// ---------------------------------------------------------------------------------------------
// The pipeline

struct Mediator::Call {
  Call(const MediationScope& scope, const tools::Tool& tool, const pb::ToolCall& call,
       absl::Time now)
      : scope(scope),
        context(*scope.context),
        tool(&tool),
        call(call),
        now(now),
        instant(TimestampOf(now)) {}

  const MediationScope& scope;
  const pb::AccessContext& context;
  // The turn's tool the call names (resolved once, by the turn's offered check).
  const tools::Tool* const tool;
  const pb::ToolCall& call;
  // The operation instant.
  const absl::Time now;
  const google::protobuf::Timestamp instant;
  // Filled in by the steps as they pass.
  nlohmann::json arguments;
  pb::CapabilityRequirement requirement;
  // The requirement names another owner's resource (decided without consuming).
  bool foreign_owner = false;
};

MediationResult Mediator::Decide(const MediationScope& scope, const tools::Tool& tool,
                                 const pb::ToolCall& call, absl::Time now) {
  Call c(scope, tool, call, now);
  if (std::optional<MediationResult> refused = CheckTrace(c)) return *std::move(refused);

  // The kernel's own checks; the first refusal is held until discovery has passed on its own.
  std::optional<MediationResult> held = CheckEscalation(c);
  if (!held.has_value()) held = ParseArguments(c);
  if (!held.has_value()) held = ResolveRequirement(c);
  if (!held.has_value()) c.foreign_owner = NamesForeignOwner(c);
  if (!held.has_value() && !c.foreign_owner) held = CheckCeiling(c);
  if (held.has_value()) return AnswerAfterDiscovery(c, *std::move(held));

  // Discovery and the decision in one Authorize: the declared ceiling is checked first.
  absl::StatusOr<az::AuthorizeResponse> decided = Authorize(c);
  if (!decided.ok()) {
    MediationResult unanswered;
    unanswered.facts.requirement = c.requirement;
    return AnswerAfterDiscovery(c,
                                Refuse(std::move(unanswered), c.call, pb::TOOL_RESULT_STATUS_DENIED,
                                       Refusal::AuthorityUnavailable()));
  }
  if (std::optional<MediationResult> withheld =
          CheckDiscovery(c, decided->has_discovery() ? &decided->discovery() : nullptr)) {
    return *std::move(withheld);
  }
  if (c.foreign_owner) return RefuseForeignOwner(c, *decided);
  if (std::optional<MediationResult> denied = CheckDecision(c, *decided)) {
    return *std::move(denied);
  }
  return InvokeProvider(c, decided->decision().matched_grant_id());
}

// §3.9 step 1: the call belongs to the turn's trace.
std::optional<MediationResult> Mediator::CheckTrace(const Call& c) {
  if (c.call.trace_id() == c.context.trace_id()) return std::nullopt;
  return Refuse(MediationResult(), c.call, pb::TOOL_RESULT_STATUS_DENIED,
                Refusal::Of(capability::kTraceMismatch));
}

// The escalation affordance ends a turn; it is never run as a tool.
std::optional<MediationResult> Mediator::CheckEscalation(const Call& c) {
  if (c.tool->name() != tools::kEscalationToolName) return std::nullopt;
  return Refuse(MediationResult(), c.call, pb::TOOL_RESULT_STATUS_FAILED,
                Refusal::Of(capability::kEscalationNotTerminated));
}

// §3.9 step 7: the arguments, parsed once and used for both the requirement and the invocation.
std::optional<MediationResult> Mediator::ParseArguments(Call& c) {
  absl::StatusOr<nlohmann::json> arguments = c.tool->ParseArguments(c.call.arguments());
  if (!arguments.ok()) return RefuseWith(MediationResult(), c.call, arguments.status(), c.now);
  c.arguments = *std::move(arguments);
  return std::nullopt;
}

// §3.9 step 8: the requirement the arguments select.
std::optional<MediationResult> Mediator::ResolveRequirement(Call& c) {
  absl::StatusOr<pb::CapabilityRequirement> requirement = c.tool->ResolveRequirement(c.arguments);
  if (!requirement.ok()) {
    return RefuseWith(MediationResult(), c.call, requirement.status(), c.now);
  }
  c.requirement = *std::move(requirement);
  return std::nullopt;
}

// §3.9 step 9: a requirement naming another owner's resource.
bool Mediator::NamesForeignOwner(const Call& c) {
  return c.requirement.resource().has_owner() &&
         !capability::AddressEquals(c.requirement.resource().owner(), c.context.owner());
}

// §3.9 step 10: inside the declared ceiling.
std::optional<MediationResult> Mediator::CheckCeiling(const Call& c) {
  absl::Status within = c.tool->CheckWithinCeiling(c.requirement, c.context.owner());
  if (within.ok()) return std::nullopt;
  MediationResult out;
  out.facts.requirement = c.requirement;
  return RefuseWith(std::move(out), c.call, within, c.now);
}

// §3.9 step 6 on its own, for a call refused before its Authorize (or whose Authorize did not
// answer): a withheld tool is tool_unavailable whatever else is wrong with the call.
MediationResult Mediator::AnswerAfterDiscovery(const Call& c, MediationResult held) {
  az::DiscoverRequest discover;
  discover.set_lease_id(c.scope.lease_id);
  az::ToolRequirement* entry = discover.add_tools();
  entry->set_name(c.tool->name());
  *entry->mutable_requirement() = c.tool->ceiling();
  *discover.mutable_operation_instant() = c.instant;
  absl::StatusOr<az::DiscoverResponse> discovered =
      authorizer_.Discover(discover, options_.authorizer_timeout);
  const az::DiscoveryEntry* verdict =
      discovered.ok() && discovered->entries_size() == 1 ? &discovered->entries(0) : nullptr;
  if (std::optional<MediationResult> withheld = CheckDiscovery(c, verdict)) {
    return *std::move(withheld);
  }
  return held;
}

// §3.9 step 6: discoverable now (canDiscover on the declared ceiling, host ceiling included).
std::optional<MediationResult> Mediator::CheckDiscovery(const Call& c,
                                                        const az::DiscoveryEntry* entry) {
  if (entry == nullptr) return Withhold(c, Refusal::AuthorityUnavailable());
  if (entry->discoverable()) return std::nullopt;
  return Withhold(c, Refusal::FromAuthorizer(entry->reason_code(), entry->fail_closed()));
}

MediationResult Mediator::Withhold(const Call& c, const Refusal& withheld) {
  MediationResult out;
  out.facts.requirement = c.tool->ceiling();
  if (!audit_
           .RecordPreEffect(DiscoveryDeniedEvent(c.context, c.now, c.tool->ceiling(), c.call.id(),
                                                 c.tool->name(), withheld.code,
                                                 withheld.fail_closed, c.scope.authority_hash))
           .ok()) {
    return Refuse(std::move(out), c.call, pb::TOOL_RESULT_STATUS_DENIED,
                  Refusal::AuditUnavailable());
  }
  // tool_unavailable, its cause discovery's code; failClosed and an outage as discovery found.
  Refusal unavailable = withheld;
  unavailable.code = std::string(capability::kToolUnavailable);
  unavailable.cause = withheld.code;
  return Refuse(std::move(out), c.call, pb::TOOL_RESULT_STATUS_DENIED, unavailable);
}

// §3.9 steps 9 and 11: the decision, consuming a bounded use on allow — except for another
// owner's resource, decided (and recorded) by the authorizer without consuming.
absl::StatusOr<az::AuthorizeResponse> Mediator::Authorize(const Call& c) {
  az::AuthorizeRequest request;
  request.set_lease_id(c.scope.lease_id);
  *request.mutable_requirement() = c.requirement;
  request.set_consume(!c.foreign_owner);
  *request.mutable_operation_instant() = c.instant;
  request.set_operation_id(c.call.id());
  request.set_tool(c.tool->name());
  *request.mutable_declared_ceiling() = c.tool->ceiling();
  return authorizer_.Authorize(request, options_.authorizer_timeout);
}

// §3.9 step 9: another owner's resource is never this turn's to touch.
MediationResult Mediator::RefuseForeignOwner(const Call& c, const az::AuthorizeResponse& decided) {
  MediationResult out;
  out.facts.requirement = c.requirement;
  const Refusal decision =
      Refusal::FromAuthorizer(decided.decision().reason_code(), decided.fail_closed());
  // The authorizer could not record its decision: that outage, not the foreign owner, answers.
  if (decision.audit_outage) {
    return Refuse(std::move(out), c.call, pb::TOOL_RESULT_STATUS_DENIED, decision);
  }
  return Refuse(std::move(out), c.call, pb::TOOL_RESULT_STATUS_DENIED,
                Refusal::Of(capability::kInvalidRequest));
}

// §3.9 step 11's verdict: denied with the decision's code (a no_matching_grant denial names the
// authority a reviewer would grant).
std::optional<MediationResult> Mediator::CheckDecision(const Call& c,
                                                       const az::AuthorizeResponse& decided) {
  const pb::AuthorizationDecision& decision = decided.decision();
  if (decision.allowed()) return std::nullopt;
  MediationResult out;
  out.facts.requirement = c.requirement;
  out.facts.grant_id = decision.matched_grant_id();
  out = Refuse(std::move(out), c.call, pb::TOOL_RESULT_STATUS_DENIED,
               Refusal::FromAuthorizer(decision.reason_code(), decided.fail_closed()));
  if (decision.has_required_authority()) {
    out.required_authority = decision.required_authority();
    if (std::optional<google::protobuf::Struct> described = AsStruct(decision.required_authority());
        described.has_value()) {
      *(*out.result.mutable_error()->mutable_details()->mutable_fields())["requiredAuthority"]
           .mutable_struct_value() = *std::move(described);
    }
  }
  return out;
}

// §3.9 step 12: the provider, bounded by the turn's deadline, then the result check.
MediationResult Mediator::InvokeProvider(const Call& c, const std::string& grant_id) {
  if (c.tool->provider_binding().has_messaging()) return InvokeMessaging(c, grant_id);
  MediationResult out;
  out.facts.requirement = c.requirement;
  out.facts.grant_id = grant_id;
  out.provider_entered = true;
  const absl::Time deadline =
      options_.deadline_clock->Now() +
      std::max(absl::ZeroDuration(),
               std::min(options_.provider_timeout, c.scope.turn_deadline - c.now));
  absl::StatusOr<pb::ToolResult> result =
      c.scope.tools->Invoke(*c.tool, c.call, c.requirement, tools::ProviderContextOf(c.context),
                            deadline, options_.max_tool_result_bytes, &c.arguments);
  if (!result.ok()) return RefuseWith(std::move(out), c.call, result.status(), c.now);
  out.result = *std::move(result);
  if (out.result.has_error()) out.facts.reason = out.result.error().code();
  return out;
}

// §3.9 step 12 for messages.request: dispatched and answered by the kernel's messaging.
MediationResult Mediator::InvokeMessaging(const Call& c, const std::string& grant_id) {
  MediationResult out;
  out.facts.requirement = c.requirement;
  out.facts.grant_id = grant_id;
  if (options_.messenger == nullptr) {
    return Refuse(std::move(out), c.call, pb::TOOL_RESULT_STATUS_FAILED,
                  Refusal::Of(capability::kMessageTransportNotConfigured));
  }
  out.provider_entered = true;
  MessagingScope scope;
  scope.context = &c.context;
  scope.lease_id = c.scope.lease_id;
  scope.authority_hash = c.scope.authority_hash;
  scope.turn_deadline = c.scope.turn_deadline;
  Messenger::RequestResult requested =
      options_.messenger->Request(scope, c.call, c.arguments, grant_id, c.now);
  out.result = std::move(requested.result);
  if (out.result.has_error()) out.facts.reason = out.result.error().code();
  // The transport's code is its own refusal (route_lease_revoked, …), never a fail-closed verdict
  // of this kernel.
  out.facts.cause = std::move(requested.cause);
  return out;
}

}  // namespace sharedos::envelope::core
