#include "envelope_svc/core/settlement.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "capability/reason_codes.h"
#include "common/crypto/random.h"
#include "common/crypto/sha256.h"
#include "common/json/protocol_json.h"
#include "common/logging/log.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"
#include "envelope_svc/core/audit_records.h"
#include "envelope_svc/tools/escalation_tool.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;
using values::CodeError;
using values::FromJson;
using values::Num;
using values::Object;
using values::Str;
using values::TimestampOf;

// The ask of a requested authority (ADR 0019): capabilities, purpose, constraints, metadata.
// Its identity fields are discarded whatever they name (seed ADR 0019: "discarded and minted
// again from the context"); the authorizer mints them from the turn's trusted context.
absl::Status ValidateRequestedAuthority(pb::CapabilityRequest* request) {
  constexpr absl::string_view kPath = "escalate.requested_authority";
  request->clear_id();
  request->clear_namespace_id();
  request->clear_requester();
  request->clear_owner();
  request->clear_requested_at();
  RETURN_IF_ERROR(validation::CheckCount(request->capabilities_size(), 1,
                                         validation::kMaxCapabilities,
                                         absl::StrCat(kPath, ".capabilities")));
  for (int i = 0; i < request->capabilities_size(); ++i) {
    RETURN_IF_ERROR(validation::ValidateCapability(
        request->mutable_capabilities(i),
        validation::IndexPath(absl::StrCat(kPath, ".capabilities"), i)));
  }
  if (!request->purpose().empty()) {
    RETURN_IF_ERROR(
        validation::CheckPurpose(request->mutable_purpose(), absl::StrCat(kPath, ".purpose")));
  }
  if (request->has_constraints()) {
    RETURN_IF_ERROR(validation::ValidateCapabilityConstraints(request->mutable_constraints(),
                                                              absl::StrCat(kPath, ".constraints")));
  }
  if (request->has_metadata()) {
    RETURN_IF_ERROR(
        validation::CheckJsonObject(request->metadata(), absl::StrCat(kPath, ".metadata")));
  }
  return absl::OkStatus();
}

