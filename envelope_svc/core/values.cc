#include "envelope_svc/core/values.h"

#include <string>

#include "absl/status/statusor.h"
#include "capability/reason_codes.h"
#include "common/json/proto_json.h"
#include "common/time/proto_time.h"

namespace sharedos::envelope::core::values {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;

google::protobuf::Timestamp TimestampOf(absl::Time at) {
  absl::StatusOr<google::protobuf::Timestamp> timestamp = common::ToProtoTimestamp(at);
  return timestamp.ok() ? *timestamp : google::protobuf::Timestamp();
}

Value Str(absl::string_view text) {
  Value value;
  value.set_string_value(std::string(text));
  return value;
}

Value Num(double number) {
  Value value;
  value.set_number_value(number);
  return value;
}

Value FromJson(const nlohmann::json& json) {
  absl::StatusOr<Value> value = common::JsonToProtoValue(json);
  return value.ok() ? *std::move(value) : Value();
}

Value Object(std::initializer_list<std::pair<const char*, Value>> fields) {
  Value value;
  Struct* object = value.mutable_struct_value();
  for (const auto& [key, field] : fields) (*object->mutable_fields())[key] = field;
  return value;
}

pb::ProtocolError CodeError(absl::string_view code, bool retryable) {
  pb::ProtocolError error;
  error.set_code(std::string(code));
  error.set_message(std::string(capability::CodeMessage(code)));
  error.set_retryable(retryable);
  return error;
}

pb::ToolResult RefusedResult(const pb::ToolCall& call, pb::ToolResultStatus status,
                             absl::string_view code) {
  pb::ToolResult result;
  result.set_call_id(call.id());
  result.set_tool(call.tool());
  result.set_status(status);
  *result.mutable_error() = CodeError(code);
  return result;
}

Refusal Refusal::Of(absl::string_view code, absl::string_view cause) {
  return Refusal{std::string(code), std::string(cause), false, false};
}

Refusal Refusal::FromAuthorizer(absl::string_view code, bool fail_closed) {
  Refusal refusal;
  refusal.code = code.empty() ? std::string(capability::kNoMatchingGrant) : std::string(code);
  refusal.fail_closed = fail_closed;
  // The one place an authorizer's audit outage is recognised: its wire carries only the code.
  refusal.audit_outage = refusal.code == capability::kAuditUnavailable;
  return refusal;
}

Refusal Refusal::AuthorityUnavailable() {
  return Refusal{std::string(capability::kAuthorityUnavailable), "", true, false};
}

Refusal Refusal::AuditUnavailable() {
  return Refusal{std::string(capability::kAuditUnavailable), "", true, true};
}

}  // namespace sharedos::envelope::core::values
