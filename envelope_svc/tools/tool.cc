#include "envelope_svc/tools/tool.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "capability/reason_codes.h"
#include "common/json/proto_json.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"
#include "envelope_svc/tools/requirement.h"
#include "envelope_svc/tools/tool_refusal.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::validation::FieldPath;
using ::sharedos::common::validation::InvalidArgumentAt;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::ToolResult;

absl::StatusOr<std::shared_ptr<const JsonSchema>> CompileSchema(
    const google::protobuf::Struct& schema, absl::string_view path, nlohmann::json* json_out) {
  absl::StatusOr<nlohmann::json> json = common::ProtoStructToJson(schema);
  if (!json.ok()) return InvalidArgumentAt(path, json.status().message());
  absl::StatusOr<std::shared_ptr<const JsonSchema>> compiled = JsonSchema::Compile(*json);
  if (!compiled.ok()) return InvalidArgumentAt(path, compiled.status().message());
  if (json_out != nullptr) *json_out = *std::move(json);
  return compiled;
}

absl::Status ValidateProviderBinding(const v1::ProviderBinding& provider, absl::string_view path) {
  switch (provider.kind_case()) {
    case v1::ProviderBinding::kFiles:
    case v1::ProviderBinding::kNone:
    case v1::ProviderBinding::kMessaging:
      return absl::OkStatus();
    case v1::ProviderBinding::kGrpc: {
      std::string id = provider.grpc().provider_id();
      RETURN_IF_ERROR(common::validation::CheckIdentifier(
          &id, FieldPath(FieldPath(path, "grpc"), "provider_id")));
      if (id != provider.grpc().provider_id()) {
        return InvalidArgumentAt(FieldPath(FieldPath(path, "grpc"), "provider_id"),
                                 "surrounding whitespace");
      }
      return absl::OkStatus();
    }
    case v1::ProviderBinding::KIND_NOT_SET:
      break;
  }
  return InvalidArgumentAt(path, "required");
}

}  // namespace

absl::StatusOr<std::shared_ptr<const Tool>> Tool::Create(protocol::v1::ToolDefinition definition,
                                                         v1::RequirementRule rule,
                                                         v1::ProviderBinding provider,
                                                         absl::string_view path) {
  const std::string definition_path = FieldPath(path, "definition");
  RETURN_IF_ERROR(common::validation::ValidateToolDefinition(&definition, definition_path));

  std::shared_ptr<Tool> tool(new Tool());
  nlohmann::json input_json;
  const std::string input_path = FieldPath(definition_path, "input_schema");
  ASSIGN_OR_RETURN(tool->input_schema_,
                   CompileSchema(definition.input_schema(), input_path, &input_json));
  auto type = input_json.find("type");
  if (type == input_json.end() || *type != "object") {
    return InvalidArgumentAt(FieldPath(input_path, "type"), "must be \"object\"");
  }
  if (definition.has_output_schema()) {
    ASSIGN_OR_RETURN(tool->output_schema_,
                     CompileSchema(definition.output_schema(),
                                   FieldPath(definition_path, "output_schema"), nullptr));
  }
  RETURN_IF_ERROR(ValidateRequirementRule(rule, input_json, FieldPath(path, "requirement")));
  RETURN_IF_ERROR(ValidateProviderBinding(provider, FieldPath(path, "provider")));

  tool->published_ = common::PublishToolDefinition(definition);
  tool->definition_ = std::move(definition);
  tool->rule_ = std::move(rule);
  tool->provider_ = std::move(provider);
  return std::shared_ptr<const Tool>(std::move(tool));
}

absl::StatusOr<nlohmann::json> Tool::ParseArguments(
    const google::protobuf::Struct& arguments) const {
  absl::StatusOr<nlohmann::json> json = common::ProtoStructToJson(arguments);
  if (!json.ok()) return ToolRefusal(capability::kInvalidToolArguments, json.status().message());
  absl::Status valid = input_schema_->Validate(*json);
  if (!valid.ok()) return ToolRefusal(capability::kInvalidToolArguments, valid.message());
  return json;
}

absl::StatusOr<CapabilityRequirement> Tool::ResolveRequirement(
    const nlohmann::json& parsed_arguments) const {
  return tools::ResolveRequirement(rule_, ceiling(), parsed_arguments);
}

absl::Status Tool::CheckWithinCeiling(const CapabilityRequirement& requirement,
                                      const protocol::v1::Address& context_owner) const {
  if (WithinCeiling(requirement, ceiling(), context_owner)) return absl::OkStatus();
  return ToolRefusal(capability::kInvalidToolRequirement,
                     absl::StrCat("tool ", name(), ": resolved requirement outside the ceiling"));
}

absl::StatusOr<ToolResult> Tool::ValidateResult(const ToolResult& result,
                                                const protocol::v1::ToolCall& call) const {
  ToolResult checked = result;
  absl::Status valid = common::validation::ValidateToolResult(&checked, "result");
  if (!valid.ok()) return ToolRefusal(capability::kInvalidToolResult, valid.message());
  if (checked.call_id() != call.id()) {
    return ToolRefusal(capability::kInvalidToolResult, "result.call_id: not the call's id");
  }
  if (checked.tool() != call.tool()) {
    return ToolRefusal(capability::kInvalidToolResult, "result.tool: not the call's tool");
  }
  if (checked.status() == protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED && output_schema_ != nullptr) {
    absl::StatusOr<nlohmann::json> output = common::ProtoValueToJson(checked.output());
    if (!output.ok()) return ToolRefusal(capability::kInvalidToolResult, output.status().message());
    absl::Status matches = output_schema_->Validate(*output);
    if (!matches.ok()) {
      return ToolRefusal(capability::kInvalidToolResult,
                         absl::StrCat("result.output: ", matches.message()));
    }
  }
  return checked;
}

}  // namespace sharedos::envelope::tools
