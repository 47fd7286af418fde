#include "envelope_svc/core/mediator.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "capability/address.h"
#include "capability/reason_codes.h"
#include "common/time/proto_time.h"
#include "envelope_svc/tools/escalation_tool.h"
#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;

google::protobuf::Timestamp TimestampOf(absl::Time at) {
  absl::StatusOr<google::protobuf::Timestamp> timestamp = common::ToProtoTimestamp(at);
  return timestamp.ok() ? *timestamp : google::protobuf::Timestamp();
}

// A refusal built here: status + ProtocolError{code, fixed message, retryable false}.
pb::ToolResult Refused(const pb::ToolCall& call, pb::ToolResultStatus status,
                       absl::string_view code) {
  pb::ToolResult result;
  result.set_call_id(call.id());
  result.set_tool(call.tool());
  result.set_status(status);
  pb::ProtocolError* error = result.mutable_error();
  error->set_code(std::string(code));
  error->set_message(std::string(capability::CodeMessage(code)));
  error->set_retryable(false);
  return result;
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

v1::ProviderContext ProviderContextOf(const pb::AccessContext& context) {
  v1::ProviderContext provider;
  provider.set_namespace_id(context.namespace_id());
  *provider.mutable_actor() = context.actor();
  *provider.mutable_owner() = context.owner();
  provider.set_purpose(context.purpose());
  provider.set_trace_id(context.trace_id());
  return provider;
}

}  // namespace

