#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol.h"
#include "common/validation/protocol_internal.h"
#include "common/validation/unknown_fields.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace sharedos::common::validation {
namespace internal {

// ---- tool.proto ----

absl::Status CheckToolDefinition(pb::ToolDefinition* tool, absl::string_view path) {
  RETURN_IF_ERROR(CheckToolName(tool->name(), FieldPath(path, "name")));
  RETURN_IF_ERROR(CheckString(tool->description(), 1, kMaxToolDescriptionLength,
                              FieldPath(path, "description")));
  RETURN_IF_ERROR(CheckIdentifier(tool->mutable_namespace_(), FieldPath(path, "namespace")));
  RETURN_IF_ERROR(CheckIdentifier(tool->mutable_source(), FieldPath(path, "source")));
  RETURN_IF_ERROR(
      CheckEnum(tool->read_write(), pb::ReadWrite_IsValid, FieldPath(path, "read_write")));
  RETURN_IF_ERROR(RequiredJsonObject(tool->has_input_schema(), tool->input_schema(),
                                     FieldPath(path, "input_schema")));
  RETURN_IF_ERROR(OptionalJsonObject(tool->has_output_schema(), tool->output_schema(),
                                     FieldPath(path, "output_schema")));
  RETURN_IF_ERROR(
      Required(tool->has_required_capability() ? tool->mutable_required_capability() : nullptr,
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
  return OptionalJsonObject(tool->has_metadata(), tool->metadata(), FieldPath(path, "metadata"));
}

absl::Status CheckPublishedToolDefinition(pb::PublishedToolDefinition* tool,
                                          absl::string_view path) {
  RETURN_IF_ERROR(CheckToolName(tool->name(), FieldPath(path, "name")));
  RETURN_IF_ERROR(CheckString(tool->description(), 1, kMaxToolDescriptionLength,
                              FieldPath(path, "description")));
  RETURN_IF_ERROR(RequiredJsonObject(tool->has_input_schema(), tool->input_schema(),
                                     FieldPath(path, "input_schema")));
  RETURN_IF_ERROR(OptionalJsonObject(tool->has_output_schema(), tool->output_schema(),
                                     FieldPath(path, "output_schema")));
  if (tool->has_metadata()) {
    const std::string metadata = FieldPath(path, "metadata");
    RETURN_IF_ERROR(CheckOptionalIdentifier(tool->mutable_metadata()->mutable_namespace_(),
                                            FieldPath(metadata, "namespace")));
    RETURN_IF_ERROR(CheckOptionalIdentifier(tool->mutable_metadata()->mutable_source(),
                                            FieldPath(metadata, "source")));
  }
  return absl::OkStatus();
}

absl::Status CheckToolCatalog(pb::ToolCatalog* catalog, absl::string_view path) {
  RETURN_IF_ERROR(CheckProtocolVersion(catalog->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(
      CheckIdentifier(catalog->mutable_execution_id(), FieldPath(path, "execution_id")));
  RETURN_IF_ERROR(CheckContentHash(catalog->catalog_hash(), FieldPath(path, "catalog_hash")));
  const std::string tools = FieldPath(path, "tools");
  RETURN_IF_ERROR(CheckCount(catalog->tools_size(), 0, kMaxCatalogTools, tools));
  for (int i = 0; i < catalog->tools_size(); ++i) {
    RETURN_IF_ERROR(CheckPublishedToolDefinition(catalog->mutable_tools(i), IndexPath(tools, i)));
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
  RETURN_IF_ERROR(CheckIdentifier(call->mutable_tool(), FieldPath(path, "tool")));
  RETURN_IF_ERROR(
      RequiredJsonObject(call->has_arguments(), call->arguments(), FieldPath(path, "arguments")));
  RETURN_IF_ERROR(CheckIdentifier(call->mutable_trace_id(), FieldPath(path, "trace_id")));
  return RequiredTimestamp(call->has_requested_at(), call->requested_at(),
                           FieldPath(path, "requested_at"));
}

absl::Status CheckToolResult(pb::ToolResult* result, absl::string_view path) {
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_call_id(), FieldPath(path, "call_id")));
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_tool(), FieldPath(path, "tool")));
  RETURN_IF_ERROR(
      CheckEnum(result->status(), pb::ToolResultStatus_IsValid, FieldPath(path, "status")));
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
    RETURN_IF_ERROR(CheckJsonValue(result->output(), FieldPath(path, "output")));
  }
  if (result->has_error()) {
    RETURN_IF_ERROR(CheckProtocolError(result->mutable_error(), FieldPath(path, "error")));
  }
  RETURN_IF_ERROR(RequiredTimestamp(result->has_completed_at(), result->completed_at(),
                                    FieldPath(path, "completed_at")));
  return OptionalJsonObject(result->has_metadata(), result->metadata(),
                            FieldPath(path, "metadata"));
}

// ---- execution.proto ----

absl::Status CheckRange(bool has, int64_t value, int64_t max, absl::string_view path) {
  if (has && (value < 1 || value > max)) {
    return InvalidArgumentAt(path, absl::StrCat("must be in 1..", max));
  }
  return absl::OkStatus();
}

absl::Status CheckExecutionOptions(pb::ExecutionOptions* options, absl::string_view path) {
  RETURN_IF_ERROR(CheckRange(options->has_max_steps(), options->max_steps(), kMaxSteps,
                             FieldPath(path, "max_steps")));
  RETURN_IF_ERROR(CheckRange(options->has_max_tool_calls(), options->max_tool_calls(),
                             kMaxToolCalls, FieldPath(path, "max_tool_calls")));
  return CheckRange(options->has_timeout_ms(), options->timeout_ms(), kMaxTimeoutMs,
                    FieldPath(path, "timeout_ms"));
}

absl::Status CheckExecutionRequest(pb::ExecutionRequest* request, absl::string_view path) {
  RETURN_IF_ERROR(CheckProtocolVersion(request->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(
      CheckIdentifier(request->mutable_execution_id(), FieldPath(path, "execution_id")));
  const std::string agent = FieldPath(path, "agent");
  RETURN_IF_ERROR(
      Required(request->has_agent() ? request->mutable_agent() : nullptr, CheckAddress, agent));
  if (request->agent().kind_case() != pb::Address::kAgentId) {
    return InvalidArgumentAt(agent, "must be an agent address");
  }
  RETURN_IF_ERROR(Required(request->has_context() ? request->mutable_context() : nullptr,
                           CheckAccessContext, FieldPath(path, "context")));
  RETURN_IF_ERROR(Required(request->has_message() ? request->mutable_message() : nullptr,
                           CheckMessageEnvelope, FieldPath(path, "message")));
  const std::string tools = FieldPath(path, "tools");
  RETURN_IF_ERROR(CheckCount(request->tools_size(), 0, kMaxRequestTools, tools));
  for (int i = 0; i < request->tools_size(); ++i) {
    RETURN_IF_ERROR(CheckToolName(request->tools(i), IndexPath(tools, i)));
  }
  RETURN_IF_ERROR(
      OptionalJsonObject(request->has_state(), request->state(), FieldPath(path, "state")));
  RETURN_IF_ERROR(Optional(request->has_options() ? request->mutable_options() : nullptr,
                           CheckExecutionOptions, FieldPath(path, "options")));
  return OptionalJsonObject(request->has_metadata(), request->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckExecutionEvent(pb::ExecutionEvent* event, absl::string_view path) {
  RETURN_IF_ERROR(CheckProtocolVersion(event->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_event_id(), FieldPath(path, "event_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_execution_id(), FieldPath(path, "execution_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_trace_id(), FieldPath(path, "trace_id")));
  if (event->sequence() < 0) {
    return InvalidArgumentAt(FieldPath(path, "sequence"), "must be non-negative");
  }
  RETURN_IF_ERROR(
      CheckTrimmedString(event->mutable_type(), kMaxEventTypeLength, FieldPath(path, "type")));
  RETURN_IF_ERROR(RequiredJsonValue(event->has_data(), event->data(), FieldPath(path, "data")));
  return RequiredTimestamp(event->has_occurred_at(), event->occurred_at(),
                           FieldPath(path, "occurred_at"));
}

absl::Status CheckExecutionResult(pb::ExecutionResult* result, absl::string_view path) {
  RETURN_IF_ERROR(CheckProtocolVersion(result->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_execution_id(), FieldPath(path, "execution_id")));
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_trace_id(), FieldPath(path, "trace_id")));
  RETURN_IF_ERROR(
      CheckEnum(result->status(), pb::ExecutionStatus_IsValid, FieldPath(path, "status")));
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
  RETURN_IF_ERROR(
      CheckOutcome(actual, expected, optional, ExecutionStatusName(result->status()), path));
  if (result->has_output()) {
    RETURN_IF_ERROR(CheckJsonValue(result->output(), FieldPath(path, "output")));
  }
  if (result->has_error()) {
    RETURN_IF_ERROR(CheckProtocolError(result->mutable_error(), FieldPath(path, "error")));
  }
  if (result->has_escalation()) {
    RETURN_IF_ERROR(CheckEscalation(result->mutable_escalation(), FieldPath(path, "escalation")));
  }
  const std::string events = FieldPath(path, "events");
  for (int i = 0; i < result->events_size(); ++i) {
    RETURN_IF_ERROR(CheckExecutionEvent(result->mutable_events(i), IndexPath(events, i)));
  }
  RETURN_IF_ERROR(RequiredTimestamp(result->has_started_at(), result->started_at(),
                                    FieldPath(path, "started_at")));
  RETURN_IF_ERROR(RequiredTimestamp(result->has_completed_at(), result->completed_at(),
                                    FieldPath(path, "completed_at")));
  return OptionalJsonObject(result->has_metadata(), result->metadata(),
                            FieldPath(path, "metadata"));
}

absl::Status CheckRuntimeManifest(pb::RuntimeManifest* manifest, absl::string_view path) {
  RETURN_IF_ERROR(CheckIdentifier(manifest->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(CheckIdentifier(manifest->mutable_version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(
      CheckProtocolVersion(manifest->protocol_version(), FieldPath(path, "protocol_version")));
  return OptionalJsonObject(manifest->has_metadata(), manifest->metadata(),
                            FieldPath(path, "metadata"));
}

// ---- audit.proto ----

absl::Status CheckAuditEvent(pb::AuditEvent* event, absl::string_view path) {
  RETURN_IF_ERROR(CheckProtocolVersion(event->version(), FieldPath(path, "version")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_id(), FieldPath(path, "id")));
  RETURN_IF_ERROR(CheckEnum(event->type(), pb::AuditEventType_IsValid, FieldPath(path, "type")));
  RETURN_IF_ERROR(
      CheckEnum(event->outcome(), pb::AuditOutcome_IsValid, FieldPath(path, "outcome")));
  RETURN_IF_ERROR(RequiredTimestamp(event->has_at(), event->at(), FieldPath(path, "at")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_trace_id(), FieldPath(path, "trace_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_namespace_id(), FieldPath(path, "namespace_id")));
  RETURN_IF_ERROR(Required(event->has_actor() ? event->mutable_actor() : nullptr, CheckAddress,
                           FieldPath(path, "actor")));
  RETURN_IF_ERROR(Required(event->has_authority() ? event->mutable_authority() : nullptr,
                           CheckAddress, FieldPath(path, "authority")));
  RETURN_IF_ERROR(Required(event->has_owner() ? event->mutable_owner() : nullptr, CheckAddress,
                           FieldPath(path, "owner")));
  RETURN_IF_ERROR(CheckPurpose(event->mutable_purpose(), FieldPath(path, "purpose")));
  RETURN_IF_ERROR(Optional(event->has_resource() ? event->mutable_resource() : nullptr,
                           CheckResourceRef, FieldPath(path, "resource")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_action(), FieldPath(path, "action")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_grant_id(), FieldPath(path, "grant_id")));
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(event->mutable_authority_hash(), FieldPath(path, "authority_hash")));
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(event->mutable_operation_id(), FieldPath(path, "operation_id")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_tool(), FieldPath(path, "tool")));
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(event->mutable_message_id(), FieldPath(path, "message_id")));
  RETURN_IF_ERROR(Optional(event->has_receiver() ? event->mutable_receiver() : nullptr,
                           CheckAddress, FieldPath(path, "receiver")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_reason(), FieldPath(path, "reason")));
  if (event->has_source()) {
    RETURN_IF_ERROR(CheckEnum(event->source(), pb::AuditSource_IsValid, FieldPath(path, "source")));
  }
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_cause(), FieldPath(path, "cause")));
  if (event->has_ended_by()) {
    RETURN_IF_ERROR(CheckEnum(event->ended_by(), pb::EndedBy_IsValid, FieldPath(path, "ended_by")));
  }
  RETURN_IF_ERROR(
      Optional(event->has_requested_authority() ? event->mutable_requested_authority() : nullptr,
               CheckCapabilityRequest, FieldPath(path, "requested_authority")));
  return OptionalJsonObject(event->has_metadata(), event->metadata(), FieldPath(path, "metadata"));
}

}  // namespace internal

namespace pb = ::sharedos::protocol::v1;

absl::Status ValidateToolDefinition(pb::ToolDefinition* tool, absl::string_view path) {
  return internal::Strict(tool, internal::CheckToolDefinition, path);
}
absl::Status ValidatePublishedToolDefinition(pb::PublishedToolDefinition* tool,
                                             absl::string_view path) {
  return internal::Strict(tool, internal::CheckPublishedToolDefinition, path);
}
absl::Status ValidateToolCatalog(pb::ToolCatalog* catalog, absl::string_view path) {
  return internal::Strict(catalog, internal::CheckToolCatalog, path);
}
absl::Status ValidateToolCall(pb::ToolCall* call, absl::string_view path) {
  return internal::Strict(call, internal::CheckToolCall, path);
}
absl::Status ValidateToolResult(pb::ToolResult* result, absl::string_view path) {
  return internal::Strict(result, internal::CheckToolResult, path);
}
absl::Status ValidateExecutionOptions(pb::ExecutionOptions* options, absl::string_view path) {
  return internal::Strict(options, internal::CheckExecutionOptions, path);
}
absl::Status ValidateExecutionRequest(pb::ExecutionRequest* request, absl::string_view path) {
  return internal::Strict(request, internal::CheckExecutionRequest, path);
}
absl::Status ValidateExecutionEvent(pb::ExecutionEvent* event, absl::string_view path) {
  return internal::Strict(event, internal::CheckExecutionEvent, path);
}
absl::Status ValidateExecutionResult(pb::ExecutionResult* result, absl::string_view path) {
  return internal::Strict(result, internal::CheckExecutionResult, path);
}
absl::Status ValidateRuntimeManifest(pb::RuntimeManifest* manifest, absl::string_view path) {
  return internal::Strict(manifest, internal::CheckRuntimeManifest, path);
}
absl::Status ValidateAuditEvent(pb::AuditEvent* event, absl::string_view path) {
  return internal::Strict(event, internal::CheckAuditEvent, path);
}

}  // namespace sharedos::common::validation
