// The kernel-supplied `messages.request` tool (semantics §2.2, §3.9; seed ADR 0015): tool
// namespace `messages`, ceiling sharedos.messaging / [] / send, the requirement the recipient's
// addressPath appended ([kind, id]), write, annotations {readOnly: false, destructive: true,
// idempotent: false}, output schema {type: object}. Arguments are the recipient and the payload
// only: the envelope is built from the turn's trusted context. A turn offers it only when a
// message transport is attached (TurnTools). Stateless; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_MESSAGING_MESSAGES_TOOL_H_
#define SHAREDOS_ENVELOPE_SVC_MESSAGING_MESSAGES_TOOL_H_

#include <memory>

#include "absl/strings/string_view.h"
#include "envelope_svc/tools/tool.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::messaging {

inline constexpr absl::string_view kMessagesRequestToolName = "messages.request";
inline constexpr absl::string_view kMessagesToolNamespace = "messages";
inline constexpr absl::string_view kMessagingResourceNamespace = "sharedos.messaging";
inline constexpr absl::string_view kMessagingAction = "send";
inline constexpr absl::string_view kRecipientArgument = "recipient";
inline constexpr absl::string_view kPayloadArgument = "payload";

// MESSAGES_REQUEST_TOOL_DEFINITION (input schema: {type: object, properties: {recipient:
// {type: object}, payload: {}}, required: [recipient, payload], additionalProperties: false}).
protocol::v1::ToolDefinition MessagesRequestToolDefinition();

// The tool, compiled once (binding `messaging`, rule address_from_arguments "recipient").
std::shared_ptr<const tools::Tool> MessagesRequestTool();

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_MESSAGING_MESSAGES_TOOL_H_
