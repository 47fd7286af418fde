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

absl::Status CheckToolDefinition(pb::ToolDefinition* tool, const PathRef& path) {
  RETURN_IF_ERROR(CheckToolName(tool->name(), path.Field("name")));
  RETURN_IF_ERROR(
      CheckString(tool->description(), 1, kMaxToolDescriptionLength, path.Field("description")));
  RETURN_IF_ERROR(CheckIdentifier(tool->mutable_namespace_(), path.Field("namespace")));
  RETURN_IF_ERROR(CheckIdentifier(tool->mutable_source(), path.Field("source")));
  RETURN_IF_ERROR(CheckEnum(tool->read_write(), pb::ReadWrite_IsValid, path.Field("read_write")));
  RETURN_IF_ERROR(RequiredJsonObject(tool->has_input_schema(), tool->input_schema(),
                                     path.Field("input_schema")));
  RETURN_IF_ERROR(OptionalJsonObject(tool->has_output_schema(), tool->output_schema(),
                                     path.Field("output_schema")));
  RETURN_IF_ERROR(
      Required(tool->has_required_capability() ? tool->mutable_required_capability() : nullptr,
               CheckCapabilityRequirement, path.Field("required_capability")));
  const pb::ToolAnnotations& annotations = tool->annotations();
  const PathRef annotations_path = path.Field("annotations");
  if (tool->read_write() == pb::READ_WRITE_READ && annotations.destructive()) {
    return InvalidArgumentAt(annotations_path.Field("destructive"),
                             "a read tool cannot be destructive");
  }
  if (tool->read_write() == pb::READ_WRITE_WRITE && annotations.read_only()) {
    return InvalidArgumentAt(annotations_path.Field("read_only"),
                             "a write tool cannot be read_only");
  }
  return OptionalJsonObject(tool->has_metadata(), tool->metadata(), path.Field("metadata"));
}

absl::Status CheckPublishedToolDefinition(pb::PublishedToolDefinition* tool, const PathRef& path) {
  RETURN_IF_ERROR(CheckToolName(tool->name(), path.Field("name")));
  RETURN_IF_ERROR(
      CheckString(tool->description(), 1, kMaxToolDescriptionLength, path.Field("description")));
  RETURN_IF_ERROR(RequiredJsonObject(tool->has_input_schema(), tool->input_schema(),
                                     path.Field("input_schema")));
  RETURN_IF_ERROR(OptionalJsonObject(tool->has_output_schema(), tool->output_schema(),
                                     path.Field("output_schema")));
  if (tool->has_metadata()) {
    const PathRef metadata = path.Field("metadata");
    RETURN_IF_ERROR(CheckOptionalIdentifier(tool->mutable_metadata()->mutable_namespace_(),
                                            metadata.Field("namespace")));
    RETURN_IF_ERROR(CheckOptionalIdentifier(tool->mutable_metadata()->mutable_source(),
                                            metadata.Field("source")));
  }
  return absl::OkStatus();
}