// `request`'s metadata first, then the settlement's own keys (the envelope's keys win).
void MergeRequestMetadata(const v1::FinishTurnRequest& request, Settlement& settlement) {
  Struct metadata = request.metadata();
  for (const auto& [key, value] : settlement.metadata.fields()) {
    (*metadata.mutable_fields())[key] = value;
  }
  settlement.metadata = std::move(metadata);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Settlement values

Settlement Settlement::Denied(const values::Refusal& verdict) {
  Settlement settlement;
  settlement.status = pb::EXECUTION_STATUS_DENIED;
  settlement.error = CodeError(verdict.code);
  settlement.event_type = "turn.denied";
  settlement.event_data = Object({{"code", Str(verdict.code)}});
  settlement.fail_closed = verdict.fail_closed;
  return settlement;
}

Settlement Settlement::Failed(pb::ProtocolError error, pb::EndedBy by) {
  Settlement settlement;
  settlement.status = pb::EXECUTION_STATUS_FAILED;
  settlement.ended_by = by;
  settlement.event_type = "turn.failed";
  settlement.event_data =
      Object({{"code", Str(error.code())},
              {"source", Str(by == pb::ENDED_BY_RUNTIME ? "runtime" : "envelope")}});
  settlement.error = std::move(error);
  return settlement;
}

Settlement Settlement::FailedOn(const values::Refusal& verdict, bool retryable) {
  Settlement settlement = Failed(CodeError(verdict.code, retryable), pb::ENDED_BY_ENVELOPE);
  settlement.fail_closed = verdict.fail_closed;
  return settlement;
}

Settlement Settlement::Interrupted() {
  pb::ProtocolError error = CodeError(capability::kOperationAborted, /*retryable=*/false);
  (*error.mutable_details()->mutable_fields())["failClosed"].set_bool_value(true);
  Settlement settlement = Failed(std::move(error), pb::ENDED_BY_ENVELOPE);
  settlement.audit_outcome = pb::AUDIT_OUTCOME_INTERRUPTED;
  settlement.fail_closed = true;
  return settlement;
}

Settlement Settlement::Cancelled() {
  Settlement settlement;
  settlement.status = pb::EXECUTION_STATUS_CANCELLED;
  settlement.error = CodeError(capability::kTurnCancelled);
  settlement.ended_by = pb::ENDED_BY_ENVELOPE;
  settlement.event_type = "turn.cancelled";
  settlement.event_data = Object({});
  return settlement;
}

Settlement Settlement::Completed(std::optional<Value> output) {
  Settlement settlement;
  settlement.status = pb::EXECUTION_STATUS_SUCCEEDED;
  settlement.output = std::move(output);
  settlement.event_type = "turn.completed";
  settlement.event_data = Object({});
  return settlement;
}

HarnessSettlement SettleHarnessExit(const v1::HarnessExitedOutcome& exited,
                                    bool escalation_latched) {
  HarnessSettlement settlement;
  auto& fields = *settlement.metadata.mutable_fields();
  if (!exited.outcome_status().empty()) fields["harnessOutcome"] = Str(exited.outcome_status());
  if (!exited.error_code().empty()) fields["harnessErrorCode"] = Str(exited.error_code());
  if (exited.has_exit_code()) fields["harnessExitCode"] = Num(exited.exit_code());
  if (escalation_latched) {
    settlement.status = pb::EXECUTION_STATUS_ESCALATED;
    return settlement;
  }
  if (exited.has_output() && exited.error_code().empty() &&
      (exited.outcome_status().empty() || exited.outcome_status() == "completed")) {
    settlement.status = pb::EXECUTION_STATUS_SUCCEEDED;
    settlement.output = exited.output();
    return settlement;
  }
  settlement.status = pb::EXECUTION_STATUS_FAILED;
  settlement.error =
      CodeError(exited.error_code().empty() ? capability::kHarnessExitedWithoutOutcome
                                            : absl::string_view(exited.error_code()));
  return settlement;
}

// ---------------------------------------------------------------------------------------------
// FinishTurn: validate → find → deadline → begin ending → settle the outcome → finalize

absl::StatusOr<v1::FinishTurnResponse> Settler::FinishTurn(const v1::FinishTurnRequest& request,
                                                           const common::server::HostScope& scope) {
  ASSIGN_OR_RETURN(Outcome outcome, ValidateFinish(request));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  if (request.has_escalate() && request.escalate().has_requested_authority()) {
    outcome.requested = request.escalate().requested_authority();
    RETURN_IF_ERROR(ValidateRequestedAuthority(&*outcome.requested));
  }
  EnforceDeadline(*turn);
  if (request.has_harness_exited() && turn->runtime != v1::RUNTIME_MCP) {
    return absl::FailedPreconditionError("harness_exited: the turn runs RUNTIME_DRIVER");
  }
  ASSIGN_OR_RETURN(const Snapshot snapshot, BeginEnding(*turn));
  ASSIGN_OR_RETURN(Settlement settlement,
                   SettleOutcome(*turn, request, std::move(outcome), snapshot));
  MergeRequestMetadata(request, settlement);
  Finalize(*turn, std::move(settlement));

  v1::FinishTurnResponse response;
  absl::MutexLock lock(&turn->mu);
  *response.mutable_result() = turn->result;
  response.set_escalation_id(turn->escalation_id);
  return response;
}

absl::StatusOr<Settler::Outcome> Settler::ValidateFinish(const v1::FinishTurnRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  if (request.has_metadata()) {
    RETURN_IF_ERROR(validation::CheckJsonObject(request.metadata(), "metadata"));
  }
  Outcome outcome;
  switch (request.outcome_case()) {
    case v1::FinishTurnRequest::kComplete:
      if (!request.complete().has_output()) {
        return absl::InvalidArgumentError("complete.output: required");
      }
      RETURN_IF_ERROR(validation::CheckJsonValue(request.complete().output(), "complete.output"));
      break;
    case v1::FinishTurnRequest::kFail:
      outcome.failure = request.fail().error();
      RETURN_IF_ERROR(validation::ValidateProtocolError(
          request.fail().has_error() ? &outcome.failure : nullptr, "fail.error"));
      break;
    case v1::FinishTurnRequest::kEscalate:
      outcome.reason = request.escalate().reason();
      RETURN_IF_ERROR(validation::CheckTrimmedString(
          &outcome.reason, validation::kMaxEscalationReasonLength, "escalate.reason"));
      break;
    case v1::FinishTurnRequest::kHarnessExited: {
      const v1::HarnessExitedOutcome& exited = request.harness_exited();
      std::string code = exited.error_code();
      RETURN_IF_ERROR(validation::CheckOptionalIdentifier(&code, "harness_exited.error_code"));
      // Bounded before it is kept (metadata.harnessOutcome reaches turn.ended's record).
      std::string status = exited.outcome_status();
      RETURN_IF_ERROR(
          validation::CheckOptionalIdentifier(&status, "harness_exited.outcome_status"));
      if (exited.has_output()) {
        RETURN_IF_ERROR(validation::CheckJsonValue(exited.output(), "harness_exited.output"));
      }
      break;
    }
    case v1::FinishTurnRequest::OUTCOME_NOT_SET:
      return absl::InvalidArgumentError("outcome: required");
  }
  return outcome;
}

absl::StatusOr<Settler::Snapshot> Settler::BeginEnding(Turn& turn) {
  absl::MutexLock lock(&turn.mu);
  if (turn.phase == Phase::kEnded) {
    return absl::FailedPreconditionError("the turn has already ended");
  }
  if (turn.phase == Phase::kEnding) {
    return absl::FailedPreconditionError("the turn is already ending");
  }
  turn.phase = Phase::kEnding;
  turn.changed.SignalAll();
  // Calls still with the kernel settle first (bounded; they are refused turn_draining anew).
  while (turn.in_flight > 0) {
    if (turn.changed.WaitWithTimeout(&turn.mu, options_.finish_wait)) break;
  }
  return TakeSnapshot(turn);
}

Settler::Snapshot Settler::TakeSnapshot(const Turn& turn) {
  Snapshot snapshot;
  snapshot.audit_outage = turn.audit_outage;
  snapshot.safe = turn.SafeToRetry();
  snapshot.escalation_asked = turn.escalation_asked;
  snapshot.calls_after_escalation = turn.calls_after_escalation;
  snapshot.escalation_requirement = turn.escalation_requirement;
  return snapshot;
}

absl::StatusOr<Settlement> Settler::SettleOutcome(Turn& turn, const v1::FinishTurnRequest& request,
                                                  Outcome outcome, const Snapshot& snapshot) {
  if (snapshot.audit_outage) {
    return Settlement::FailedOn(values::Refusal::AuditUnavailable(), snapshot.safe);
  }
  if (snapshot.escalation_asked.has_value() && (request.has_complete() || request.has_fail())) {
    // The harness asked for a human, then its host reported another ending: the ask stands
    // (seed ADR 0018), the harness's own outcome is kept beside it.
    Struct harness;
    auto& fields = *harness.mutable_fields();
    fields["harnessOutcome"] = Str(request.has_complete() ? "completed" : "failed");
    if (request.has_fail()) fields["harnessErrorCode"] = Str(outcome.failure.code());
    return SettleLatched(turn, snapshot, std::move(harness));
  }
  switch (request.outcome_case()) {
    case v1::FinishTurnRequest::kComplete:
      return Settlement::Completed(request.complete().output());
    case v1::FinishTurnRequest::kFail:
      // A runtime's retryable stands only when no non-repeatable call may have had an effect.
      if (outcome.failure.retryable() && !snapshot.safe) outcome.failure.set_retryable(false);
      return Settlement::Failed(std::move(outcome.failure), pb::ENDED_BY_RUNTIME);
    case v1::FinishTurnRequest::kEscalate:
      return SettleEscalate(turn, outcome);
    case v1::FinishTurnRequest::kHarnessExited:
      return SettleHarnessExited(turn, request.harness_exited(), snapshot);
    case v1::FinishTurnRequest::OUTCOME_NOT_SET:
      break;
  }
  // Unreachable: ValidateFinish refused a request without an outcome.
  return Settlement();
}

absl::StatusOr<Settlement> Settler::SettleEscalate(Turn& turn, const Outcome& outcome) {
  bool offered = false;
  {
    absl::MutexLock lock(&turn.mu);
    offered = turn.Offers(tools::kEscalationToolName);
  }
  if (!offered) {
    // The affordance was not offered: nothing is recorded but the turn's end.
    return Settlement::Failed(CodeError(capability::kToolUnavailable), pb::ENDED_BY_ENVELOPE);
  }
  return RecordEscalation(turn, outcome.reason,
                          outcome.requested.has_value() ? &*outcome.requested : nullptr);
}

absl::StatusOr<Settlement> Settler::SettleHarnessExited(Turn& turn,
                                                        const v1::HarnessExitedOutcome& exited,
                                                        const Snapshot& snapshot) {
  HarnessSettlement settled =
      SettleHarnessExit(exited, /*escalation_latched=*/snapshot.escalation_asked.has_value());
  if (snapshot.escalation_asked.has_value()) {
    return SettleLatched(turn, snapshot, std::move(settled.metadata));
  }
  Settlement settlement;
  if (settled.error.has_value()) {
    settlement = Settlement::Failed(*std::move(settled.error), pb::ENDED_BY_RUNTIME);
  } else {
    settlement = Settlement::Completed(std::move(settled.output));
    settlement.status = settled.status;
  }
  for (const auto& [key, value] : settled.metadata.fields()) {
    (*settlement.metadata.mutable_fields())[key] = value;
  }
  return settlement;
}

absl::StatusOr<Settlement> Settler::SettleLatched(Turn& turn, const Snapshot& snapshot,
                                                  Struct harness) {
  // The latch engaged (seed ADR 0018): the ask is recorded now, the harness's own outcome kept
  // under metadata.
  // It names the authority its ask named among those the kernel described (docs/adr/0018).
  const pb::CapabilityRequest* requirement =
      snapshot.escalation_requirement.has_value() ? &*snapshot.escalation_requirement : nullptr;
  ASSIGN_OR_RETURN(Settlement settlement,
                   RecordEscalation(turn, *snapshot.escalation_asked, requirement));
  auto& fields = *harness.mutable_fields();
  if (requirement != nullptr) fields["escalationRequirement"] = Str(requirement->id());
  fields["escalationAsked"] = Object(
      {{"tool", Str(tools::kEscalationToolName)}, {"reason", Str(*snapshot.escalation_asked)}});
  fields["callsAfterEscalation"] = Num(snapshot.calls_after_escalation);
  for (const auto& [key, value] : harness.fields()) {
    (*settlement.metadata.mutable_fields())[key] = value;
  }
  return settlement;
}

Settlement Settler::UnrecordedAsk(const Snapshot& snapshot) {
  Settlement settlement = Settlement::Cancelled();
  auto& fields = *settlement.metadata.mutable_fields();
  fields["harnessOutcome"] = Str("timed_out");
  fields["escalationAsked"] = Object(
      {{"tool", Str(tools::kEscalationToolName)}, {"reason", Str(*snapshot.escalation_asked)}});
  fields["escalationRecorded"].set_bool_value(false);
  fields["callsAfterEscalation"] = Num(snapshot.calls_after_escalation);
  return settlement;
}

absl::StatusOr<Settlement> Settler::RecordEscalation(Turn& turn, const std::string& reason,
                                                     const pb::CapabilityRequest* requested,
                                                     std::optional<absl::Time> at,
                                                     const std::string& requested_event_id) {
  az::RecordEscalationRequest record;
  record.set_lease_id(turn.lease_id);
  record.set_execution_id(turn.request.execution_id());
  record.set_reason(reason);
  *record.mutable_operation_instant() = TimestampOf(at.value_or(clock_.Now()));
  record.set_requested_event_id(requested_event_id);
  if (requested != nullptr) {
    az::AuthorityAsk* ask = record.mutable_requested_authority_ask();
    *ask->mutable_capabilities() = requested->capabilities();
    ask->set_purpose(requested->purpose().empty() ? turn.context.purpose() : requested->purpose());
    if (requested->has_constraints()) *ask->mutable_constraints() = requested->constraints();
    if (requested->has_metadata()) *ask->mutable_metadata() = requested->metadata();
  }
  absl::StatusOr<az::RecordEscalationResponse> recorded =
      authorizer_.RecordEscalation(record, options_.authorizer_timeout);
  if (!recorded.ok()) {
    absl::MutexLock lock(&turn.mu);
    turn.phase = Phase::kRunning;
    turn.changed.SignalAll();
    return absl::UnavailableError(absl::StrCat("escalation not recorded: authorizer_svc answered ",
                                               absl::StatusCodeToString(recorded.status().code())));
  }
  Settlement settlement;
  settlement.status = pb::EXECUTION_STATUS_ESCALATED;
  settlement.event_type = "turn.escalated";
  settlement.event_data =
      Object({{"reason", Str(recorded->escalation().reason())},
              {"reviewer", FromJson(common::AddressToJson(recorded->escalation().reviewer()))}});
  settlement.escalation = recorded->escalation();
  settlement.escalation_id = recorded->escalation_id();
  return settlement;
}

// ---------------------------------------------------------------------------------------------
// CancelTurn, deadlines

absl::StatusOr<v1::CancelTurnResponse> Settler::CancelTurn(const v1::CancelTurnRequest& request,
                                                           const common::server::HostScope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  // The deadline's ending wins over the host's when both are due.
  const Canceller by = clock_.Now() >= turn->deadline ? Canceller::kDeadline : Canceller::kHost;
  v1::CancelTurnResponse response;
  ASSIGN_OR_RETURN(*response.mutable_result(), Cancel(*turn, by));
  absl::MutexLock lock(&turn->mu);
  response.set_escalation_id(turn->escalation_id);
  return response;
}

absl::StatusOr<pb::ExecutionResult> Settler::Cancel(Turn& turn, Canceller by) {
  Snapshot snapshot;
  {
    absl::MutexLock lock(&turn.mu);
    while (turn.phase == Phase::kEnding) turn.changed.Wait(&turn.mu);
    if (turn.phase == Phase::kEnded) return turn.result;
    turn.phase = Phase::kEnding;
    snapshot = TakeSnapshot(turn);
  }
  Settlement settlement = Settlement::Cancelled();
  if (snapshot.audit_outage) {
    settlement = Settlement::FailedOn(values::Refusal::AuditUnavailable(), snapshot.safe);
  } else if (snapshot.escalation_asked.has_value()) {
    Struct harness;
    (*harness.mutable_fields())["harnessOutcome"] =
        Str(by == Canceller::kDeadline ? "timed_out" : "cancelled");
    absl::StatusOr<Settlement> latched = SettleLatched(turn, snapshot, std::move(harness));
    if (latched.ok()) {
      settlement = *std::move(latched);
    } else if (by == Canceller::kHost || clock_.Now() < turn.deadline + options_.escalation_retry) {
      // The turn runs on (RecordEscalation reopened it); the host or the next sweep retries.
      return latched.status();
    } else {
      // Past the retry window the lease is about to expire: end it, the ask visible.
      absl::MutexLock lock(&turn.mu);
      if (turn.phase != Phase::kRunning) return latched.status();
      turn.phase = Phase::kEnding;
      settlement = UnrecordedAsk(snapshot);
    }
  }
  Finalize(turn, std::move(settlement));
  absl::MutexLock lock(&turn.mu);
  return turn.result;
}

void Settler::EnforceDeadline(Turn& turn) {
  if (clock_.Now() < turn.deadline) return;
  {
    absl::MutexLock lock(&turn.mu);
    if (turn.phase == Phase::kEnded) return;
  }
  // A latched turn whose ask cannot be recorded yet stays running; the next sweep retries.
  (void)Cancel(turn, Canceller::kDeadline);
}

int Settler::CancelExpired() {
  const std::vector<std::shared_ptr<Turn>> due = table_.Sweep(clock_.Now());
  int ended = 0;
  for (const std::shared_ptr<Turn>& turn : due) {
    {
      absl::MutexLock lock(&turn->mu);
      // A turn already settling ends by its own hand (and leaves the deadlines then).
      if (turn->phase != Phase::kRunning) continue;
    }
    if (Cancel(*turn, Canceller::kDeadline).ok()) ++ended;
  }
  return ended;
}

// ---------------------------------------------------------------------------------------------
// Finalize

void Settler::Finalize(Turn& turn, Settlement settlement, std::optional<absl::Time> ended_at) {
  const absl::Time completed_at = ended_at.value_or(clock_.Now());
  pb::ExecutionResult result;
  {
    absl::MutexLock lock(&turn.mu);
    if (turn.phase == Phase::kEnded) return;
    turn.Emit(settlement.event_type, std::move(settlement.event_data), completed_at);
    result = TerminalResult(turn, settlement, completed_at);
    turn.result = result;
    turn.escalation_id = settlement.escalation_id;
    turn.phase = Phase::kEnded;
    turn.changed.SignalAll();
  }
  // Post-effect: recorded once, whatever the audit log's state; never changes the result.
  pb::AuditEvent ended =
      TurnEndedEvent(turn.context, result, settlement.ended_by, settlement.fail_closed);
  if (!turn.ended_event_id.empty()) ended.set_id(turn.ended_event_id);
  if (!settlement.cause.empty()) ended.set_cause(settlement.cause);
  if (settlement.audit_outcome.has_value()) {
    ended.set_outcome(*settlement.audit_outcome);
    if (settlement.ended_by.has_value()) ended.set_ended_by(*settlement.ended_by);
  }
  // Only once turn.ended is in the outbox may the journal forget the turn (ADR 0009).
  const bool ended_recorded = audit_.RecordPostEffect(std::move(ended)).ok();
  if (ended_recorded && options_.journal != nullptr) (void)options_.journal->Remove(turn.id);
  // A turn whose ending is not in the outbox stays journaled, and its lease open: the next start
  // ends it the same way under it (a latched turn records its ask again, the same request); the
  // lease expires on its own.
  if (!turn.lease_id.empty() && (ended_recorded || options_.journal == nullptr)) {
    az::CloseTurnAuthorityRequest close;
    close.set_lease_id(turn.lease_id);
    // A lease that cannot be closed expires on its own.
    (void)authorizer_.CloseTurnAuthority(close, options_.authorizer_timeout);
  }
  const bool was_open = table_.Retire(turn, completed_at);
  table_.metrics().TurnFinished(result.status(), was_open);
  common::logging::Log(common::logging::Level::kInfo, "turn.ended", turn.context.trace_id(),
                       {{"turn_id", turn.id},
                        {"execution_id", result.execution_id()},
                        {"status", pb::ExecutionStatus_Name(result.status())},
                        {"reason_code", result.error().code()}});
}

void Settler::JournalLatch(const Turn& turn, const std::string& reason, absl::Time at,
                           std::vector<pb::CapabilityRequest> described,
                           std::string requirement_id) {
  if (options_.journal == nullptr) return;
  TurnJournal::Entry::Latch latch;
  latch.asked_at = at;
  latch.reason_sha256 = common::Sha256Hex(reason);
  latch.reason_length = static_cast<int64_t>(reason.size());
  latch.requested_event_id = common::NewUuidV4();
  latch.described = std::move(described);
  latch.requirement_id = std::move(requirement_id);
  if (absl::Status journaled = options_.journal->MarkLatched(turn.id, latch); !journaled.ok()) {
    common::logging::Log(
        common::logging::Level::kWarning, "turn.latch_not_journaled", turn.context.trace_id(),
        {{"turn_id", turn.id}, {"code", absl::StatusCodeToString(journaled.code())}});
  }
}

Settlement Settler::RecoverLatched(Turn& turn, const TurnJournal::Entry::Latch& latch) {
  Struct harness;
  auto& fields = *harness.mutable_fields();
  fields["harnessOutcome"] = Str("interrupted");
  fields["escalationAsked"] =
      Object({{"tool", Str(tools::kEscalationToolName)},
              {"reason", Str(kRecoveredEscalationReason)},
              {"reasonSha256", Str(latch.reason_sha256)},
              {"reasonLength", Num(static_cast<double>(latch.reason_length))}});
  // The requirement the ask named, among the authorities described to the turn (docs/adr/0018).
  std::optional<pb::CapabilityRequest> requirement;
  {
    absl::MutexLock lock(&turn.mu);
    turn.phase = Phase::kEnding;
    for (const pb::CapabilityRequest& described : latch.described) turn.Describe(described);
    if (const pb::CapabilityRequest* named =
            latch.requirement_id.empty() ? nullptr : turn.Described(latch.requirement_id);
        named != nullptr) {
      requirement = *named;
    }
  }
  if (requirement.has_value()) fields["escalationRequirement"] = Str(requirement->id());
  absl::StatusOr<Settlement> recorded = RecordEscalation(
      turn, std::string(kRecoveredEscalationReason),
      requirement.has_value() ? &*requirement : nullptr, latch.asked_at, latch.requested_event_id);
  Settlement settlement;
  if (recorded.ok()) {
    settlement = *std::move(recorded);
  } else {
    // Nothing is granted by an ask that is not recorded: the turn ends as any interrupted one,
    // the ask visible.
    settlement = Settlement::Interrupted();
    fields["escalationRecorded"].set_bool_value(false);
  }
  for (const auto& [key, value] : harness.fields()) {
    (*settlement.metadata.mutable_fields())[key] = value;
  }
  return settlement;
}

absl::StatusOr<int> Settler::RecoverInterrupted() {
  if (options_.journal == nullptr) return 0;
  ASSIGN_OR_RETURN(std::vector<TurnJournal::Entry> open, options_.journal->List());
  int ended = 0;
  for (TurnJournal::Entry& entry : open) {
    ASSIGN_OR_RETURN(absl::Time at,
                     options_.journal->MarkInterrupted(
                         entry.turn_id, entry.interrupted_at.value_or(clock_.Now())));
    auto turn = std::make_shared<Turn>();
    turn->id = entry.turn_id;
    turn->request.set_execution_id(entry.execution_id);
    *turn->request.mutable_context() = entry.context;
    turn->context = std::move(entry.context);
    turn->runtime = entry.runtime;
    turn->started_at = entry.started_at;
    turn->lease_id = std::move(entry.lease_id);
    turn->ended_event_id = std::move(entry.ended_event_id);
    // A turn whose execution is held already (it cannot be: the table is new) is left journaled.
    if (!table_.Reserve(*turn).ok()) continue;
    table_.PublishRunning(turn);
    Finalize(
        *turn,
        entry.latch.has_value() ? RecoverLatched(*turn, *entry.latch) : Settlement::Interrupted(),
        at);
    ++ended;
  }
  return ended;
}

pb::ExecutionResult Settler::TerminalResult(const Turn& turn, Settlement& settlement,
                                            absl::Time completed_at) const {
  pb::ExecutionResult result;
  result.set_version("1");
  result.set_execution_id(turn.request.execution_id());
  result.set_trace_id(turn.context.trace_id());
  result.set_status(settlement.status);
  if (settlement.output.has_value()) *result.mutable_output() = *std::move(settlement.output);
  if (settlement.error.has_value()) *result.mutable_error() = *std::move(settlement.error);
  if (settlement.escalation.has_value()) {
    *result.mutable_escalation() = *std::move(settlement.escalation);
  }
  *result.mutable_events() = {turn.events.begin(), turn.events.end()};
  *result.mutable_started_at() = TimestampOf(turn.started_at);
  *result.mutable_completed_at() = TimestampOf(completed_at);
  Struct metadata = std::move(settlement.metadata);
  if (turn.started) (*metadata.mutable_fields())["runtime"] = runtime_.ToValue(turn.runtime);
  if (!metadata.fields().empty()) *result.mutable_metadata() = std::move(metadata);
  return result;
}

}  // namespace sharedos::envelope::core
