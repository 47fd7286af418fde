#include "envelope_svc/core/audit_records.h"

#include <utility>

#include "capability/reason_codes.h"
#include "envelope_svc/core/values.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using values::TimestampOf;

pb::AuditEvent Stamped(const pb::AccessContext& context, const google::protobuf::Timestamp& at,
                       pb::AuditEventType type, pb::AuditOutcome outcome) {
  pb::AuditEvent event;
  event.set_version("1");
  event.set_type(type);
  event.set_outcome(outcome);
  *event.mutable_at() = at;
  event.set_trace_id(context.trace_id());
  event.set_namespace_id(context.namespace_id());
  *event.mutable_actor() = context.actor();
  *event.mutable_authority() = context.authority();
  *event.mutable_owner() = context.owner();
  event.set_purpose(context.purpose());
  return event;
}

pb::AuditOutcome OutcomeOf(pb::ToolResultStatus status) {
  switch (status) {
    case pb::TOOL_RESULT_STATUS_SUCCEEDED:
      return pb::AUDIT_OUTCOME_SUCCEEDED;
    case pb::TOOL_RESULT_STATUS_DENIED:
      return pb::AUDIT_OUTCOME_DENIED;
    default:
      return pb::AUDIT_OUTCOME_FAILED;
  }
}

void SetString(google::protobuf::Struct* metadata, const std::string& key, std::string value) {
  (*metadata->mutable_fields())[key].set_string_value(std::move(value));
}

}  // namespace

pb::AuditEvent ToolInvokedEvent(const pb::AccessContext& context, absl::Time at,
                                const pb::ToolCall& call, const ToolInvokedFacts& facts) {
  pb::AuditEvent event =
      Stamped(context, TimestampOf(at), pb::AUDIT_EVENT_TYPE_TOOL_INVOKED, OutcomeOf(facts.status));
  event.set_operation_id(call.id());
  event.set_tool(call.tool());
  event.set_source(facts.source);
  if (!facts.reason.empty()) event.set_reason(facts.reason);
  if (!facts.cause.empty()) event.set_cause(facts.cause);
  if (facts.fail_closed) event.set_fail_closed(true);
  if (!facts.grant_id.empty()) event.set_grant_id(facts.grant_id);
  if (facts.requirement.has_value()) {
    *event.mutable_resource() = facts.requirement->resource();
    event.set_action(facts.requirement->action());
  }
  if (!facts.authority_hash.empty()) event.set_authority_hash(facts.authority_hash);
  if (!facts.catalog_hash.empty()) {
    SetString(event.mutable_metadata(), "catalogHash", facts.catalog_hash);
  }
  return event;
}

pb::AuditEvent CatalogListedEvent(const pb::AccessContext& context, absl::Time at,
                                  const CatalogListedFacts& facts) {
  pb::AuditEvent event =
      Stamped(context, TimestampOf(at), pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED, facts.outcome);
  event.set_source(pb::AUDIT_SOURCE_KERNEL);
  if (!facts.authority_hash.empty()) event.set_authority_hash(facts.authority_hash);
  if (!facts.reason.empty()) event.set_reason(facts.reason);
  if (facts.fail_closed) event.set_fail_closed(true);
  google::protobuf::Struct* metadata = event.mutable_metadata();
  SetString(metadata, "catalogHash", facts.catalog_hash);
  google::protobuf::ListValue* namespaces =
      (*metadata->mutable_fields())["enabledNamespaces"].mutable_list_value();
  for (const std::string& name : context.enabled_tool_namespaces()) {
    namespaces->add_values()->set_string_value(name);
  }
  if (facts.host_policy_version.has_value()) {
    SetString(metadata, "hostPolicyVersion", *facts.host_policy_version);
  }
  (*metadata->mutable_fields())["withheldCount"].set_number_value(facts.withheld_count);
  return event;
}

pb::AuditEvent DiscoveryDeniedEvent(const pb::AccessContext& context, absl::Time at,
                                    const pb::CapabilityRequirement& ceiling,
                                    absl::string_view call_id, absl::string_view tool,
                                    absl::string_view reason, bool fail_closed,
                                    absl::string_view authority_hash) {
  pb::AuditEvent event =
      Stamped(context, TimestampOf(at), pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,
              pb::AUDIT_OUTCOME_DENIED);
  *event.mutable_resource() = ceiling.resource();
  event.set_action(ceiling.action());
  event.set_operation_id(std::string(call_id));
  event.set_tool(std::string(tool));
  event.set_reason(std::string(reason));
  event.set_consumed(false);
  if (fail_closed) event.set_fail_closed(true);
  if (!authority_hash.empty()) event.set_authority_hash(std::string(authority_hash));
  SetString(event.mutable_metadata(), "check", "discovery");
  return event;
}

pb::AuditEvent TurnEndedEvent(const pb::AccessContext& context, const pb::ExecutionResult& result,
                              std::optional<pb::EndedBy> ended_by, bool fail_closed) {
  pb::AuditOutcome outcome = pb::AUDIT_OUTCOME_FAILED;
  std::string reason;
  switch (result.status()) {
    case pb::EXECUTION_STATUS_SUCCEEDED:
      outcome = pb::AUDIT_OUTCOME_SUCCEEDED;
      break;
    case pb::EXECUTION_STATUS_DENIED:
      outcome = pb::AUDIT_OUTCOME_DENIED;
      reason = result.error().code();
      break;
    case pb::EXECUTION_STATUS_ESCALATED:
      outcome = pb::AUDIT_OUTCOME_ESCALATED;
      reason = std::string(capability::kEscalationRequested);
      break;
    case pb::EXECUTION_STATUS_CANCELLED:
      reason = result.has_error() ? result.error().code() : std::string(capability::kTurnCancelled);
      break;
    default:
      reason = result.error().code();
      break;
  }
  pb::AuditEvent event =
      Stamped(context, result.completed_at(), pb::AUDIT_EVENT_TYPE_TURN_ENDED, outcome);
  event.set_operation_id(result.execution_id());
  if (!reason.empty()) event.set_reason(reason);
  if (outcome == pb::AUDIT_OUTCOME_FAILED && ended_by.has_value()) event.set_ended_by(*ended_by);
  if (fail_closed) event.set_fail_closed(true);
  // A turn whose MCP escalation latch engaged (seed ADR 0018; docs/adr/0018): what the harness
  // did after it asked — its own outcome and the calls refused escalation_pending — is part of
  // the tamper-evident record. Bounded facts only: never the reason text the harness gave.
  const auto& metadata = result.metadata().fields();
  if (metadata.contains("escalationAsked")) {
    for (const char* key : {"harnessOutcome", "harnessErrorCode", "callsAfterEscalation",
                            "escalationRequirement", "escalationRecorded"}) {
      if (auto it = metadata.find(key); it != metadata.end()) {
        (*event.mutable_metadata()->mutable_fields())[key] = it->second;
      }
    }
  }
  return event;
}

pb::AuditEvent StampedEvent(const pb::AccessContext& context, absl::Time at,
                            pb::AuditEventType type, pb::AuditOutcome outcome) {
  return Stamped(context, TimestampOf(at), type, outcome);
}

}  // namespace sharedos::envelope::core