absl::Status CheckToolCatalog(pb::ToolCatalog* catalog, const PathRef& path) {
  RETURN_IF_ERROR(CheckProtocolVersion(catalog->version(), path.Field("version")));
  RETURN_IF_ERROR(CheckIdentifier(catalog->mutable_execution_id(), path.Field("execution_id")));
  RETURN_IF_ERROR(CheckContentHash(catalog->catalog_hash(), path.Field("catalog_hash")));
  const PathRef tools = path.Field("tools");
  RETURN_IF_ERROR(CheckCount(catalog->tools_size(), 0, kMaxCatalogTools, tools));
  for (int i = 0; i < catalog->tools_size(); ++i) {
    RETURN_IF_ERROR(CheckPublishedToolDefinition(catalog->mutable_tools(i), tools.Index(i)));
  }
  // Tool names are ASCII, so byte order is UTF-16 code-unit order.
  for (int i = 1; i < catalog->tools_size(); ++i) {
    const std::string& previous = catalog->tools(i - 1).name();
    const std::string& name = catalog->tools(i).name();
    if (name == previous) {
      return InvalidArgumentAt(tools.Index(i).Field("name"),
                               absl::StrCat("duplicate \"", name, "\""));
    }
    if (name < previous) {
      return InvalidArgumentAt(
          tools.Index(i).Field("name"),
          absl::StrCat("not sorted (\"", name, "\" after \"", previous, "\")"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckToolCall(pb::ToolCall* call, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(call->mutable_id(), path.Field("id")));
  RETURN_IF_ERROR(CheckIdentifier(call->mutable_tool(), path.Field("tool")));
  RETURN_IF_ERROR(
      RequiredJsonObject(call->has_arguments(), call->arguments(), path.Field("arguments")));
  RETURN_IF_ERROR(CheckIdentifier(call->mutable_trace_id(), path.Field("trace_id")));
  return RequiredTimestamp(call->has_requested_at(), call->requested_at(),
                           path.Field("requested_at"));
}

absl::Status CheckToolResult(pb::ToolResult* result, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_call_id(), path.Field("call_id")));
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_tool(), path.Field("tool")));
  RETURN_IF_ERROR(CheckEnum(result->status(), pb::ToolResultStatus_IsValid, path.Field("status")));
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
    RETURN_IF_ERROR(CheckJsonValue(result->output(), path.Field("output")));
  }
  if (result->has_error()) {
    RETURN_IF_ERROR(CheckProtocolError(result->mutable_error(), path.Field("error")));
  }
  RETURN_IF_ERROR(RequiredTimestamp(result->has_completed_at(), result->completed_at(),
                                    path.Field("completed_at")));
  return OptionalJsonObject(result->has_metadata(), result->metadata(), path.Field("metadata"));
}

// ---- execution.proto ----

absl::Status CheckRange(bool has, int64_t value, int64_t max, const PathRef& path) {
  if (has && (value < 1 || value > max)) {
    return InvalidArgumentAt(path, absl::StrCat("must be in 1..", max));
  }
  return absl::OkStatus();
}

absl::Status CheckExecutionOptions(pb::ExecutionOptions* options, const PathRef& path) {
  RETURN_IF_ERROR(CheckRange(options->has_max_steps(), options->max_steps(), kMaxSteps,
                             path.Field("max_steps")));
  RETURN_IF_ERROR(CheckRange(options->has_max_tool_calls(), options->max_tool_calls(),
                             kMaxToolCalls, path.Field("max_tool_calls")));
  return CheckRange(options->has_timeout_ms(), options->timeout_ms(), kMaxTimeoutMs,
                    path.Field("timeout_ms"));
}

absl::Status CheckExecutionRequest(pb::ExecutionRequest* request, const PathRef& path) {
  RETURN_IF_ERROR(CheckProtocolVersion(request->version(), path.Field("version")));
  RETURN_IF_ERROR(CheckIdentifier(request->mutable_execution_id(), path.Field("execution_id")));
  const PathRef agent = path.Field("agent");
  RETURN_IF_ERROR(
      Required(request->has_agent() ? request->mutable_agent() : nullptr, CheckAddress, agent));
  if (request->agent().kind_case() != pb::Address::kAgentId) {
    return InvalidArgumentAt(agent, "must be an agent address");
  }
  RETURN_IF_ERROR(Required(request->has_context() ? request->mutable_context() : nullptr,
                           CheckAccessContext, path.Field("context")));
  RETURN_IF_ERROR(Required(request->has_message() ? request->mutable_message() : nullptr,
                           CheckMessageEnvelope, path.Field("message")));
  const PathRef tools = path.Field("tools");
  RETURN_IF_ERROR(CheckCount(request->tools_size(), 0, kMaxRequestTools, tools));
  for (int i = 0; i < request->tools_size(); ++i) {
    RETURN_IF_ERROR(CheckToolName(request->tools(i), tools.Index(i)));
  }
  RETURN_IF_ERROR(OptionalJsonObject(request->has_state(), request->state(), path.Field("state")));
  RETURN_IF_ERROR(Optional(request->has_options() ? request->mutable_options() : nullptr,
                           CheckExecutionOptions, path.Field("options")));
  return OptionalJsonObject(request->has_metadata(), request->metadata(), path.Field("metadata"));
}

