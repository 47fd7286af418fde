#include "envelope_svc/tools/tool_refusal.h"

#include <string>

#include "absl/strings/cord.h"
#include "absl/types/optional.h"
#include "capability/reason_codes.h"
#include "common/time/proto_time.h"

namespace sharedos::envelope::tools {
namespace {

constexpr absl::string_view kDetailTypeUrl = "type.sharedos.dev/envelope.ToolRefusalDetail";
constexpr absl::string_view kCauseTypeUrl = "type.sharedos.dev/envelope.ToolRefusalCause";
constexpr absl::string_view kFactsTypeUrl = "type.sharedos.dev/envelope.ToolRefusalFacts";

}  // namespace

absl::Status ToolRefusal(absl::string_view code, absl::string_view detail) {
  absl::Status status(absl::StatusCode::kFailedPrecondition, code);
  status.SetPayload(kDetailTypeUrl, absl::Cord(detail));
  return status;
}

absl::Status ToolRefusalWithCause(absl::string_view code, absl::string_view cause,
                                  const google::protobuf::Struct& facts, absl::string_view detail) {
  absl::Status status = ToolRefusal(code, detail);
  status.SetPayload(kCauseTypeUrl, absl::Cord(cause));
  status.SetPayload(kFactsTypeUrl, absl::Cord(facts.SerializeAsString()));
  return status;
}

std::string RefusalCause(const absl::Status& status) {
  absl::optional<absl::Cord> cause = status.GetPayload(kCauseTypeUrl);
  return cause.has_value() ? std::string(*cause) : std::string();
}

bool IsToolRefusal(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition &&
         status.GetPayload(kDetailTypeUrl).has_value();
}

std::string RefusalDetail(const absl::Status& status) {
  absl::optional<absl::Cord> detail = status.GetPayload(kDetailTypeUrl);
  return detail.has_value() ? std::string(*detail) : std::string();
}

protocol::v1::ProtocolError RefusalError(const absl::Status& refusal) {
  protocol::v1::ProtocolError error;
  const std::string code = IsToolRefusal(refusal) ? std::string(refusal.message())
                                                  : std::string(capability::kToolExecutionFailed);
  error.set_message(std::string(capability::CodeMessage(code)));
  error.set_code(code);
  error.set_retryable(false);
  if (const std::string cause = RefusalCause(refusal); !cause.empty()) {
    google::protobuf::Struct* details = error.mutable_details();
    if (absl::optional<absl::Cord> facts = refusal.GetPayload(kFactsTypeUrl); facts.has_value()) {
      details->ParseFromString(std::string(*facts));
    }
    (*details->mutable_fields())["cause"].set_string_value(cause);
  }
  return error;
}

protocol::v1::ToolResult RefusalResult(const protocol::v1::ToolCall& call,
                                       const absl::Status& refusal, absl::Time completed_at) {
  protocol::v1::ToolResult result;
  result.set_call_id(call.id());
  result.set_tool(call.tool());
  result.set_status(protocol::v1::TOOL_RESULT_STATUS_FAILED);
  *result.mutable_error() = RefusalError(refusal);
  absl::StatusOr<google::protobuf::Timestamp> at = common::ToProtoTimestamp(completed_at);
  if (at.ok()) *result.mutable_completed_at() = *at;
  return result;
}

}  // namespace sharedos::envelope::tools
