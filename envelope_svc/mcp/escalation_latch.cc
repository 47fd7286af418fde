#include "envelope_svc/mcp/escalation_latch.h"

#include <optional>
#include <utility>

#include "capability/reason_codes.h"
#include "common/time/proto_time.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "envelope_svc/tools/escalation_tool.h"

namespace sharedos::envelope::mcp {
namespace {

namespace pb = ::sharedos::protocol::v1;

google::protobuf::Timestamp Now(const common::Clock& clock) {
  absl::StatusOr<google::protobuf::Timestamp> now = common::ToProtoTimestamp(clock.Now());
  return now.ok() ? *now : google::protobuf::Timestamp();
}

}  // namespace

std::string EscalationReason(const google::protobuf::Struct& arguments) {
  auto it = arguments.fields().find("reason");
  if (it == arguments.fields().end() || !it->second.has_string_value()) {
    return std::string(kEscalationFallbackReason);
  }
  // Trimmed as every protocol string is, then cut to the Escalation's reason bound.
  const absl::string_view reason = common::validation::TrimWhitespace(it->second.string_value());
  if (reason.empty()) return std::string(kEscalationFallbackReason);
  return std::string(
      common::validation::Utf16Prefix(reason, common::validation::kMaxEscalationReasonLength));
}

std::optional<std::string> EscalationRequirement(const google::protobuf::Struct& arguments) {
  auto it = arguments.fields().find(std::string(tools::kEscalationRequirementArgument));
  if (it == arguments.fields().end() || it->second.has_null_value()) return std::nullopt;
  // Anything but a string names no id a turn holds: refused as undescribed, never ignored.
  if (!it->second.has_string_value()) return std::string();
  const absl::string_view id = common::validation::TrimWhitespace(it->second.string_value());
  if (id.empty()) return std::nullopt;
  // Longer than any capreq- id: it cannot be one (and is not copied whole).
  return std::string(id.substr(0, 128));
}

absl::StatusOr<pb::ToolResult> EngineInvoker::Invoke(const core::TurnEngine::McpTurn& turn,
                                                     const pb::ToolCall& call) {
  v1::InvokeToolRequest request;
  request.set_turn_id(turn.turn_id);
  *request.mutable_call() = call;
  absl::StatusOr<v1::InvokeToolResponse> response = engine_.InvokeTool(request, turn.scope);
  if (!response.ok()) return response.status();
  return std::move(*response->mutable_result());
}

absl::StatusOr<pb::ToolResult> EscalationLatch::Invoke(const core::TurnEngine::McpTurn& turn,
                                                       const pb::ToolCall& call) {
  // The catalogue gates the name: an ask on a turn that does not offer it passes through. The
  // name is the canonical one whatever the harness called it (mcp_server.cc resolves it first).
  std::optional<core::TurnEngine::LatchAsk> ask;
  if (turn.offers_escalation && call.tool() == tools::kEscalationToolName) {
    ask = core::TurnEngine::LatchAsk{EscalationReason(call.arguments()),
                                     EscalationRequirement(call.arguments())};
  }
  absl::StatusOr<core::TurnEngine::LatchStep> step =
      engine_.StepEscalationLatch(turn.turn_id, ask, call);
  if (!step.ok()) return step.status();
  pb::ToolResult result;
  result.set_call_id(call.id());
  result.set_tool(call.tool());
  switch (*step) {
    case core::TurnEngine::LatchStep::kPassThrough:
      return inner_.Invoke(turn, call);
    case core::TurnEngine::LatchStep::kAsked: {
      result.set_status(pb::TOOL_RESULT_STATUS_SUCCEEDED);
      auto& output = *result.mutable_output()->mutable_struct_value()->mutable_fields();
      output["escalated"].set_bool_value(true);
      output["reason"].set_string_value(ask->reason);
      output["note"].set_string_value(std::string(kEscalationStopNote));
      break;
    }
    case core::TurnEngine::LatchStep::kUnknownRequirement: {
      // Not latched (recorded by the engine): the harness may ask again, naming a described
      // requirement or none.
      result.set_status(pb::TOOL_RESULT_STATUS_FAILED);
      pb::ProtocolError* error = result.mutable_error();
      error->set_code(std::string(capability::kInvalidToolArguments));
      error->set_message(std::string(core::kUndescribedRequirementMessage));
      error->set_retryable(false);
      break;
    }
    case core::TurnEngine::LatchStep::kPending: {
      result.set_status(pb::TOOL_RESULT_STATUS_DENIED);
      pb::ProtocolError* error = result.mutable_error();
      error->set_code(std::string(capability::kEscalationPending));
      error->set_message(std::string(kEscalationPendingMessage));
      error->set_retryable(false);
      break;
    }
  }
  *result.mutable_completed_at() = Now(clock_);
  return result;
}

}  // namespace sharedos::envelope::mcp
