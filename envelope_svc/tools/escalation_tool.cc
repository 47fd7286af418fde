#include "envelope_svc/tools/escalation_tool.h"

#include <nlohmann/json.hpp>
#include <string>

#include "common/json/proto_json.h"
#include "common/validation/limits.h"

namespace sharedos::envelope::tools {

protocol::v1::ToolDefinition EscalationToolDefinition() {
  protocol::v1::ToolDefinition definition;
  definition.set_name(std::string(kEscalationToolName));
  definition.set_description(
      "Ask a human for authority this turn lacks. Give the reason, and as requirement the "
      "capreq- id a refusal of this turn named; the turn ends escalated and a reviewer decides "
      "on exactly that authority.");
  definition.set_namespace_(std::string(kEscalationToolNamespace));
  definition.set_source("sharedos");
  definition.set_read_write(protocol::v1::READ_WRITE_READ);
  definition.mutable_annotations()->set_read_only(true);
  protocol::v1::CapabilityRequirement* ceiling = definition.mutable_required_capability();
  ceiling->mutable_resource()->set_namespace_(std::string(kEscalationResourceNamespace));
  ceiling->mutable_resource()->add_path(std::string(kEscalationResourcePathSegment));
  ceiling->set_action(std::string(kEscalationAction));
  const nlohmann::json schema = {
      {"type", "object"},
      {"properties",
       {{"reason",
         {{"type", "string"},
          {"minLength", 1},
          {"maxLength", common::validation::kMaxEscalationReasonLength}}},
        {std::string(kEscalationRequirementArgument),
         {{"type", "string"}, {"pattern", "^capreq-[0-9a-f]{64}$"}}}}},
      {"required", {"reason"}},
      {"additionalProperties", false},
  };
  // The literal above always converts.
  *definition.mutable_input_schema() = *common::JsonToProtoStruct(schema);
  return definition;
}

}  // namespace sharedos::envelope::tools
