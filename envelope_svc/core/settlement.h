// How turns end (semantics §4.2 steps 14–16): FinishTurn's outcomes (complete, fail, escalate,
// harness_exited), CancelTurn, the deadline, and every ending at admission. Each ending writes the
// turn's one terminal event and frozen result, records turn.ended once (post-effect) and closes
// the authority lease. An audit outage latched during the turn overrides any outcome:
// failed audit_unavailable, retryable only when safe to retry. Otherwise a turn whose MCP
// escalation latch engaged ends escalated however it ends (seed ADR 0018), the harness's own
// outcome under metadata.harnessOutcome.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_SETTLEMENT_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_SETTLEMENT_H_

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn.h"
#include "envelope_svc/core/turn_journal.h"
#include "envelope_svc/core/turn_table.h"
#include "envelope_svc/core/values.h"
#include "google/protobuf/struct.pb.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"

namespace sharedos::envelope::core {

// How a turn ends: its status, output or error, escalation, who ended it, the terminal event,
// the outcome's metadata and whether the verdict that ended it is fail-closed. A value; not
// shared between threads.
struct Settlement {
  protocol::v1::ExecutionStatus status = protocol::v1::EXECUTION_STATUS_FAILED;
  std::optional<google::protobuf::Value> output;
  std::optional<protocol::v1::ProtocolError> error;
  std::optional<protocol::v1::Escalation> escalation;
  // The id the grant store stored `escalation` under (FinishTurnResponse.escalation_id).
  std::string escalation_id;
  std::optional<protocol::v1::EndedBy> ended_by;
  // The terminal event.
  std::string event_type;
  google::protobuf::Value event_data;
  // The outcome's metadata (merged first).
  google::protobuf::Struct metadata;
  // turn.ended's outcome when not the one the status maps to (interrupted).
  std::optional<protocol::v1::AuditOutcome> audit_outcome;
  // turn.ended's cause (the situation behind its reason code; e.g. refusals_exhausted).
  std::string cause;
  // turn.ended's failClosed: carried from the verdict that ended the turn (values::Refusal's
  // fail_closed, or an interruption), never derived from the terminal code. A runtime's own
  // failure code is its answer, not a fail-closed verdict of this kernel.
  bool fail_closed = false;

  // denied at admission by `verdict`: turn.denied {code}; fail_closed from the verdict.
  static Settlement Denied(const values::Refusal& verdict);
  // failed by `by`: turn.failed {code, source runtime | envelope}; not fail-closed.
  static Settlement Failed(protocol::v1::ProtocolError error, protocol::v1::EndedBy by);
  // failed by the envelope on `verdict` (an audit outage): turn.failed {code, source envelope},
  // CodeError(verdict.code, retryable); fail_closed from the verdict.
  static Settlement FailedOn(const values::Refusal& verdict, bool retryable = false);
  // cancelled (turn_cancelled, by the envelope): turn.cancelled {}.
  static Settlement Cancelled();
  // succeeded with `output`: turn.completed {}.
  static Settlement Completed(std::optional<google::protobuf::Value> output);
  // failed operation_aborted by the envelope, fail closed, not retryable (the turn was open when
  // its envelope stopped): turn.failed {code, source envelope}; turn.ended outcome interrupted.
  static Settlement Interrupted();
};

// The reason a recovered latched turn's escalation is recorded with (ADR 0009, "A latched
// escalation"): the harness's own text is never journaled, so a recovery cannot repeat it.
inline constexpr absl::string_view kRecoveredEscalationReason =
    "The harness asked for a human before its envelope stopped; the reason it gave was not kept "
    "across the restart (its SHA-256 and length are in the turn's metadata.escalationAsked).";

// The terminal outcome of an MCP harness that exited (envelope.proto HarnessExitedOutcome):
// with a latched escalation → escalated (the caller records it); output with outcome
// "completed" → succeeded; otherwise failed with error_code, or
// harness_exited_without_outcome. Exposed for tests.
struct HarnessSettlement {
  protocol::v1::ExecutionStatus status = protocol::v1::EXECUTION_STATUS_UNSPECIFIED;
  std::optional<google::protobuf::Value> output;
  std::optional<protocol::v1::ProtocolError> error;
  // metadata.harnessOutcome / harnessErrorCode.
  google::protobuf::Struct metadata;
};
HarnessSettlement SettleHarnessExit(const v1::HarnessExitedOutcome& exited,
                                    bool escalation_latched);

// Ends turns. Thread-safe: the state it changes is the turn's (under its mutex) and the table's;
// no lock is held across an authorizer or audit call. Borrows every dependency.
class Settler {
 public:
  struct Options {
    // Per authorizer RPC (RecordEscalation, CloseTurnAuthority).
    absl::Duration authorizer_timeout = absl::Seconds(2);
    // How long FinishTurn waits (real time) for calls still running before settling anyway.
    absl::Duration finish_wait = absl::Seconds(10);
    // A latched MCP turn past its deadline whose escalation the authorizer cannot record is
    // retried by every later sweep for this long, then ends cancelled with the ask kept in its
    // metadata (escalationAsked, escalationRecorded false): its lease expires soon after.
    absl::Duration escalation_retry = absl::Seconds(20);
    // The journal of open turns (ADR 0009): a turn's row goes once its turn.ended is written.
    // Borrowed; nullptr: none.
    TurnJournal* journal = nullptr;
  };

