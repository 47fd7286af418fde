#include "common/validation/protocol.h"

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/unknown_fields.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace sharedos::common::validation {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::RepeatedPtrField;
using ::google::protobuf::Struct;
using ::google::protobuf::Timestamp;
using ::google::protobuf::Value;

// ---- Helpers ----

absl::Status Missing(absl::string_view path) {
  return InvalidArgumentAt(path, "required");
}

// A required enum: neither X_UNSPECIFIED nor a number this build does not know
// (proto3 keeps unknown enum numbers in the field rather than in the unknown
// field set).
absl::Status CheckEnum(int value, bool (*is_valid)(int),
                       absl::string_view path) {
  if (value == 0) return InvalidArgumentAt(path, "unspecified");
  if (!is_valid(value)) {
    return InvalidArgumentAt(path, absl::StrCat("unknown value ", value));
  }
  return absl::OkStatus();
}

// `check(message)` when `message` is not null, "required" otherwise. Callers
// pass `has_x() ? mutable_x() : nullptr` so that checking never creates an
// absent field.
template <typename T>
absl::Status Required(T* message, absl::Status (*check)(T*, absl::string_view),
                      absl::string_view path) {
  if (message == nullptr) return Missing(path);
  return check(message, path);
}

// `check(message)` when `message` is not null, OK otherwise.
template <typename T>
absl::Status Optional(T* message, absl::Status (*check)(T*, absl::string_view),
                      absl::string_view path) {
  if (message == nullptr) return absl::OkStatus();
  return check(message, path);
}

absl::Status RequiredTimestamp(bool has, const Timestamp& value,
                               absl::string_view path) {
  if (!has) return Missing(path);
  return CheckTimestamp(value, path);
}

absl::Status OptionalTimestamp(bool has, const Timestamp& value,
                               absl::string_view path) {
  if (!has) return absl::OkStatus();
  return CheckTimestamp(value, path);
}

absl::Status RequiredJsonObject(bool has, const Struct& value,
                                absl::string_view path) {
  if (!has) return Missing(path);
  return CheckJsonObject(value, path);
}

absl::Status OptionalJsonObject(bool has, const Struct& value,
                                absl::string_view path) {
  if (!has) return absl::OkStatus();
  return CheckJsonObject(value, path);
}

absl::Status RequiredJsonValue(bool has, const Value& value,
                               absl::string_view path) {
  if (!has) return Missing(path);
  return CheckJsonValue(value, path);
}

// count ≤ max (min 0), then `check` on each element.
absl::Status CheckIdentifiers(RepeatedPtrField<std::string>* values,
                              size_t max_count, absl::string_view path) {
  RETURN_IF_ERROR(CheckCount(values->size(), 0, max_count, path));
  for (int i = 0; i < values->size(); ++i) {
    RETURN_IF_ERROR(CheckIdentifier(values->Mutable(i), IndexPath(path, i)));
  }
  return absl::OkStatus();
}

absl::Status CheckPath(const RepeatedPtrField<std::string>& segments,
                       absl::string_view path) {
  RETURN_IF_ERROR(CheckCount(segments.size(), 0, kMaxPathSegments, path));
  for (int i = 0; i < segments.size(); ++i) {
    RETURN_IF_ERROR(CheckPathSegment(segments[i], IndexPath(path, i)));
  }
  return absl::OkStatus();
}

absl::Status CheckActions(RepeatedPtrField<std::string>* actions,
                          absl::string_view path) {
  RETURN_IF_ERROR(CheckCount(actions->size(), 1, kMaxActions, path));
  for (int i = 0; i < actions->size(); ++i) {
    RETURN_IF_ERROR(CheckAction(actions->Mutable(i), IndexPath(path, i)));
  }
  return absl::OkStatus();
}

// The outcome oneof must hold `expected` (a field name; empty = nothing
// allowed, or anything absent when `optional`). `actual` is the set field's
// name, empty when none is set.
absl::Status CheckOutcome(absl::string_view actual, absl::string_view expected,
                          bool optional, absl::string_view status_name,
                          absl::string_view path) {
  if (actual == expected) return absl::OkStatus();
  if (actual.empty()) {
    if (optional) return absl::OkStatus();
    return InvalidArgumentAt(
        FieldPath(path, expected),
        absl::StrCat("required when status is ", status_name));
  }
  return InvalidArgumentAt(
      FieldPath(path, actual),
      absl::StrCat("not allowed when status is ", status_name));
}

// ---- common.proto ----

absl::Status CheckAddress(pb::Address* address, absl::string_view path) {
  switch (address->kind_case()) {
    case pb::Address::kHumanUserId:
      return CheckIdentifier(address->mutable_human_user_id(),
                             FieldPath(path, "human_user_id"));
    case pb::Address::kAgentId:
      return CheckIdentifier(address->mutable_agent_id(),
                             FieldPath(path, "agent_id"));
    case pb::Address::kGroupConversationId:
      return CheckIdentifier(address->mutable_group_conversation_id(),
                             FieldPath(path, "group_conversation_id"));
    case pb::Address::kServiceId:
      return CheckIdentifier(address->mutable_service_id(),
                             FieldPath(path, "service_id"));
    case pb::Address::KIND_NOT_SET:
      break;
  }
  return InvalidArgumentAt(path, "no kind set");
}

absl::Status CheckResourceRef(pb::ResourceRef* ref, absl::string_view path) {
  RETURN_IF_ERROR(
      CheckIdentifier(ref->mutable_namespace_(), FieldPath(path, "namespace")));
  RETURN_IF_ERROR(CheckPath(ref->path(), FieldPath(path, "path")));
  return Optional(ref->has_owner() ? ref->mutable_owner() : nullptr,
                  CheckAddress, FieldPath(path, "owner"));
}

absl::Status CheckCapability(pb::Capability* capability,
                             absl::string_view path) {
  RETURN_IF_ERROR(Required(
      capability->has_resource() ? capability->mutable_resource() : nullptr,
      CheckResourceRef, FieldPath(path, "resource")));
  RETURN_IF_ERROR(
      CheckActions(capability->mutable_actions(), FieldPath(path, "actions")));
  return CheckEnum(capability->scope(), pb::Scope_IsValid,
                   FieldPath(path, "scope"));
}

absl::Status CheckCapabilities(RepeatedPtrField<pb::Capability>* capabilities,
                               absl::string_view path) {
  RETURN_IF_ERROR(CheckCount(capabilities->size(), 1, kMaxCapabilities, path));
  for (int i = 0; i < capabilities->size(); ++i) {
    RETURN_IF_ERROR(
        CheckCapability(capabilities->Mutable(i), IndexPath(path, i)));
  }
  return absl::OkStatus();
}

absl::Status CheckCapabilityConstraints(pb::CapabilityConstraints* constraints,
                                        absl::string_view path) {
  // A repeated field cannot be absent: no purposes means "unconstrained".
  const std::string purposes = FieldPath(path, "purposes");
  RETURN_IF_ERROR(
      CheckCount(constraints->purposes_size(), 0, kMaxPurposes, purposes));
  for (int i = 0; i < constraints->purposes_size(); ++i) {
    RETURN_IF_ERROR(
        CheckPurpose(constraints->mutable_purposes(i), IndexPath(purposes, i)));
  }
  RETURN_IF_ERROR(OptionalTimestamp(constraints->has_not_before(),
                                    constraints->not_before(),
                                    FieldPath(path, "not_before")));
  RETURN_IF_ERROR(OptionalTimestamp(constraints->has_expires_at(),
                                    constraints->expires_at(),
                                    FieldPath(path, "expires_at")));
  if (constraints->has_not_before() && constraints->has_expires_at()) {
    const Timestamp& from = constraints->not_before();
    const Timestamp& to = constraints->expires_at();
    if (from.seconds() > to.seconds() ||
        (from.seconds() == to.seconds() && from.nanos() > to.nanos())) {
      return InvalidArgumentAt(FieldPath(path, "not_before"),
                               "later than expires_at");
    }
  }
  if (constraints->has_max_uses() && constraints->max_uses() <= 0) {
    return InvalidArgumentAt(FieldPath(path, "max_uses"), "must be positive");
  }
  if (constraints->has_delegation_depth() &&
      constraints->delegation_depth() < 0) {
    return InvalidArgumentAt(FieldPath(path, "delegation_depth"),
                             "must be non-negative");
  }
  return absl::OkStatus();
}

absl::Status CheckCapabilityRequirement(pb::CapabilityRequirement* requirement,
                                        absl::string_view path) {
  RETURN_IF_ERROR(Required(
      requirement->has_resource() ? requirement->mutable_resource() : nullptr,
      CheckResourceRef, FieldPath(path, "resource")));
  return CheckAction(requirement->mutable_action(), FieldPath(path, "action"));
}

absl::Status CheckProtocolError(pb::ProtocolError* error,
                                absl::string_view path) {
  RETURN_IF_ERROR(
      CheckIdentifier(error->mutable_code(), FieldPath(path, "code")));
  RETURN_IF_ERROR(CheckString(error->message(), 1, kMaxErrorMessageLength,
                              FieldPath(path, "message")));
  return OptionalJsonObject(error->has_details(), error->details(),
                            FieldPath(path, "details"));
}

// ---- context.proto ----

absl::Status CheckAccessContext(pb::AccessContext* context,
                                absl::string_view path) {
  RETURN_IF_ERROR(CheckIdentifier(context->mutable_namespace_id(),
                                  FieldPath(path, "namespace_id")));
  RETURN_IF_ERROR(
      Required(context->has_actor() ? context->mutable_actor() : nullptr,
               CheckAddress, FieldPath(path, "actor")));
  RETURN_IF_ERROR(Required(
      context->has_authority() ? context->mutable_authority() : nullptr,
      CheckAddress, FieldPath(path, "authority")));
  RETURN_IF_ERROR(
      Required(context->has_owner() ? context->mutable_owner() : nullptr,
               CheckAddress, FieldPath(path, "owner")));
  RETURN_IF_ERROR(
      CheckPurpose(context->mutable_purpose(), FieldPath(path, "purpose")));
  RETURN_IF_ERROR(CheckIdentifier(context->mutable_trace_id(),
                                  FieldPath(path, "trace_id")));
  const std::string enabled = FieldPath(path, "enabled_tool_namespaces");
  RETURN_IF_ERROR(CheckIdentifiers(context->mutable_enabled_tool_namespaces(),
                                   kMaxEnabledToolNamespaces, enabled));
  absl::flat_hash_set<absl::string_view> seen;
  for (int i = 0; i < context->enabled_tool_namespaces_size(); ++i) {
    const std::string& name = context->enabled_tool_namespaces(i);
    if (!seen.insert(name).second) {
      return InvalidArgumentAt(IndexPath(enabled, i),
                               absl::StrCat("duplicate \"", name, "\""));
    }
  }
  return RequiredTimestamp(context->has_now(), context->now(),
                           FieldPath(path, "now"));
}

// ---- grant.proto ----

absl::Status CheckCapabilityGrant(pb::CapabilityGrant* grant,
                                  absl::string_view path) {
  RETURN_IF_ERROR(CheckIdentifier(grant->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(CheckIdentifier(grant->mutable_namespace_id(),
                                  FieldPath(path, "namespace_id")));
  RETURN_IF_ERROR(
      Required(grant->has_subject() ? grant->mutable_subject() : nullptr,
               CheckAddress, FieldPath(path, "subject")));
  RETURN_IF_ERROR(
      Required(grant->has_issuer() ? grant->mutable_issuer() : nullptr,
               CheckAddress, FieldPath(path, "issuer")));
  RETURN_IF_ERROR(CheckCapabilities(grant->mutable_capabilities(),
                                    FieldPath(path, "capabilities")));
  RETURN_IF_ERROR(Required(
      grant->has_constraints() ? grant->mutable_constraints() : nullptr,
      CheckCapabilityConstraints, FieldPath(path, "constraints")));
  RETURN_IF_ERROR(RequiredTimestamp(grant->has_issued_at(), grant->issued_at(),
                                    FieldPath(path, "issued_at")));
  RETURN_IF_ERROR(OptionalTimestamp(grant->has_revoked_at(),
                                    grant->revoked_at(),
                                    FieldPath(path, "revoked_at")));
  const std::string parent = FieldPath(path, "parent_grant_id");
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(grant->mutable_parent_grant_id(), parent));
  if (!grant->parent_grant_id().empty() &&
      grant->parent_grant_id() == grant->id()) {
    return InvalidArgumentAt(parent, "must differ from id");
  }
  return OptionalJsonObject(grant->has_metadata(), grant->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckCapabilityRequest(pb::CapabilityRequest* request,
                                    absl::string_view path) {
  RETURN_IF_ERROR(
      CheckIdentifier(request->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(CheckIdentifier(request->mutable_namespace_id(),
                                  FieldPath(path, "namespace_id")));
  RETURN_IF_ERROR(Required(
      request->has_requester() ? request->mutable_requester() : nullptr,
      CheckAddress, FieldPath(path, "requester")));
  RETURN_IF_ERROR(
      Required(request->has_owner() ? request->mutable_owner() : nullptr,
               CheckAddress, FieldPath(path, "owner")));
  RETURN_IF_ERROR(CheckCapabilities(request->mutable_capabilities(),
                                    FieldPath(path, "capabilities")));
  RETURN_IF_ERROR(
      CheckPurpose(request->mutable_purpose(), FieldPath(path, "purpose")));
  RETURN_IF_ERROR(Optional(
      request->has_constraints() ? request->mutable_constraints() : nullptr,
      CheckCapabilityConstraints, FieldPath(path, "constraints")));
  RETURN_IF_ERROR(RequiredTimestamp(request->has_requested_at(),
                                    request->requested_at(),
                                    FieldPath(path, "requested_at")));
  return OptionalJsonObject(request->has_metadata(), request->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckAuthorizationDecision(pb::AuthorizationDecision* decision,
                                        absl::string_view path) {
  RETURN_IF_ERROR(CheckIdentifier(decision->mutable_reason_code(),
                                  FieldPath(path, "reason_code")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(decision->mutable_matched_grant_id(),
                                          FieldPath(path, "matched_grant_id")));
  RETURN_IF_ERROR(Optional(decision->has_required_authority()
                               ? decision->mutable_required_authority()
                               : nullptr,
                           CheckCapabilityRequest,
                           FieldPath(path, "required_authority")));
  return OptionalJsonObject(decision->has_metadata(), decision->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckEscalation(pb::Escalation* escalation,
                             absl::string_view path) {
  RETURN_IF_ERROR(CheckTrimmedString(escalation->mutable_reason(),
                                     kMaxEscalationReasonLength,
                                     FieldPath(path, "reason")));
  RETURN_IF_ERROR(Required(
      escalation->has_reviewer() ? escalation->mutable_reviewer() : nullptr,
      CheckAddress, FieldPath(path, "reviewer")));
  RETURN_IF_ERROR(RequiredTimestamp(escalation->has_requested_at(),
                                    escalation->requested_at(),
                                    FieldPath(path, "requested_at")));
  RETURN_IF_ERROR(Optional(escalation->has_requested_authority()
                               ? escalation->mutable_requested_authority()
                               : nullptr,
                           CheckCapabilityRequest,
                           FieldPath(path, "requested_authority")));
  return CheckEnum(escalation->status(), pb::EscalationStatus_IsValid,
                   FieldPath(path, "status"));
}

absl::Status CheckResourceReach(pb::ResourceReach* reach,
                                absl::string_view path) {
  RETURN_IF_ERROR(CheckIdentifier(reach->mutable_namespace_(),
                                  FieldPath(path, "namespace")));
  RETURN_IF_ERROR(CheckPath(reach->path(), FieldPath(path, "path")));
  RETURN_IF_ERROR(
      CheckActions(reach->mutable_actions(), FieldPath(path, "actions")));
  return CheckEnum(reach->scope(), pb::Scope_IsValid, FieldPath(path, "scope"));
}

absl::Status CheckReachResult(pb::ReachResult* result, absl::string_view path) {
  RETURN_IF_ERROR(CheckEnum(result->status(), pb::ReachStatus_IsValid,
                            FieldPath(path, "status")));
  const std::string reach = FieldPath(path, "reach");
  const std::string reason = FieldPath(path, "reason_code");
  if (result->status() == pb::REACH_STATUS_COMPUTED) {
    RETURN_IF_ERROR(
        CheckCount(result->reach_size(), 0, kMaxReachEntries, reach));
    for (int i = 0; i < result->reach_size(); ++i) {
      RETURN_IF_ERROR(
          CheckResourceReach(result->mutable_reach(i), IndexPath(reach, i)));
    }
    if (!result->reason_code().empty()) {
      return InvalidArgumentAt(reason, "not allowed when status is computed");
    }
    return absl::OkStatus();
  }
  if (result->reach_size() > 0) {
    return InvalidArgumentAt(reach, "not allowed when status is unavailable");
  }
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_reason_code(), reason));
  if (result->reason_code() != "authority_unavailable" &&
      result->reason_code() != "usage_store_unavailable") {
    return InvalidArgumentAt(
        reason, "must be authority_unavailable or usage_store_unavailable");
  }
  return absl::OkStatus();
}

// ---- message.proto ----

absl::Status CheckMessageProvenance(pb::MessageProvenance* provenance,
                                    absl::string_view path) {
  RETURN_IF_ERROR(
      CheckIdentifier(provenance->mutable_source(), FieldPath(path, "source")));
  RETURN_IF_ERROR(CheckIdentifiers(provenance->mutable_parent_ids(),
                                   kMaxParentIds,
                                   FieldPath(path, "parent_ids")));
  return OptionalJsonObject(provenance->has_metadata(), provenance->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckMessageEnvelope(pb::MessageEnvelope* envelope,
                                  absl::string_view path) {
  RETURN_IF_ERROR(
      CheckProtocolVersion(envelope->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(
      CheckIdentifier(envelope->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(
      Required(envelope->has_sender() ? envelope->mutable_sender() : nullptr,
               CheckAddress, FieldPath(path, "sender")));
  RETURN_IF_ERROR(Required(
      envelope->has_receiver() ? envelope->mutable_receiver() : nullptr,
      CheckAddress, FieldPath(path, "receiver")));
  RETURN_IF_ERROR(
      CheckPurpose(envelope->mutable_purpose(), FieldPath(path, "purpose")));
  RETURN_IF_ERROR(RequiredJsonValue(envelope->has_payload(),
                                    envelope->payload(),
                                    FieldPath(path, "payload")));
  RETURN_IF_ERROR(CheckIdentifier(envelope->mutable_trace_id(),
                                  FieldPath(path, "trace_id")));
  RETURN_IF_ERROR(RequiredTimestamp(envelope->has_created_at(),
                                    envelope->created_at(),
                                    FieldPath(path, "created_at")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(envelope->mutable_reply_to(),
                                          FieldPath(path, "reply_to")));
  return Optional(
      envelope->has_provenance() ? envelope->mutable_provenance() : nullptr,
      CheckMessageProvenance, FieldPath(path, "provenance"));
}

// ---- tool.proto ----

absl::Status CheckToolDefinition(pb::ToolDefinition* tool,
                                 absl::string_view path) {
  RETURN_IF_ERROR(CheckToolName(tool->name(), FieldPath(path, "name")));
  RETURN_IF_ERROR(CheckString(tool->description(), 1, kMaxToolDescriptionLength,
                              FieldPath(path, "description")));
  RETURN_IF_ERROR(CheckIdentifier(tool->mutable_namespace_(),
                                  FieldPath(path, "namespace")));
  RETURN_IF_ERROR(
      CheckIdentifier(tool->mutable_source(), FieldPath(path, "source")));
  RETURN_IF_ERROR(CheckEnum(tool->read_write(), pb::ReadWrite_IsValid,
                            FieldPath(path, "read_write")));
  RETURN_IF_ERROR(RequiredJsonObject(tool->has_input_schema(),
                                     tool->input_schema(),
                                     FieldPath(path, "input_schema")));
  RETURN_IF_ERROR(OptionalJsonObject(tool->has_output_schema(),
                                     tool->output_schema(),
                                     FieldPath(path, "output_schema")));
  RETURN_IF_ERROR(Required(
      tool->has_required_capability() ? tool->mutable_required_capability()
                                      : nullptr,
      CheckCapabilityRequirement, FieldPath(path, "required_capability")));
  const pb::ToolAnnotations& annotations = tool->annotations();
  const std::string annotations_path = FieldPath(path, "annotations");
  if (tool->read_write() == pb::READ_WRITE_READ && annotations.destructive()) {
    return InvalidArgumentAt(FieldPath(annotations_path, "destructive"),
                             "a read tool cannot be destructive");
  }
  if (tool->read_write() == pb::READ_WRITE_WRITE && annotations.read_only()) {
    return InvalidArgumentAt(FieldPath(annotations_path, "read_only"),
                             "a write tool cannot be read_only");
  }
  return OptionalJsonObject(tool->has_metadata(), tool->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckPublishedToolDefinition(pb::PublishedToolDefinition* tool,
                                          absl::string_view path) {
  RETURN_IF_ERROR(CheckToolName(tool->name(), FieldPath(path, "name")));
  RETURN_IF_ERROR(CheckString(tool->description(), 1, kMaxToolDescriptionLength,
                              FieldPath(path, "description")));
  RETURN_IF_ERROR(RequiredJsonObject(tool->has_input_schema(),
                                     tool->input_schema(),
                                     FieldPath(path, "input_schema")));
  RETURN_IF_ERROR(OptionalJsonObject(tool->has_output_schema(),
                                     tool->output_schema(),
                                     FieldPath(path, "output_schema")));
  if (tool->has_metadata()) {
    const std::string metadata = FieldPath(path, "metadata");
    RETURN_IF_ERROR(
        CheckOptionalIdentifier(tool->mutable_metadata()->mutable_namespace_(),
                                FieldPath(metadata, "namespace")));
    RETURN_IF_ERROR(
        CheckOptionalIdentifier(tool->mutable_metadata()->mutable_source(),
                                FieldPath(metadata, "source")));
  }
  return absl::OkStatus();
}

absl::Status CheckToolCatalog(pb::ToolCatalog* catalog,
                              absl::string_view path) {
  RETURN_IF_ERROR(
      CheckProtocolVersion(catalog->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckIdentifier(catalog->mutable_execution_id(),
                                  FieldPath(path, "execution_id")));
  RETURN_IF_ERROR(CheckContentHash(catalog->catalog_hash(),
                                   FieldPath(path, "catalog_hash")));
  const std::string tools = FieldPath(path, "tools");
  RETURN_IF_ERROR(
      CheckCount(catalog->tools_size(), 0, kMaxCatalogTools, tools));
  for (int i = 0; i < catalog->tools_size(); ++i) {
    RETURN_IF_ERROR(CheckPublishedToolDefinition(catalog->mutable_tools(i),
                                                 IndexPath(tools, i)));
  }
  // Tool names are ASCII, so byte order is UTF-16 code-unit order.
  for (int i = 1; i < catalog->tools_size(); ++i) {
    const std::string& previous = catalog->tools(i - 1).name();
    const std::string& name = catalog->tools(i).name();
    if (name == previous) {
      return InvalidArgumentAt(FieldPath(IndexPath(tools, i), "name"),
                               absl::StrCat("duplicate \"", name, "\""));
    }
    if (name < previous) {
      return InvalidArgumentAt(
          FieldPath(IndexPath(tools, i), "name"),
          absl::StrCat("not sorted (\"", name, "\" after \"", previous, "\")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckToolCall(pb::ToolCall* call, absl::string_view path) {
  RETURN_IF_ERROR(CheckIdentifier(call->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(
      CheckIdentifier(call->mutable_tool(), FieldPath(path, "tool")));
  RETURN_IF_ERROR(RequiredJsonObject(call->has_arguments(), call->arguments(),
                                     FieldPath(path, "arguments")));
  RETURN_IF_ERROR(
      CheckIdentifier(call->mutable_trace_id(), FieldPath(path, "trace_id")));
  return RequiredTimestamp(call->has_requested_at(), call->requested_at(),
                           FieldPath(path, "requested_at"));
}

absl::Status CheckToolResult(pb::ToolResult* result, absl::string_view path) {
  RETURN_IF_ERROR(
      CheckIdentifier(result->mutable_call_id(), FieldPath(path, "call_id")));
  RETURN_IF_ERROR(
      CheckIdentifier(result->mutable_tool(), FieldPath(path, "tool")));
  RETURN_IF_ERROR(CheckEnum(result->status(), pb::ToolResultStatus_IsValid,
                            FieldPath(path, "status")));
  absl::string_view actual;
  switch (result->outcome_case()) {
    case pb::ToolResult::kOutput:
      actual = "output";
      break;
    case pb::ToolResult::kError:
      actual = "error";
      break;
    case pb::ToolResult::OUTCOME_NOT_SET:
      break;
  }
  const absl::string_view expected =
      result->status() == pb::TOOL_RESULT_STATUS_SUCCEEDED ? "output" : "error";
  RETURN_IF_ERROR(CheckOutcome(actual, expected, /*optional=*/false,
                               ToolResultStatusName(result->status()), path));
  if (result->has_output()) {
    RETURN_IF_ERROR(
        CheckJsonValue(result->output(), FieldPath(path, "output")));
  }
  if (result->has_error()) {
    RETURN_IF_ERROR(
        CheckProtocolError(result->mutable_error(), FieldPath(path, "error")));
  }
  RETURN_IF_ERROR(RequiredTimestamp(result->has_completed_at(),
                                    result->completed_at(),
                                    FieldPath(path, "completed_at")));
  return OptionalJsonObject(result->has_metadata(), result->metadata(),
                            FieldPath(path, "metadata"));
}

// ---- execution.proto ----

absl::Status CheckRange(bool has, int64_t value, int64_t max,
                        absl::string_view path) {
  if (has && (value < 1 || value > max)) {
    return InvalidArgumentAt(path, absl::StrCat("must be in 1..", max));
  }
  return absl::OkStatus();
}

absl::Status CheckExecutionOptions(pb::ExecutionOptions* options,
                                   absl::string_view path) {
  RETURN_IF_ERROR(CheckRange(options->has_max_steps(), options->max_steps(),
                             kMaxSteps, FieldPath(path, "max_steps")));
  RETURN_IF_ERROR(CheckRange(options->has_max_tool_calls(),
                             options->max_tool_calls(), kMaxToolCalls,
                             FieldPath(path, "max_tool_calls")));
  return CheckRange(options->has_timeout_ms(), options->timeout_ms(),
                    kMaxTimeoutMs, FieldPath(path, "timeout_ms"));
}

absl::Status CheckExecutionRequest(pb::ExecutionRequest* request,
                                   absl::string_view path) {
  RETURN_IF_ERROR(
      CheckProtocolVersion(request->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckIdentifier(request->mutable_execution_id(),
                                  FieldPath(path, "execution_id")));
  const std::string agent = FieldPath(path, "agent");
  RETURN_IF_ERROR(
      Required(request->has_agent() ? request->mutable_agent() : nullptr,
               CheckAddress, agent));
  if (request->agent().kind_case() != pb::Address::kAgentId) {
    return InvalidArgumentAt(agent, "must be an agent address");
  }
  RETURN_IF_ERROR(
      Required(request->has_context() ? request->mutable_context() : nullptr,
               CheckAccessContext, FieldPath(path, "context")));
  RETURN_IF_ERROR(
      Required(request->has_message() ? request->mutable_message() : nullptr,
               CheckMessageEnvelope, FieldPath(path, "message")));
  const std::string tools = FieldPath(path, "tools");
  RETURN_IF_ERROR(
      CheckCount(request->tools_size(), 0, kMaxRequestTools, tools));
  for (int i = 0; i < request->tools_size(); ++i) {
    RETURN_IF_ERROR(CheckToolName(request->tools(i), IndexPath(tools, i)));
  }
  RETURN_IF_ERROR(OptionalJsonObject(request->has_state(), request->state(),
                                     FieldPath(path, "state")));
  RETURN_IF_ERROR(
      Optional(request->has_options() ? request->mutable_options() : nullptr,
               CheckExecutionOptions, FieldPath(path, "options")));
  return OptionalJsonObject(request->has_metadata(), request->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckExecutionEvent(pb::ExecutionEvent* event,
                                 absl::string_view path) {
  RETURN_IF_ERROR(
      CheckProtocolVersion(event->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(
      CheckIdentifier(event->mutable_event_id(), FieldPath(path, "event_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_execution_id(),
                                  FieldPath(path, "execution_id")));
  RETURN_IF_ERROR(
      CheckIdentifier(event->mutable_trace_id(), FieldPath(path, "trace_id")));
  if (event->sequence() < 0) {
    return InvalidArgumentAt(FieldPath(path, "sequence"),
                             "must be non-negative");
  }
  RETURN_IF_ERROR(CheckTrimmedString(event->mutable_type(), kMaxEventTypeLength,
                                     FieldPath(path, "type")));
  RETURN_IF_ERROR(RequiredJsonValue(event->has_data(), event->data(),
                                    FieldPath(path, "data")));
  return RequiredTimestamp(event->has_occurred_at(), event->occurred_at(),
                           FieldPath(path, "occurred_at"));
}

absl::Status CheckExecutionResult(pb::ExecutionResult* result,
                                  absl::string_view path) {
  RETURN_IF_ERROR(
      CheckProtocolVersion(result->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_execution_id(),
                                  FieldPath(path, "execution_id")));
  RETURN_IF_ERROR(
      CheckIdentifier(result->mutable_trace_id(), FieldPath(path, "trace_id")));
  RETURN_IF_ERROR(CheckEnum(result->status(), pb::ExecutionStatus_IsValid,
                            FieldPath(path, "status")));
  absl::string_view actual;
  switch (result->outcome_case()) {
    case pb::ExecutionResult::kOutput:
      actual = "output";
      break;
    case pb::ExecutionResult::kError:
      actual = "error";
      break;
    case pb::ExecutionResult::kEscalation:
      actual = "escalation";
      break;
    case pb::ExecutionResult::OUTCOME_NOT_SET:
      break;
  }
  absl::string_view expected;
  bool optional = false;
  switch (result->status()) {
    case pb::EXECUTION_STATUS_SUCCEEDED:
      expected = "output";
      break;
    case pb::EXECUTION_STATUS_ESCALATED:
      expected = "escalation";
      break;
    case pb::EXECUTION_STATUS_CANCELLED:
      optional = true;
      expected = "error";
      break;
    default:  // denied, failed
      expected = "error";
      break;
  }
  RETURN_IF_ERROR(CheckOutcome(actual, expected, optional,
                               ExecutionStatusName(result->status()), path));
  if (result->has_output()) {
    RETURN_IF_ERROR(
        CheckJsonValue(result->output(), FieldPath(path, "output")));
  }
  if (result->has_error()) {
    RETURN_IF_ERROR(
        CheckProtocolError(result->mutable_error(), FieldPath(path, "error")));
  }
  if (result->has_escalation()) {
    RETURN_IF_ERROR(CheckEscalation(result->mutable_escalation(),
                                    FieldPath(path, "escalation")));
  }
  const std::string events = FieldPath(path, "events");
  for (int i = 0; i < result->events_size(); ++i) {
    RETURN_IF_ERROR(
        CheckExecutionEvent(result->mutable_events(i), IndexPath(events, i)));
  }
  RETURN_IF_ERROR(RequiredTimestamp(result->has_started_at(),
                                    result->started_at(),
                                    FieldPath(path, "started_at")));
  RETURN_IF_ERROR(RequiredTimestamp(result->has_completed_at(),
                                    result->completed_at(),
                                    FieldPath(path, "completed_at")));
  return OptionalJsonObject(result->has_metadata(), result->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckRuntimeManifest(pb::RuntimeManifest* manifest,
                                  absl::string_view path) {
  RETURN_IF_ERROR(
      CheckIdentifier(manifest->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(
      CheckIdentifier(manifest->mutable_version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckProtocolVersion(manifest->protocol_version(),
                                       FieldPath(path, "protocol_version")));
  return OptionalJsonObject(manifest->has_metadata(), manifest->metadata(),
                            FieldPath(path, "metadata"));
}

// ---- audit.proto ----

absl::Status CheckAuditEvent(pb::AuditEvent* event, absl::string_view path) {
  RETURN_IF_ERROR(
      CheckProtocolVersion(event->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(CheckEnum(event->type(), pb::AuditEventType_IsValid,
                            FieldPath(path, "type")));
  RETURN_IF_ERROR(CheckEnum(event->outcome(), pb::AuditOutcome_IsValid,
                            FieldPath(path, "outcome")));
  RETURN_IF_ERROR(
      RequiredTimestamp(event->has_at(), event->at(), FieldPath(path, "at")));
  RETURN_IF_ERROR(
      CheckIdentifier(event->mutable_trace_id(), FieldPath(path, "trace_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_namespace_id(),
                                  FieldPath(path, "namespace_id")));
  RETURN_IF_ERROR(
      Required(event->has_actor() ? event->mutable_actor() : nullptr,
               CheckAddress, FieldPath(path, "actor")));
  RETURN_IF_ERROR(
      Required(event->has_authority() ? event->mutable_authority() : nullptr,
               CheckAddress, FieldPath(path, "authority")));
  RETURN_IF_ERROR(
      Required(event->has_owner() ? event->mutable_owner() : nullptr,
               CheckAddress, FieldPath(path, "owner")));
  RETURN_IF_ERROR(
      CheckPurpose(event->mutable_purpose(), FieldPath(path, "purpose")));
  RETURN_IF_ERROR(
      Optional(event->has_resource() ? event->mutable_resource() : nullptr,
               CheckResourceRef, FieldPath(path, "resource")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_action(),
                                          FieldPath(path, "action")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_grant_id(),
                                          FieldPath(path, "grant_id")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_authority_hash(),
                                          FieldPath(path, "authority_hash")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_operation_id(),
                                          FieldPath(path, "operation_id")));
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(event->mutable_tool(), FieldPath(path, "tool")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_message_id(),
                                          FieldPath(path, "message_id")));
  RETURN_IF_ERROR(
      Optional(event->has_receiver() ? event->mutable_receiver() : nullptr,
               CheckAddress, FieldPath(path, "receiver")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_reason(),
                                          FieldPath(path, "reason")));
  if (event->has_source()) {
    RETURN_IF_ERROR(CheckEnum(event->source(), pb::AuditSource_IsValid,
                              FieldPath(path, "source")));
  }
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_cause(),
                                          FieldPath(path, "cause")));
  if (event->has_ended_by()) {
    RETURN_IF_ERROR(CheckEnum(event->ended_by(), pb::EndedBy_IsValid,
                              FieldPath(path, "ended_by")));
  }
  RETURN_IF_ERROR(Optional(
      event->has_requested_authority() ? event->mutable_requested_authority()
                                       : nullptr,
      CheckCapabilityRequest, FieldPath(path, "requested_authority")));
  return OptionalJsonObject(event->has_metadata(), event->metadata(),
                            FieldPath(path, "metadata"));
}

// Unknown fields anywhere in the tree first, then the type's own checks.
template <typename T>
absl::Status Strict(T* message, absl::Status (*check)(T*, absl::string_view),
                    absl::string_view path) {
  if (message == nullptr) return Missing(path);
  RETURN_IF_ERROR(RejectUnknownFields(*message, path));
  return check(message, path);
}

}  // namespace

absl::Status ValidateAddress(pb::Address* address, absl::string_view path) {
  return Strict(address, CheckAddress, path);
}
absl::Status ValidateResourceRef(pb::ResourceRef* ref, absl::string_view path) {
  return Strict(ref, CheckResourceRef, path);
}
absl::Status ValidateCapability(pb::Capability* capability,
                                absl::string_view path) {
  return Strict(capability, CheckCapability, path);
}
absl::Status ValidateCapabilityConstraints(
    pb::CapabilityConstraints* constraints, absl::string_view path) {
  return Strict(constraints, CheckCapabilityConstraints, path);
}
absl::Status ValidateCapabilityRequirement(
    pb::CapabilityRequirement* requirement, absl::string_view path) {
  return Strict(requirement, CheckCapabilityRequirement, path);
}
absl::Status ValidateProtocolError(pb::ProtocolError* error,
                                   absl::string_view path) {
  return Strict(error, CheckProtocolError, path);
}
absl::Status ValidateAccessContext(pb::AccessContext* context,
                                   absl::string_view path) {
  return Strict(context, CheckAccessContext, path);
}
absl::Status ValidateCapabilityGrant(pb::CapabilityGrant* grant,
                                     absl::string_view path) {
  return Strict(grant, CheckCapabilityGrant, path);
}
absl::Status ValidateCapabilityRequest(pb::CapabilityRequest* request,
                                       absl::string_view path) {
  return Strict(request, CheckCapabilityRequest, path);
}
absl::Status ValidateAuthorizationDecision(pb::AuthorizationDecision* decision,
                                           absl::string_view path) {
  return Strict(decision, CheckAuthorizationDecision, path);
}
absl::Status ValidateEscalation(pb::Escalation* escalation,
                                absl::string_view path) {
  return Strict(escalation, CheckEscalation, path);
}
absl::Status ValidateResourceReach(pb::ResourceReach* reach,
                                   absl::string_view path) {
  return Strict(reach, CheckResourceReach, path);
}
absl::Status ValidateReachResult(pb::ReachResult* result,
                                 absl::string_view path) {
  return Strict(result, CheckReachResult, path);
}
absl::Status ValidateMessageProvenance(pb::MessageProvenance* provenance,
                                       absl::string_view path) {
  return Strict(provenance, CheckMessageProvenance, path);
}
absl::Status ValidateMessageEnvelope(pb::MessageEnvelope* envelope,
                                     absl::string_view path) {
  return Strict(envelope, CheckMessageEnvelope, path);
}
absl::Status ValidateToolDefinition(pb::ToolDefinition* tool,
                                    absl::string_view path) {
  return Strict(tool, CheckToolDefinition, path);
}
absl::Status ValidatePublishedToolDefinition(pb::PublishedToolDefinition* tool,
                                             absl::string_view path) {
  return Strict(tool, CheckPublishedToolDefinition, path);
}
absl::Status ValidateToolCatalog(pb::ToolCatalog* catalog,
                                 absl::string_view path) {
  return Strict(catalog, CheckToolCatalog, path);
}
absl::Status ValidateToolCall(pb::ToolCall* call, absl::string_view path) {
  return Strict(call, CheckToolCall, path);
}
absl::Status ValidateToolResult(pb::ToolResult* result,
                                absl::string_view path) {
  return Strict(result, CheckToolResult, path);
}
absl::Status ValidateExecutionOptions(pb::ExecutionOptions* options,
                                      absl::string_view path) {
  return Strict(options, CheckExecutionOptions, path);
}
absl::Status ValidateExecutionRequest(pb::ExecutionRequest* request,
                                      absl::string_view path) {
  return Strict(request, CheckExecutionRequest, path);
}
absl::Status ValidateExecutionEvent(pb::ExecutionEvent* event,
                                    absl::string_view path) {
  return Strict(event, CheckExecutionEvent, path);
}
absl::Status ValidateExecutionResult(pb::ExecutionResult* result,
                                     absl::string_view path) {
  return Strict(result, CheckExecutionResult, path);
}
absl::Status ValidateRuntimeManifest(pb::RuntimeManifest* manifest,
                                     absl::string_view path) {
  return Strict(manifest, CheckRuntimeManifest, path);
}
absl::Status ValidateAuditEvent(pb::AuditEvent* event, absl::string_view path) {
  return Strict(event, CheckAuditEvent, path);
}

}  // namespace sharedos::common::validation
