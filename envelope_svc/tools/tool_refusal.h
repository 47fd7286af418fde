// Refusals of the tool layer (semantics §6.2) as absl::Status values.
//
// A refusal is FAILED_PRECONDITION whose message is exactly the reason code
// (capability::kInvalidToolArguments, …): safe for audit and for the agent. Why it was refused
// (which argument, which schema rule — text that may quote argument or result values) rides as a
// status payload, the *detail*: for logs and tests only, never for audit or a ToolResult. A refusal
// turns into the caller-facing ProtocolError through RefusalError, whose message is a fixed
// phrase per code (capability::CodeMessage). Stateless; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_REFUSAL_H_
#define SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_REFUSAL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::tools {

// FAILED_PRECONDITION `code` carrying `detail` (logs/tests only) as its payload.
absl::Status ToolRefusal(absl::string_view code, absl::string_view detail);

// A refusal with a cause (the audit record's metadata.cause, seed ADR 0023) and the fixed facts
// the caller is told in the error's details (numbers and names only; never argument or result
// values): e.g. tool_execution_failed, cause result_too_large, {"limitBytes": 1048576}.
absl::Status ToolRefusalWithCause(absl::string_view code, absl::string_view cause,
                                  const google::protobuf::Struct& facts, absl::string_view detail);

// The cause of a refusal made by ToolRefusalWithCause; empty otherwise.
std::string RefusalCause(const absl::Status& status);

// True for a status made by ToolRefusal.
bool IsToolRefusal(const absl::Status& status);

// The refusal's detail; empty for a status that is not a refusal.
std::string RefusalDetail(const absl::Status& status);

// ProtocolError {code, fixed message, retryable: false} of a refusal; a refusal with a cause
// adds details {cause, …its facts}. A non-OK status that is
// not a refusal (a bug below) becomes tool_execution_failed: no status text is ever copied.
protocol::v1::ProtocolError RefusalError(const absl::Status& refusal);

// ToolResult {call_id, tool, FAILED, RefusalError(refusal), completed_at} for `call`.
protocol::v1::ToolResult RefusalResult(const protocol::v1::ToolCall& call,
                                       const absl::Status& refusal, absl::Time completed_at);

}  // namespace sharedos::envelope::tools

#endif  // SHAREDOS_ENVELOPE_SVC_TOOLS_TOOL_REFUSAL_H_
