// Requirement resolution from a call's arguments (semantics §3.9 steps 8 and 10) and the
// registry-time check of a requirement rule. Stateless; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_REQUIREMENT_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_REQUIREMENT_H_

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sharedos/envelope/v1/registry.pb.h"
#include "sharedos/protocol/v1/common.pb.h"

namespace sharedos::envelope::tools {

// Checks a rule against the tool's validated definition at load: a kind is set; a fixed
// requirement is a valid CapabilityRequirement; path_from_arguments names a path argument (and
// an owner argument, when set) declared in the input schema's `properties`, and a mode.
// Errors: INVALID_ARGUMENT "<path>.<field>: <problem>".
absl::Status ValidateRequirementRule(const v1::RequirementRule& rule,
                                     const nlohmann::json& input_schema, absl::string_view path);

// The requirement a call with `arguments` (a parsed JSON object, valid against the input
// schema) needs under `rule`, given the tool's declared `ceiling`:
//   ceiling             → the ceiling;
//   fixed               → that requirement;
//   path_from_arguments → {namespace and action of the ceiling, path (ceiling path + segments,
//                          or segments alone), owner from the owner argument when present};
//   address_from_arguments → {namespace and action of the ceiling, path = ceiling path +
//                          addressPath of the Address argument ([kind, id])}.
// A path argument is "a/b/c" (split on '/', "" is no segment) or ["a","b","c"]; the owner
// argument an Address object {"kind":"human","userId":…}. An owner left out means the context
// owner. The result is a valid CapabilityRequirement (segments checked: no "..", no "/", …).
// Errors: a tool_requirement_resolution_failed refusal (ToolRefusal) whose detail says why.
absl::StatusOr<protocol::v1::CapabilityRequirement> ResolveRequirement(
    const v1::RequirementRule& rule, const protocol::v1::CapabilityRequirement& ceiling,
    const nlohmann::json& arguments);

// An Address argument: exactly {"kind":"human","userId":…} | agent/agentId |
// group/conversationId | service/serviceId.
// Errors: a tool_requirement_resolution_failed refusal.
absl::StatusOr<protocol::v1::Address> ParseAddressArgument(const nlohmann::json& value);

// Whether `requirement` lies inside the declared `ceiling` (§3.9 step 10): the same action and
// resource namespace, the same owner after defaulting both to `context_owner`, and the
// ceiling's path a segment prefix of the requirement's. Strings compare exactly: a ceiling
// action "*" admits only "*".
bool WithinCeiling(const protocol::v1::CapabilityRequirement& requirement,
                   const protocol::v1::CapabilityRequirement& ceiling,
                   const protocol::v1::Address& context_owner);

// `requirement` with its resource owner set to `context_owner` when it names none (what a
// provider receives).
protocol::v1::CapabilityRequirement WithDefaultOwner(
    protocol::v1::CapabilityRequirement requirement, const protocol::v1::Address& context_owner);

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_REQUIREMENT_H_
