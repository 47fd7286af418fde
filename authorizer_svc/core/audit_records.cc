#include "authorizer_svc/core/audit_records.h"

#include <utility>

#include "absl/strings/str_join.h"
#include "capability/reason_codes.h"
#include "google/protobuf/struct.pb.h"

namespace sharedos::authorizer::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;

Value& Field(pb::AuditEvent& event, const char* key) {
  return (*event.mutable_metadata()->mutable_fields())[key];
}

void Stamp(const pb::AccessContext& context, pb::AuditEvent& event) {
  event.set_trace_id(context.trace_id());
  event.set_namespace_id(context.namespace_id());
  *event.mutable_actor() = context.actor();
  *event.mutable_authority() = context.authority();
  *event.mutable_owner() = context.owner();
  event.set_purpose(context.purpose());
}

absl::string_view PolicyName(HostPolicyState::Status status) {
  switch (status) {
    case HostPolicyState::Status::kLoaded:
      return "loaded";
    case HostPolicyState::Status::kUnavailable:
      return "unavailable";
    case HostPolicyState::Status::kAbsent:
      break;
  }
  return "absent";
}

Value AddressValue(const pb::Address& address) {
  Value value;
  auto& fields = *value.mutable_struct_value()->mutable_fields();
  switch (address.kind_case()) {
    case pb::Address::kHumanUserId:
      fields["kind"].set_string_value("human");
      fields["userId"].set_string_value(address.human_user_id());
      break;
    case pb::Address::kAgentId:
      fields["kind"].set_string_value("agent");
      fields["agentId"].set_string_value(address.agent_id());
      break;
    case pb::Address::kGroupConversationId:
      fields["kind"].set_string_value("group");
      fields["conversationId"].set_string_value(address.group_conversation_id());
      break;
    case pb::Address::kServiceId:
      fields["kind"].set_string_value("service");
      fields["serviceId"].set_string_value(address.service_id());
      break;
    case pb::Address::KIND_NOT_SET:
      break;
  }
  return value;
}

}  // namespace

pb::AuditEvent AuthorityResolvedEvent(const pb::AccessContext& context, absl::string_view turn_id,
                                      const ResolutionFacts& facts) {
  pb::AuditEvent event;
  event.set_type(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED);
  Stamp(context, event);
  *event.mutable_at() = context.now();
  if (facts.snapshot != nullptr) {
    event.set_outcome(pb::AUDIT_OUTCOME_SUCCEEDED);
    event.set_authority_hash(facts.snapshot->hash);
    auto* ids = Field(event, "grantIds").mutable_list_value();
    for (const std::string& id : facts.snapshot->grant_ids) ids->add_values()->set_string_value(id);
    Field(event, "grantCount").set_number_value(facts.snapshot->grant_count);
  } else {
    event.set_outcome(pb::AUDIT_OUTCOME_FAILED);
    event.set_reason(std::string(capability::Name(capability::ReasonCode::kAuthorityUnavailable)));
    event.set_fail_closed(true);
    Field(event, "authority").set_string_value(std::string(capability::Name(facts.code)));
  }
  if (facts.host_policy.has_value()) {
    Field(event, "hostCeiling")
        .set_string_value(*facts.host_policy == HostPolicyState::Status::kAbsent ? "absent"
                                                                                 : "installed");
    Field(event, "hostPolicy").set_string_value(std::string(PolicyName(*facts.host_policy)));
  }
  if (!turn_id.empty()) Field(event, "turnId").set_string_value(std::string(turn_id));
  return event;
}

Verdict VerdictOf(AuthorizationResult result) {
  Verdict verdict;
  verdict.decision = result.ToDecision();
  verdict.fail_closed = result.fail_closed();
  verdict.consumed = result.consumed;
  verdict.explanation = std::move(result.explanation);
  return verdict;
}

Verdict FailClosedVerdict(absl::string_view code,
                          std::optional<capability::AuthorityCode> authority) {
  Verdict verdict;
  verdict.decision.set_allowed(false);
  verdict.decision.set_reason_code(std::string(code));
  if (authority.has_value()) {
    auto& object = *(*verdict.decision.mutable_metadata()->mutable_fields())["authority"]
                        .mutable_struct_value()
                        ->mutable_fields();
    object["code"].set_string_value(std::string(capability::Name(*authority)));
  }
  verdict.fail_closed = true;
  return verdict;
}

pb::AuditEvent AuthorizationCheckedEvent(const CheckFacts& facts, const Verdict& verdict) {
  pb::AuditEvent event;
  event.set_type(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  const bool allowed = verdict.decision.allowed();
  event.set_outcome(allowed ? pb::AUDIT_OUTCOME_ALLOWED : pb::AUDIT_OUTCOME_DENIED);
  Stamp(*facts.context, event);
  *event.mutable_at() = facts.at;
  *event.mutable_resource() = facts.requirement->resource();
  event.set_action(facts.requirement->action());
  event.set_authority_hash(std::string(facts.authority_hash));
  event.set_operation_id(std::string(facts.operation_id));
  event.set_tool(std::string(facts.tool));
  event.set_grant_id(verdict.decision.matched_grant_id());
  if (!allowed) event.set_reason(verdict.decision.reason_code());
  event.set_consumed(verdict.consumed);
  if (verdict.fail_closed) event.set_fail_closed(true);
  event.set_source(pb::AUDIT_SOURCE_KERNEL);
  if (verdict.decision.has_metadata()) *event.mutable_metadata() = verdict.decision.metadata();
  if (verdict.explanation.has_value()) {
    const AuthorizationExplanation& explanation = *verdict.explanation;
    Field(event, "grantsResolved").set_number_value(explanation.grants_resolved);
    auto* rejected = Field(event, "rejectedGrants").mutable_list_value();
    for (const GrantRejection& rejection : explanation.rejected_grants) {
      auto& entry = *rejected->add_values()->mutable_struct_value()->mutable_fields();
      entry["grantId"].set_string_value(rejection.grant_id);
      entry["reason"].set_string_value(std::string(capability::Name(rejection.reason)));
    }
    if (explanation.missing_dependency != capability::MissingDependency::kNone) {
      Field(event, "missingDependency")
          .set_string_value(std::string(capability::Name(explanation.missing_dependency)));
    }
  }
  if (!facts.usage_state.empty()) {
    Field(event, "usageState").set_string_value(std::string(facts.usage_state));
  }
  if (!facts.released_grant_id.empty()) {
    Field(event, "releasedGrantId").set_string_value(std::string(facts.released_grant_id));
  }
  return event;
}

pb::AuditEvent EscalationRequestedEvent(const pb::AccessContext& context,
                                        const pb::Escalation& escalation,
                                        absl::string_view execution_id,
                                        absl::string_view escalation_id) {
  pb::AuditEvent event;
  event.set_type(pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED);
  event.set_outcome(pb::AUDIT_OUTCOME_ESCALATED);
  Stamp(context, event);
  *event.mutable_at() = escalation.requested_at();
  event.set_reason("escalation_requested");
  if (escalation.has_requested_authority()) {
    *event.mutable_requested_authority() = escalation.requested_authority();
  }
  Field(event, "detail").set_string_value(escalation.reason());
  Field(event, "reviewer") = AddressValue(escalation.reviewer());
  Field(event, "reviewerAssumed").set_bool_value(true);
  Field(event, "resolution").set_string_value("pending");
  Field(event, "executionId").set_string_value(std::string(execution_id));
  Field(event, "escalationId").set_string_value(std::string(escalation_id));
  return event;
}

}  // namespace sharedos::authorizer::core
