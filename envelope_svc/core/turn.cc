#include "envelope_svc/core/turn.h"

#include <algorithm>
#include <utility>

#include "absl/status/statusor.h"
#include "capability/reason_codes.h"
#include "common/crypto/random.h"
#include "common/json/proto_json.h"
#include "common/time/proto_time.h"

namespace sharedos::envelope::core {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;

namespace values {

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

}  // namespace values

Value RuntimeManifest::ToValue(v1::Runtime runtime) const {
  return values::Object({{"id", values::Str(IdOf(runtime))},
                         {"version", values::Str(version)},
                         {"protocolVersion", values::Str("1")}});
}

bool Turn::Offers(absl::string_view name) const {
  const tools::Tool* tool = tools.has_value() ? tools->Find(name) : nullptr;
  return tool != nullptr && offered.contains(tool);
}

absl::string_view Turn::NotOfferedCause(absl::string_view name) const {
  const tools::Tool* tool = tools.has_value() ? tools->Find(name) : nullptr;
  if (tool == nullptr) return capability::kCauseNotRegistered;
  const auto& enabled = context.enabled_tool_namespaces();
  if (std::find(enabled.begin(), enabled.end(), tool->tool_namespace()) == enabled.end()) {
    return capability::kCauseNamespaceDisabled;
  }
  if (auto it = withheld.find(tool); it != withheld.end()) return it->second.code;
  return capability::kCauseNotOffered;
}

const Turn::Withheld* Turn::WithheldAtDiscovery(absl::string_view name) const {
  const tools::Tool* tool = tools.has_value() ? tools->Find(name) : nullptr;
  if (tool == nullptr) return nullptr;
  const auto& enabled = context.enabled_tool_namespaces();
  if (std::find(enabled.begin(), enabled.end(), tool->tool_namespace()) == enabled.end()) {
    return nullptr;
  }
  auto it = withheld.find(tool);
  return it == withheld.end() ? nullptr : &it->second;
}

void Turn::Describe(const protocol::v1::CapabilityRequest& request) {
  for (auto it = described.begin(); it != described.end(); ++it) {
    if (it->id() == request.id()) {
      described.erase(it);
      break;
    }
  }
  if (described.size() >= kMaxDescribed) described.erase(described.begin());
  described.push_back(request);
}

const protocol::v1::CapabilityRequest* Turn::Described(absl::string_view id) const {
  for (const protocol::v1::CapabilityRequest& request : described) {
    if (request.id() == id) return &request;
  }
  return nullptr;
}

void Turn::Emit(absl::string_view type, Value data, absl::Time at) {
  pb::ExecutionEvent& event = events.emplace_back();
  event.set_version("1");
  event.set_event_id(common::NewUuidV4());
  event.set_execution_id(request.execution_id());
  event.set_trace_id(context.trace_id());
  event.set_sequence(static_cast<int64_t>(events.size()) - 1);
  event.set_type(std::string(type));
  *event.mutable_data() = std::move(data);
  *event.mutable_occurred_at() = values::TimestampOf(at);
  changed.SignalAll();
}

}  // namespace sharedos::envelope::core