absl::Status CheckExecutionEvent(pb::ExecutionEvent* event, const PathRef& path) {
  RETURN_IF_ERROR(CheckProtocolVersion(event->version(), path.Field("version")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_event_id(), path.Field("event_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_execution_id(), path.Field("execution_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_trace_id(), path.Field("trace_id")));
  if (event->sequence() < 0) {
    return InvalidArgumentAt(path.Field("sequence"), "must be non-negative");
  }
  RETURN_IF_ERROR(
      CheckTrimmedString(event->mutable_type(), kMaxEventTypeLength, path.Field("type")));
  RETURN_IF_ERROR(RequiredJsonValue(event->has_data(), event->data(), path.Field("data")));
  return RequiredTimestamp(event->has_occurred_at(), event->occurred_at(),
                           path.Field("occurred_at"));
}

absl::Status CheckExecutionResult(pb::ExecutionResult* result, const PathRef& path) {
  RETURN_IF_ERROR(CheckProtocolVersion(result->version(), path.Field("version")));
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_execution_id(), path.Field("execution_id")));
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_trace_id(), path.Field("trace_id")));
  RETURN_IF_ERROR(CheckEnum(result->status(), pb::ExecutionStatus_IsValid, path.Field("status")));
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
    RETURN_IF_ERROR(CheckJsonValue(result->output(), path.Field("output")));
  }
  if (result->has_error()) {
    RETURN_IF_ERROR(CheckProtocolError(result->mutable_error(), path.Field("error")));
  }
  if (result->has_escalation()) {
    RETURN_IF_ERROR(CheckEscalation(result->mutable_escalation(), path.Field("escalation")));
  }
  const PathRef events = path.Field("events");
  for (int i = 0; i < result->events_size(); ++i) {
    RETURN_IF_ERROR(CheckExecutionEvent(result->mutable_events(i), events.Index(i)));
  }
  RETURN_IF_ERROR(
      RequiredTimestamp(result->has_started_at(), result->started_at(), path.Field("started_at")));
  RETURN_IF_ERROR(RequiredTimestamp(result->has_completed_at(), result->completed_at(),
                                    path.Field("completed_at")));
  return OptionalJsonObject(result->has_metadata(), result->metadata(), path.Field("metadata"));
}

absl::Status CheckRuntimeManifest(pb::RuntimeManifest* manifest, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(manifest->mutable_id(), path.Field("id")));
  RETURN_IF_ERROR(CheckIdentifier(manifest->mutable_version(), path.Field("version")));
  RETURN_IF_ERROR(
      CheckProtocolVersion(manifest->protocol_version(), path.Field("protocol_version")));
  return OptionalJsonObject(manifest->has_metadata(), manifest->metadata(), path.Field("metadata"));
}

// ---- audit.proto ----

