// The escalation affordance `sharedos.escalate` (semantics §4.5): registered, never executed.
// Drivers and the MCP latch recognise the name; a forwarded call fails
// escalation_not_terminated. Stateless; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_ESCALATION_TOOL_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_ESCALATION_TOOL_H_

#include "absl/strings/string_view.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::tools {

inline constexpr absl::string_view kEscalationToolName = "sharedos.escalate";
inline constexpr absl::string_view kEscalationToolNamespace = "sharedos";
inline constexpr absl::string_view kEscalationResourceNamespace = "sharedos";
inline constexpr absl::string_view kEscalationResourcePathSegment = "escalation";
inline constexpr absl::string_view kEscalationAction = "request";
// The optional argument naming the authority asked for: the capreq- id of a requirement a refusal
// of this turn described (docs/adr/0018).
inline constexpr absl::string_view kEscalationRequirementArgument = "requirement";

// ESCALATION_TOOL_DEFINITION: namespace and source "sharedos", read, annotations
// {readOnly: true}, ceiling sharedos/["escalation"]/request, input schema {type: object,
// properties: {reason: {type: string, minLength: 1, maxLength: 512}, requirement: {type: string,
// pattern: ^capreq-[0-9a-f]{64}$}}, required: [reason], additionalProperties: false}. A registry
// entry named sharedos.escalate must equal it.
protocol::v1::ToolDefinition EscalationToolDefinition();

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_ESCALATION_TOOL_H_