  Settler(authorizer::client::AuthorizerClient& authorizer, audit::client::AuditWriter& audit,
          const common::Clock& clock, TurnTable& table, const RuntimeManifest& runtime,
          Options options)
      : authorizer_(authorizer),
        audit_(audit),
        clock_(clock),
        table_(table),
        runtime_(runtime),
        options_(options) {}
  Settler(const Settler&) = delete;
  Settler& operator=(const Settler&) = delete;

  // TurnEngine::FinishTurn (turn_engine.h), errors included.
  absl::StatusOr<v1::FinishTurnResponse> FinishTurn(const v1::FinishTurnRequest& request,
                                                    const common::server::HostScope& scope);
  // TurnEngine::CancelTurn.
  absl::StatusOr<v1::CancelTurnResponse> CancelTurn(const v1::CancelTurnRequest& request,
                                                    const common::server::HostScope& scope);
  // TurnEngine::CancelExpired.
  int CancelExpired();

  // Cancels `turn` if its deadline has passed.
  void EnforceDeadline(Turn& turn);
  // Who cancels a turn: its host (CancelTurn) or its deadline.
  enum class Canceller { kHost, kDeadline };
  // Ends a running turn cancelled (failed audit_unavailable after an outage; escalated when its
  // MCP latch engaged, metadata.harnessOutcome "cancelled" or "timed_out"); answers its result,
  // whoever ended it.
  // Errors: UNAVAILABLE (a latched turn's escalation was not recorded; the turn runs on — the
  // deadline retries it until Options::escalation_retry has passed).
  absl::StatusOr<protocol::v1::ExecutionResult> Cancel(Turn& turn, Canceller by);
  // Ends `turn` with `settlement` once: result, terminal event, turn.ended (under the turn's
  // ended_event_id when set), its journal row removed, lease closed, the table told. A turn
  // already ended stays as it is. `completed_at` absent: now.
  void Finalize(Turn& turn, Settlement settlement,
                std::optional<absl::Time> completed_at = std::nullopt);

  // The MCP latch of `turn` engaged at `at` with `reason` (StepEscalationLatch): journals it
  // (ADR 0009) — the instant, the reason's SHA-256 and length, a fresh id for the recovered
  // escalation.requested, the authorities `described` to the turn and the capreq- id of the one
  // the ask named (`requirement_id`, empty: none; docs/adr/0018) — fsynced before the ask is
  // answered. A journal that cannot take it leaves the latch in memory only (logged, no reason
  // text): the turn still ends escalated unless the process dies first. No journal: nothing.
  void JournalLatch(const Turn& turn, const std::string& reason, absl::Time at,
                    std::vector<protocol::v1::CapabilityRequest> described,
                    std::string requirement_id);

