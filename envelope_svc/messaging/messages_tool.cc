#include "envelope_svc/messaging/messages_tool.h"

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "common/json/proto_json.h"

namespace sharedos::envelope::messaging {

protocol::v1::ToolDefinition MessagesRequestToolDefinition() {
  protocol::v1::ToolDefinition definition;
  definition.set_name(std::string(kMessagesRequestToolName));
  definition.set_description(
      "Send a message to another principal and wait for its reply. Give the recipient address "
      "and the payload; the answer is the reply's payload.");
  definition.set_namespace_(std::string(kMessagesToolNamespace));
  definition.set_source("sharedos");
  definition.set_read_write(protocol::v1::READ_WRITE_WRITE);
  definition.mutable_annotations()->set_read_only(false);
  definition.mutable_annotations()->set_destructive(true);
  definition.mutable_annotations()->set_idempotent(false);
  protocol::v1::CapabilityRequirement* ceiling = definition.mutable_required_capability();
  ceiling->mutable_resource()->set_namespace_(std::string(kMessagingResourceNamespace));
  ceiling->set_action(std::string(kMessagingAction));
  const nlohmann::json input = {
      {"type", "object"},
      {"properties",
       {{std::string(kRecipientArgument), {{"type", "object"}}},
        {std::string(kPayloadArgument), nlohmann::json::object()}}},
      {"required", {std::string(kRecipientArgument), std::string(kPayloadArgument)}},
      {"additionalProperties", false},
  };
  // The literals always convert.
  *definition.mutable_input_schema() = *common::JsonToProtoStruct(input);
  *definition.mutable_output_schema() = *common::JsonToProtoStruct({{"type", "object"}});
  return definition;
}

std::shared_ptr<const tools::Tool> MessagesRequestTool() {
  static const std::shared_ptr<const tools::Tool>* const kTool = [] {
    v1::RequirementRule rule;
    rule.mutable_address_from_arguments()->set_address_argument(std::string(kRecipientArgument));
    v1::ProviderBinding binding;
    binding.mutable_messaging();
    absl::StatusOr<std::shared_ptr<const tools::Tool>> tool =
        tools::Tool::Create(MessagesRequestToolDefinition(), std::move(rule), std::move(binding),
                            kMessagesRequestToolName);
    // The definition is a constant: failing to compile it is a programming error.
    if (!tool.ok()) std::abort();
    return new std::shared_ptr<const tools::Tool>(*std::move(tool));
  }();
  return *kTool;
}

}  // namespace sharedos::envelope::messaging