absl::Status CheckAuditEvent(pb::AuditEvent* event, const PathRef& path) {
  RETURN_IF_ERROR(CheckProtocolVersion(event->version(), path.Field("version")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_id(), path.Field("id")));
  RETURN_IF_ERROR(CheckEnum(event->type(), pb::AuditEventType_IsValid, path.Field("type")));
  RETURN_IF_ERROR(CheckEnum(event->outcome(), pb::AuditOutcome_IsValid, path.Field("outcome")));
  RETURN_IF_ERROR(RequiredTimestamp(event->has_at(), event->at(), path.Field("at")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_trace_id(), path.Field("trace_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_namespace_id(), path.Field("namespace_id")));
  RETURN_IF_ERROR(Required(event->has_actor() ? event->mutable_actor() : nullptr, CheckAddress,
                           path.Field("actor")));
  RETURN_IF_ERROR(Required(event->has_authority() ? event->mutable_authority() : nullptr,
                           CheckAddress, path.Field("authority")));
  RETURN_IF_ERROR(Required(event->has_owner() ? event->mutable_owner() : nullptr, CheckAddress,
                           path.Field("owner")));
  RETURN_IF_ERROR(CheckPurpose(event->mutable_purpose(), path.Field("purpose")));
  RETURN_IF_ERROR(Optional(event->has_resource() ? event->mutable_resource() : nullptr,
                           CheckResourceRef, path.Field("resource")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_action(), path.Field("action")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_grant_id(), path.Field("grant_id")));
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(event->mutable_authority_hash(), path.Field("authority_hash")));
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(event->mutable_operation_id(), path.Field("operation_id")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_tool(), path.Field("tool")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_message_id(), path.Field("message_id")));
  RETURN_IF_ERROR(Optional(event->has_receiver() ? event->mutable_receiver() : nullptr,
                           CheckAddress, path.Field("receiver")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_reason(), path.Field("reason")));
  if (event->has_source()) {
    RETURN_IF_ERROR(CheckEnum(event->source(), pb::AuditSource_IsValid, path.Field("source")));
  }
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_cause(), path.Field("cause")));
  if (event->has_ended_by()) {
    RETURN_IF_ERROR(CheckEnum(event->ended_by(), pb::EndedBy_IsValid, path.Field("ended_by")));
  }
  RETURN_IF_ERROR(
      Optional(event->has_requested_authority() ? event->mutable_requested_authority() : nullptr,
               CheckCapabilityRequest, path.Field("requested_authority")));
  return OptionalJsonObject(event->has_metadata(), event->metadata(), path.Field("metadata"));
}

}  // namespace internal

namespace pb = ::sharedos::protocol::v1;

absl::Status ValidateToolDefinition(pb::ToolDefinition* tool, const PathRef& path) {
  return internal::Strict(tool, internal::CheckToolDefinition, path);
}
absl::Status ValidatePublishedToolDefinition(pb::PublishedToolDefinition* tool,
                                             const PathRef& path) {
  return internal::Strict(tool, internal::CheckPublishedToolDefinition, path);
}
absl::Status ValidateToolCatalog(pb::ToolCatalog* catalog, const PathRef& path) {
  return internal::Strict(catalog, internal::CheckToolCatalog, path);
}
absl::Status ValidateToolCall(pb::ToolCall* call, const PathRef& path) {
  return internal::Strict(call, internal::CheckToolCall, path);
}
absl::Status ValidateToolResult(pb::ToolResult* result, const PathRef& path) {
  return internal::Strict(result, internal::CheckToolResult, path);
}
absl::Status ValidateExecutionOptions(pb::ExecutionOptions* options, const PathRef& path) {
  return internal::Strict(options, internal::CheckExecutionOptions, path);
}
absl::Status ValidateExecutionRequest(pb::ExecutionRequest* request, const PathRef& path) {
  return internal::Strict(request, internal::CheckExecutionRequest, path);
}
absl::Status ValidateExecutionEvent(pb::ExecutionEvent* event, const PathRef& path) {
  return internal::Strict(event, internal::CheckExecutionEvent, path);
}
absl::Status ValidateExecutionResult(pb::ExecutionResult* result, const PathRef& path) {
  return internal::Strict(result, internal::CheckExecutionResult, path);
}
absl::Status ValidateRuntimeManifest(pb::RuntimeManifest* manifest, const PathRef& path) {
  return internal::Strict(manifest, internal::CheckRuntimeManifest, path);
}
absl::Status ValidateAuditEvent(pb::AuditEvent* event, const PathRef& path) {
  return internal::Strict(event, internal::CheckAuditEvent, path);
}

}  // namespace sharedos::common::validation