  // Ends every turn the journal holds (open when the envelope last stopped): each is published,
  // then ended at the instant first fixed for it, so a repeated recovery writes the same
  // turn.ended under the same id (audit_svc keeps one). A turn without a latch ends
  // Interrupted(); a latched one ends escalated exactly as a latched ending does (the ask
  // recorded at the authorizer, requested_at = the latch's instant, reason
  // kRecoveredEscalationReason, escalation.requested under the journaled id, so a repeat stores
  // and writes nothing twice; metadata harnessOutcome "interrupted" and escalationAsked with the
  // reason's hash and length) — or, when the authorizer does not record it, Interrupted() with
  // that metadata and escalationRecorded false. Answers how many it ended.
  // Errors: those of the journal (the envelope must not serve then).
  absl::StatusOr<int> RecoverInterrupted();

 private:
  // A FinishTurn request's outcome, validated.
  struct Outcome {
    protocol::v1::ProtocolError failure;
    std::string reason;
    std::optional<protocol::v1::CapabilityRequest> requested;
  };
  // What the turn held when it began ending.
  struct Snapshot {
    bool audit_outage = false;
    bool safe = true;
    std::optional<std::string> escalation_asked;
    int32_t calls_after_escalation = 0;
    // The described authority the latched ask named (Turn::escalation_requirement).
    std::optional<protocol::v1::CapabilityRequest> escalation_requirement;
  };
  // The turn's snapshot as it begins ending (phase kEnding). Requires turn.mu.
  static Snapshot TakeSnapshot(const Turn& turn) ABSL_EXCLUSIVE_LOCKS_REQUIRED(turn.mu);

  // FinishTurn's steps, in order.
  static absl::StatusOr<Outcome> ValidateFinish(const v1::FinishTurnRequest& request);
  absl::StatusOr<Snapshot> BeginEnding(Turn& turn) ABSL_LOCKS_EXCLUDED(turn.mu);
  absl::StatusOr<Settlement> SettleOutcome(Turn& turn, const v1::FinishTurnRequest& request,
                                           Outcome outcome, const Snapshot& snapshot);
  absl::StatusOr<Settlement> SettleEscalate(Turn& turn, const Outcome& outcome);
  absl::StatusOr<Settlement> SettleHarnessExited(Turn& turn, const v1::HarnessExitedOutcome& exited,
                                                 const Snapshot& snapshot);
  // A turn whose MCP latch engaged (seed ADR 0018), however it ends: the ask is recorded and the
  // turn ends escalated, `harness` (harnessOutcome, harnessErrorCode?, …) kept in its metadata
  // with escalationAsked and callsAfterEscalation.
  // Errors: UNAVAILABLE (as RecordEscalation).
  absl::StatusOr<Settlement> SettleLatched(Turn& turn, const Snapshot& snapshot,
                                           google::protobuf::Struct harness);
  // The ending of a latched turn past its deadline when the ask cannot be recorded in time:
  // cancelled, the ask kept visible in metadata.
  static Settlement UnrecordedAsk(const Snapshot& snapshot);

  // The ending of a journaled latched turn at recovery (RecoverInterrupted): escalated naming
  // the requirement the ask named, as the live ending (SettleLatched) does.
  Settlement RecoverLatched(Turn& turn, const TurnJournal::Entry::Latch& latch);

  // Records the escalation at the authorizer and answers the escalated settlement; requested_at
  // is `at` (absent: now), escalation.requested written under `requested_event_id` when set.
  // Errors: UNAVAILABLE (the authorizer did not record it; `turn` is running again).
  absl::StatusOr<Settlement> RecordEscalation(Turn& turn, const std::string& reason,
                                              const protocol::v1::CapabilityRequest* requested,
                                              std::optional<absl::Time> at = std::nullopt,
                                              const std::string& requested_event_id = "");
  // The terminal result of `turn` ended with `settlement` at `completed_at`.
  protocol::v1::ExecutionResult TerminalResult(const Turn& turn, Settlement& settlement,
                                               absl::Time completed_at) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(turn.mu);

  authorizer::client::AuthorizerClient& authorizer_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  TurnTable& table_;
  const RuntimeManifest& runtime_;
  const Options options_;
};

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_SETTLEMENT_H_
