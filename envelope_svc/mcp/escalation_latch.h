// The one invoker every MCP tools/call passes through, and the escalation latch wrapped around it
// (seed ADR 0018; semantics §4.5 "Over MCP").
//
// EngineInvoker is TurnEngine::InvokeTool under the turn's own scope: the same checks, codes and
// audit as the gRPC seat. EscalationLatch wraps it: on a turn whose catalogue offers
// sharedos.escalate, the first call naming it is answered succeeded with
// {escalated: true, reason, note} (the note tells the harness to stop) and never reaches the
// engine, so it leaves no operation in the record; every later call is refused in band
// escalation_pending (retryable false) and counted in callsAfterEscalation. However the turn then
// ends (FinishTurn harness_exited / complete / fail, CancelTurn, the deadline) it ends escalated
// (TurnEngine). An ungranted name passes straight
// through and is refused tool_unavailable by the engine. Thread-safe (the state is the turn's).

#ifndef SHAREDOS_ENVELOPE_SVC_MCP_ESCALATION_LATCH_H_
#define SHAREDOS_ENVELOPE_SVC_MCP_ESCALATION_LATCH_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn_engine.h"
#include "google/protobuf/struct.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::mcp {

inline constexpr absl::string_view kEscalationPendingMessage =
    "The turn has asked for a human; no further tool calls are run.";
// What the ask is answered with: stop, a human decides.
inline constexpr absl::string_view kEscalationStopNote =
    "Escalation requested: a human reviewer will decide on the authority you asked for. Stop "
    "now: make no further tool calls and end your turn.";
// The reason recorded when the ask carries none (semantics §4.5 escalationRequest).
inline constexpr absl::string_view kEscalationFallbackReason =
    "The agent asked for human review without giving a reason.";

// `escalationRequest`'s reason from a call's arguments: `reason` trimmed, cut to 512 UTF-16 code
// units without splitting a character; missing, not a string or empty → the fallback sentence.
std::string EscalationReason(const google::protobuf::Struct& arguments);
// The ask's `requirement` (a capreq- id the turn was refused with, docs/adr/0018), trimmed;
// absent or empty → nullopt; not a string → "" (no turn holds it: refused as undescribed).
std::optional<std::string> EscalationRequirement(const google::protobuf::Struct& arguments);

class ToolInvoker {
 public:
  virtual ~ToolInvoker() = default;
  // One MCP call on `turn`. Refusals are ToolResults.
  // Errors: as TurnEngine::InvokeTool (INVALID_ARGUMENT for a malformed call; FAILED_PRECONDITION
  // when the turn has ended; NOT_FOUND when it is forgotten).
  virtual absl::StatusOr<protocol::v1::ToolResult> Invoke(const core::TurnEngine::McpTurn& turn,
                                                          const protocol::v1::ToolCall& call) = 0;
};

// TurnEngine::InvokeTool (no declared step: MCP calls are bounded by maxToolCalls).
class EngineInvoker : public ToolInvoker {
 public:
  explicit EngineInvoker(core::TurnEngine& engine) : engine_(engine) {}
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const core::TurnEngine::McpTurn& turn,
                                                  const protocol::v1::ToolCall& call) override;

 private:
  core::TurnEngine& engine_;
};

class EscalationLatch : public ToolInvoker {
 public:
  // Borrows all three.
  EscalationLatch(core::TurnEngine& engine, ToolInvoker& inner, const common::Clock& clock)
      : engine_(engine), inner_(inner), clock_(clock) {}
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const core::TurnEngine::McpTurn& turn,
                                                  const protocol::v1::ToolCall& call) override;

 private:
  core::TurnEngine& engine_;
  ToolInvoker& inner_;
  const common::Clock& clock_;
};

}  // namespace sharedos::envelope::mcp

#endif  // SHAREDOS_ENVELOPE_SVC_MCP_ESCALATION_LATCH_H_
