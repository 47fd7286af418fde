// InvokeTool (semantics §4.3, RuntimeHost.invokeTool): one tool call of a turn, in the order
// its steps run —
//   the request validated → the turn found (scope) → its deadline enforced
//   → a turn already ended: the attempt recorded (turn_draining, cause turn_ended) and
//     FAILED_PRECONDITION
//   → tool.requested → draining (ending, audit outage, drain window) → the step budget of a
//     declared step → the call budget → offered this turn, under the tool namespaces enabled now
//     (Turn::OfferOf: tool_unavailable with its cause — semantics §3.9 steps 4–6 and §4.3 step 7
//     in one check, docs/adr/0024)
//   → kernel mediation (mediator.h)
//   → the call settled on the turn: in-flight counts, a non-repeatable effect, an audit outage
//     latched, tool.completed.
// Every envelope refusal is a ToolResult recorded as tool.invoked, source envelope
// (post-effect), with tool.completed {status denied, code}.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_INVOCATION_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_INVOCATION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/mediator.h"
#include "envelope_svc/core/settlement.h"
#include "envelope_svc/core/turn.h"
#include "envelope_svc/core/turn_table.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

// Runs tool calls of held turns. Thread-safe: a call's checks and counts are atomic under its
// turn's mutex, which is never held across mediation or an audit call. Borrows every dependency.
class Invocation {
 public:
  struct Options {
    // Refusals recorded one by one past a turn's budget (turn_draining, step_limit_exceeded,
    // tool_call_limit_exceeded, calls after its end); the next one ends a running turn failed
    // with that refusal's code (turn.ended cause refusals_exhausted) and is not recorded on its
    // own, and calls after that are refused without a record (ADR 0016).
    int32_t max_refusals_past_budget = 32;
  };

  Invocation(TurnTable& table, Settler& settler, Mediator& mediator,
             audit::client::AuditWriter& audit, const common::Clock& clock, Options options)
      : table_(table),
        settler_(settler),
        mediator_(mediator),
        audit_(audit),
        clock_(clock),
        options_(options) {}
  Invocation(const Invocation&) = delete;
  Invocation& operator=(const Invocation&) = delete;

  // TurnEngine::InvokeTool (turn_engine.h), errors included.
  absl::StatusOr<v1::InvokeToolResponse> InvokeTool(const v1::InvokeToolRequest& request,
                                                    const common::server::HostScope& scope);

  // Records an envelope refusal of `call` (tool.invoked, source envelope; post-effect). Also
  // for the MCP latch's refusal of an ask (TurnEngine::StepEscalationLatch).
  void RecordEnvelopeRefusal(const Turn& turn, const protocol::v1::ToolCall& call, absl::Time at,
                             const protocol::v1::ToolResult& result, absl::string_view cause,
                             bool fail_closed = false);

 private:
  // The call as its events name it: callId, tool and the declared step.
  struct CallEvent {
    const protocol::v1::ToolCall& call;
    std::optional<int64_t> step;
  };
  // What the envelope's checks decided: a refusal (code, cause) or a call in flight.
  struct Verdict {
    absl::string_view code;
    absl::string_view cause;
    // A tool withheld at discovery: its decision is recorded before the refusal (and the
    // refusal's tool.completed waits for that record).
    const Turn::Withheld* withheld = nullptr;
    // The turn's tool the call names (resolved once by the offered check; handed to mediation).
    const tools::Tool* tool = nullptr;
    bool repeatable = true;
    // The refusal past the budget that reached the bound: the turn ends (no record of its own).
    bool ends_turn = false;
  };

  // The steps, in order.
  static absl::StatusOr<protocol::v1::ToolCall> ValidateRequest(
      const v1::InvokeToolRequest& request);
  absl::StatusOr<Verdict> CheckEnvelope(Turn& turn, const CallEvent& event, absl::Time now)
      ABSL_LOCKS_EXCLUDED(turn.mu);
  static absl::string_view CheckDraining(const Turn& turn, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(turn.mu);
  static absl::string_view CheckStepBudget(Turn& turn, std::optional<int64_t> step)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(turn.mu);
  static absl::string_view CheckCallBudget(Turn& turn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(turn.mu);
  v1::InvokeToolResponse Refuse(Turn& turn, const CallEvent& event, absl::Time now,
                                Verdict verdict);
  // The authorization.checked (denied, discovery's code) a withheld tool's refusal follows
  // (pre-effect). False when audit could not take it: the turn latches the outage.
  bool RecordWithheldDecision(Turn& turn, const tools::Tool& tool,
                              const protocol::v1::ToolCall& call, absl::Time now,
                              const Turn::Withheld& withheld);
  MediationResult Mediate(const Turn& turn, const tools::Tool& tool,
                          const protocol::v1::ToolCall& call, absl::Time now);
  void SettleCall(Turn& turn, const CallEvent& event, bool repeatable,
                  const MediationResult& mediated) ABSL_LOCKS_EXCLUDED(turn.mu);

  // Counts a refusal past the budget; true when it is beyond the bound (not recorded).
  bool PastRefusalBound(Turn& turn) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(turn.mu);
  // Ends `turn` for refusals past its budget: failed `code`, cause refusals_exhausted.
  void EndForRefusals(Turn& turn, absl::string_view code, absl::Time now);
  // A call on a turn that has ended, recorded while under the refusal bound: FAILED_PRECONDITION.
  absl::Status RefuseEnded(const Turn& turn, const protocol::v1::ToolCall& call, absl::Time now);

  TurnTable& table_;
  Settler& settler_;
  Mediator& mediator_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  const Options options_;
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_INVOCATION_H_
