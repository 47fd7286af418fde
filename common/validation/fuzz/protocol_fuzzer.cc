// Fuzzes protocol "1" messages as they arrive from outside — protobuf binary (gRPC) or protobuf
// JSON — through strict validation (common/validation). The first byte picks the message type and
// the encoding; the rest is the encoded message. Properties: nothing crashes; validation is
// deterministic and idempotent (a message it accepted, and so normalised, is accepted again and
// left unchanged).

#include <google/protobuf/util/json_util.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/json/json_nesting.h"
#include "common/validation/protocol.h"

namespace {

namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;

bool Decode(absl::string_view bytes, bool json, google::protobuf::Message* message) {
  if (!json) return message->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  // Every JSON entry point bounds nesting before a parser sees the text.
  if (!sharedos::common::CheckJsonNesting(bytes, "message").ok()) return false;
  return google::protobuf::util::JsonStringToMessage(std::string(bytes), message).ok();
}

// Decodes, validates twice and checks the second pass changes nothing.
template <typename Message>
void Run(absl::string_view bytes, bool json,
         absl::Status (*validate)(Message*, const validation::PathRef&)) {
  Message message;
  if (!Decode(bytes, json, &message)) return;
  if (!validate(&message, "m").ok()) return;
  std::string once = message.SerializeAsString();
  if (!validate(&message, "m").ok()) std::abort();
  if (message.SerializeAsString() != once) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool json = (data[0] & 0x80) != 0;
  absl::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] & 0x7f) {
    case 0:
      Run<pb::CapabilityGrant>(bytes, json, validation::ValidateCapabilityGrant);
      break;
    case 1:
      Run<pb::CapabilityRequest>(bytes, json, validation::ValidateCapabilityRequest);
      break;
    case 2:
      Run<pb::AccessContext>(bytes, json, validation::ValidateAccessContext);
      break;
    case 3:
      Run<pb::AuthorizationDecision>(bytes, json, validation::ValidateAuthorizationDecision);
      break;
    case 4:
      Run<pb::Escalation>(bytes, json, validation::ValidateEscalation);
      break;
    case 5:
      Run<pb::MessageEnvelope>(bytes, json, validation::ValidateMessageEnvelope);
      break;
    case 6:
      Run<pb::ToolDefinition>(bytes, json, validation::ValidateToolDefinition);
      break;
    case 7:
      Run<pb::ToolCatalog>(bytes, json, validation::ValidateToolCatalog);
      break;
    case 8:
      Run<pb::ToolCall>(bytes, json, validation::ValidateToolCall);
      break;
    case 9:
      Run<pb::ToolResult>(bytes, json, validation::ValidateToolResult);
      break;
    case 10:
      Run<pb::ExecutionRequest>(bytes, json, validation::ValidateExecutionRequest);
      break;
    case 11:
      Run<pb::ExecutionEvent>(bytes, json, validation::ValidateExecutionEvent);
      break;
    case 12:
      Run<pb::ExecutionResult>(bytes, json, validation::ValidateExecutionResult);
      break;
    case 13:
      Run<pb::RuntimeManifest>(bytes, json, validation::ValidateRuntimeManifest);
      break;
    case 14:
      Run<pb::AuditEvent>(bytes, json, validation::ValidateAuditEvent);
      break;
    case 15:
      Run<pb::ResourceReach>(bytes, json, validation::ValidateResourceReach);
      break;
    case 16:
      Run<pb::ReachResult>(bytes, json, validation::ValidateReachResult);
      break;
    case 17:
      Run<pb::PublishedToolDefinition>(bytes, json, validation::ValidatePublishedToolDefinition);
      break;
    default:
      break;
  }
  return 0;
}
