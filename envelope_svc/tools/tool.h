// One registered tool as mediation uses it (semantics §3.9 steps 7–12): its validated
// definition and published projection, its input/output schemas compiled once, its
// requirement rule and provider binding. Immutable; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_H_

#include <google/protobuf/struct.pb.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "envelope_svc/tools/json_schema.h"
#include "sharedos/envelope/v1/registry.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::tools {

class Tool {
 public:
  // Validates `definition` (ValidateToolDefinition, normalising it; input_schema an object
  // schema with "type": "object"), compiles its schemas, and checks `rule` against it
  // (ValidateRequirementRule) and `provider` (a kind set; a host provider id an Identifier).
  // Errors: INVALID_ARGUMENT "<path>.<field>: <problem>", e.g.
  //   `tools[2] "files.read".definition.input_schema: not a valid JSON Schema: …`.
  static absl::StatusOr<std::shared_ptr<const Tool>> Create(protocol::v1::ToolDefinition definition,
                                                            v1::RequirementRule rule,
                                                            v1::ProviderBinding provider,
                                                            absl::string_view path);

  const std::string& name() const { return definition_.name(); }
  // The tool namespace (availability plane; enabledToolNamespaces).
  const std::string& tool_namespace() const { return definition_.namespace_(); }
  const protocol::v1::ToolDefinition& definition() const { return definition_; }
  // The declared ceiling: what discovery (Discover) is asked about.
  const protocol::v1::CapabilityRequirement& ceiling() const {
    return definition_.required_capability();
  }
  // publishToolDefinition (semantics §10.4), computed once.
  const protocol::v1::PublishedToolDefinition& published() const { return published_; }
  const v1::RequirementRule& requirement_rule() const { return rule_; }
  const v1::ProviderBinding& provider_binding() const { return provider_; }

  // Step 7: the call's arguments as a JSON object valid against the input schema — the parsed
  // call, used for both the requirement and the invocation.
  // Errors: an invalid_tool_arguments refusal; its detail (logs/tests only) names the failing
  // schema rules and may quote argument values.
  absl::StatusOr<nlohmann::json> ParseArguments(const google::protobuf::Struct& arguments) const;

  // Step 8: the requirement under the tool's rule (see requirement.h ResolveRequirement).
  // Errors: a tool_requirement_resolution_failed refusal.
  absl::StatusOr<protocol::v1::CapabilityRequirement> ResolveRequirement(
      const nlohmann::json& parsed_arguments) const;

  // Step 10: OK when `requirement` lies inside the declared ceiling (requirement.h
  // WithinCeiling). Errors: an invalid_tool_requirement refusal.
  absl::Status CheckWithinCeiling(const protocol::v1::CapabilityRequirement& requirement,
                                  const protocol::v1::Address& context_owner) const;

  // Step 12: `result` as a valid ToolResult for `call` (ValidateToolResult, normalised): the
  // same call_id and tool, status consistent with output/error, and a succeeded output valid
  // against the output schema when one is declared.
  // Errors: an invalid_tool_result refusal (detail for logs/tests only).
  absl::StatusOr<protocol::v1::ToolResult> ValidateResult(const protocol::v1::ToolResult& result,
                                                          const protocol::v1::ToolCall& call) const;

 private:
  Tool() = default;

  protocol::v1::ToolDefinition definition_;
  protocol::v1::PublishedToolDefinition published_;
  v1::RequirementRule rule_;
  v1::ProviderBinding provider_;
  std::shared_ptr<const JsonSchema> input_schema_;
  // Null when the definition declares no output schema.
  std::shared_ptr<const JsonSchema> output_schema_;
};

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_H_