MediationResult Mediator::Invoke(const MediationScope& scope, const pb::ToolCall& call,
                                 absl::Time now) {
  MediationResult outcome = Decide(scope, call, now);
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

MediationResult Mediator::Decide(const MediationScope& scope, const pb::ToolCall& call,
                                 absl::Time now) {
  const pb::AccessContext& context = *scope.context;
  MediationResult out;
  auto refuse = [&](pb::ToolResultStatus status, absl::string_view code,
                    absl::string_view cause = "") {
    out.result = Refused(call, status, code);
    out.facts.reason = std::string(code);
    out.facts.cause = std::string(cause);
    if (capability::IsFailClosedCode(code) || capability::IsFailClosedCode(cause))
      out.facts.fail_closed = true;
    return std::move(out);
  };
  auto refuse_with = [&](const absl::Status& refusal) {
    out.result = tools::RefusalResult(call, refusal, now);
    out.facts.reason = out.result.error().code();
    return std::move(out);
  };
  const google::protobuf::Timestamp instant = TimestampOf(now);

  // 1. The call belongs to the turn's trace.
  if (call.trace_id() != context.trace_id()) {
    return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kTraceMismatch);
  }
  // 2. Registered for this turn.
  const tools::Tool* tool = scope.tools->Find(call.tool());
  if (tool == nullptr) {
    return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kToolUnavailable,
                  capability::kCauseNotRegistered);
  }
  // 3. Its tool namespace is enabled.
  const auto& enabled = context.enabled_tool_namespaces();
  if (std::find(enabled.begin(), enabled.end(), tool->tool_namespace()) == enabled.end()) {
    return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kToolUnavailable,
                  capability::kCauseNamespaceDisabled);
  }
  // 4. Discoverable now (canDiscover on the declared ceiling, host ceiling included). On the
  // common path this check rides on the step-10 Authorize (declared_ceiling), so the call asks
  // the authorizer once; steps 5–9 need no authorizer and are computed first, and any refusal
  // they give is only answered after a separate discovery check (a withheld tool is
  // tool_unavailable whatever its arguments). A denial is recorded as authorization.checked
  // (pre-effect) by the envelope, as before.
  auto withheld = [&](std::string code, bool fail_closed) -> MediationResult {
    out.facts.requirement = tool->ceiling();
    if (code == capability::kAuditUnavailable) out.audit_unavailable = true;
    if (!audit_
             .RecordPreEffect(DiscoveryDeniedEvent(context, now, tool->ceiling(), call.id(),
                                                   tool->name(), code, fail_closed,
                                                   scope.authority_hash))
             .ok()) {
      out.audit_unavailable = true;
      return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kAuditUnavailable);
    }
    MediationResult denied =
        refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kToolUnavailable, code);
    denied.facts.fail_closed = fail_closed;
    return denied;
  };
  // The discovery verdict of `entry` (nullptr: the authorizer did not answer): the refusal, or
  // nullopt when the tool is discoverable.
  auto discovery_refusal = [&](const az::DiscoveryEntry* entry) -> std::optional<MediationResult> {
    if (entry == nullptr) return withheld(std::string(capability::kAuthorityUnavailable), true);
    if (entry->discoverable()) return std::nullopt;
    const std::string& code = entry->reason_code();
    return withheld(code, entry->fail_closed() || capability::IsFailClosedCode(code));
  };
  // Step 4 on its own (a Discover of this one tool).
  auto discover = [&]() -> std::optional<MediationResult> {
    az::DiscoverRequest discover;
    discover.set_lease_id(scope.lease_id);
    az::ToolRequirement* entry = discover.add_tools();
    entry->set_name(tool->name());
    *entry->mutable_requirement() = tool->ceiling();
    *discover.mutable_operation_instant() = instant;
    absl::StatusOr<az::DiscoverResponse> discovered =
        authorizer_.Discover(discover, options_.authorizer_timeout);
    if (!discovered.ok() || discovered->entries_size() != 1) return discovery_refusal(nullptr);
    return discovery_refusal(&discovered->entries(0));
  };
  // A refusal of steps 5–9, answered only once step 4 has passed.
  auto after_discovery = [&](auto&& refusal) -> MediationResult {
    if (std::optional<MediationResult> withheld_first = discover()) {
      return *std::move(withheld_first);
    }
    return refusal();
  };

  // 5. The escalation affordance ends a turn; it is never run as a tool.
  if (tool->name() == tools::kEscalationToolName) {
    return after_discovery([&] {
      return refuse(pb::TOOL_RESULT_STATUS_FAILED, capability::kEscalationNotTerminated);
    });
  }
  // 6. Arguments, parsed once and used for both the requirement and the invocation.
  absl::StatusOr<nlohmann::json> arguments = tool->ParseArguments(call.arguments());
  if (!arguments.ok()) return after_discovery([&] { return refuse_with(arguments.status()); });
  // 7. The requirement the arguments select.
  absl::StatusOr<pb::CapabilityRequirement> requirement = tool->ResolveRequirement(*arguments);
  if (!requirement.ok()) {
    return after_discovery([&] { return refuse_with(requirement.status()); });
  }

  // Steps 4 and 8 or 10 in one Authorize: the declared ceiling is checked for discovery first.
  // When the authorizer does not answer, step 4 is asked alone to tell which step failed.
  auto authorize = [&](bool consume) -> absl::StatusOr<az::AuthorizeResponse> {
    az::AuthorizeRequest request;
    request.set_lease_id(scope.lease_id);
    *request.mutable_requirement() = *requirement;
    request.set_consume(consume);
    *request.mutable_operation_instant() = instant;
    request.set_operation_id(call.id());
    request.set_tool(tool->name());
    *request.mutable_declared_ceiling() = tool->ceiling();
    return authorizer_.Authorize(request, options_.authorizer_timeout);
  };
  // 8. Another owner's resource: decided (and recorded) by the authorizer, never consuming.
  if (requirement->resource().has_owner() &&
      !capability::AddressEquals(requirement->resource().owner(), context.owner())) {
    absl::StatusOr<az::AuthorizeResponse> decided = authorize(/*consume=*/false);
    if (!decided.ok()) {
      return after_discovery([&] {
        out.facts.requirement = *requirement;
        return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kAuthorityUnavailable);
      });
    }
    if (std::optional<MediationResult> refused =
            discovery_refusal(decided->has_discovery() ? &decided->discovery() : nullptr)) {
      return *std::move(refused);
    }
    out.facts.requirement = *requirement;
    if (decided->decision().reason_code() == capability::kAuditUnavailable) {
      out.audit_unavailable = true;
      return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kAuditUnavailable);
    }
    return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kInvalidRequest);
  }
  // 9. Inside the declared ceiling.
  if (absl::Status within = tool->CheckWithinCeiling(*requirement, context.owner()); !within.ok()) {
    return after_discovery([&] {
      out.facts.requirement = *requirement;
      return refuse_with(within);
    });
  }
  // 10. The decision, consuming a bounded use on allow.
  absl::StatusOr<az::AuthorizeResponse> decided = authorize(/*consume=*/true);
  if (!decided.ok()) {
    return after_discovery([&] {
      out.facts.requirement = *requirement;
      return refuse(pb::TOOL_RESULT_STATUS_DENIED, capability::kAuthorityUnavailable);
    });
  }
  if (std::optional<MediationResult> refused =
          discovery_refusal(decided->has_discovery() ? &decided->discovery() : nullptr)) {
    return *std::move(refused);
  }
  out.facts.requirement = *requirement;
  const pb::AuthorizationDecision& decision = decided->decision();
  out.facts.grant_id = decision.matched_grant_id();
  if (!decision.allowed()) {
    const std::string code = decision.reason_code().empty()
                                 ? std::string(capability::kNoMatchingGrant)
                                 : decision.reason_code();
    if (code == capability::kAuditUnavailable) out.audit_unavailable = true;
    const bool fail_closed = decided->fail_closed() || capability::IsFailClosedCode(code);
    out = refuse(pb::TOOL_RESULT_STATUS_DENIED, code);
    out.facts.fail_closed = fail_closed;
    if (decision.has_required_authority()) {
      if (std::optional<google::protobuf::Struct> described =
              AsStruct(decision.required_authority());
          described.has_value()) {
        *(*out.result.mutable_error()->mutable_details()->mutable_fields())["requiredAuthority"]
             .mutable_struct_value() = *std::move(described);
      }
    }
    return out;
  }
  // 11–12. The provider, then the result check.
  out.provider_entered = true;
  const absl::Time deadline = options_.deadline_clock->Now() +
                              std::max(absl::ZeroDuration(), std::min(options_.provider_timeout,
                                                                      scope.turn_deadline - now));
  absl::StatusOr<pb::ToolResult> result =
      scope.tools->Invoke(call, *requirement, ProviderContextOf(context), deadline);
  if (!result.ok()) return refuse_with(result.status());
  out.result = *std::move(result);
  if (out.result.has_error()) out.facts.reason = out.result.error().code();
  return out;
}

}  // namespace sharedos::envelope::core
