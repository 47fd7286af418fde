#include "envelope_svc/core/invocation.h"

#include <initializer_list>
#include <memory>
#include <utility>

#include "capability/errors.h"
#include "capability/reason_codes.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"
#include "envelope_svc/core/audit_records.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;
using ::google::protobuf::Value;
using values::CodeError;
using values::Num;
using values::Object;
using values::RefusedResult;
using values::Str;
using values::TimestampOf;

// A tool is repeatable when it reads or is declared idempotent (semantics §4.2).
bool Repeatable(const tools::Tool& tool) {
  return tool.definition().read_write() == pb::READ_WRITE_READ ||
         (tool.definition().annotations().has_idempotent() &&
          tool.definition().annotations().idempotent());
}

// tool.requested / tool.completed data: callId, tool, step (when declared), then `extra`.
Value CallData(const pb::ToolCall& call, std::optional<int64_t> step,
               std::initializer_list<std::pair<const char*, Value>> extra) {
  Value data = Object({{"callId", Str(call.id())}, {"tool", Str(call.tool())}});
  auto& fields = *data.mutable_struct_value()->mutable_fields();
  if (step.has_value()) fields["step"] = Num(static_cast<double>(*step));
  for (const auto& [key, value] : extra) fields[key] = value;
  return data;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// InvokeTool: validate → find → deadline → envelope checks → mediation → settle the call

absl::StatusOr<v1::InvokeToolResponse> Invocation::InvokeTool(
    const v1::InvokeToolRequest& request, const common::server::HostScope& scope) {
  ASSIGN_OR_RETURN(const pb::ToolCall call, ValidateRequest(request));
  ASSIGN_OR_RETURN(const std::shared_ptr<Turn> turn, table_.Find(request.turn_id(), scope));
  settler_.EnforceDeadline(*turn);
  const absl::Time now = clock_.Now();
  const CallEvent event{call,
                        request.has_step() ? std::optional<int64_t>(request.step()) : std::nullopt};
  ASSIGN_OR_RETURN(const Verdict verdict, CheckEnvelope(*turn, event, now));
  if (verdict.ends_turn) {
    EndForRefusals(*turn, verdict.code, now);
    v1::InvokeToolResponse response;
    *response.mutable_result() = RefusedResult(call, pb::TOOL_RESULT_STATUS_DENIED, verdict.code);
    *response.mutable_result()->mutable_completed_at() = TimestampOf(now);
    return response;
  }
  if (!verdict.code.empty()) return Refuse(*turn, event, now, verdict);
  MediationResult mediated = Mediate(*turn, *verdict.tool, call, now);
  if (mediated.required_authority.has_value()) {
    // What the kernel described, kept for an MCP escalation to name (docs/adr/0018).
    absl::MutexLock lock(&turn->mu);
    turn->Describe(*mediated.required_authority);
  }
  SettleCall(*turn, event, verdict.repeatable, mediated);
  v1::InvokeToolResponse response;
  *response.mutable_result() = std::move(mediated.result);
  if (mediated.required_authority.has_value()) {
    *response.mutable_required_authority() = *std::move(mediated.required_authority);
  }
  return response;
}

absl::StatusOr<pb::ToolCall> Invocation::ValidateRequest(const v1::InvokeToolRequest& request) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckTurnId(request.turn_id()));
  if (request.has_step() && request.step() < 0) {
    return absl::InvalidArgumentError("step: negative");
  }
  pb::ToolCall call = request.call();
  RETURN_IF_ERROR(validation::ValidateToolCall(request.has_call() ? &call : nullptr, "call"));
  return call;
}

absl::StatusOr<Invocation::Verdict> Invocation::CheckEnvelope(Turn& turn, const CallEvent& event,
                                                              absl::Time now) {
  absl::ReleasableMutexLock lock(&turn.mu);
  if (turn.phase == Phase::kEnded) {
    const bool past_bound = PastRefusalBound(turn);
    lock.Release();
    if (past_bound) return capability::errors::TurnEnded();
    return RefuseEnded(turn, event.call, now);
  }
  Verdict verdict;
  verdict.code = CheckDraining(turn, now);
  if (verdict.code.empty()) verdict.code = CheckStepBudget(turn, event.step);
  if (verdict.code.empty()) verdict.code = CheckCallBudget(turn);
  // Past the budget: recorded one by one up to the bound, then the turn ends (ADR 0016).
  if (!verdict.code.empty() && PastRefusalBound(turn)) {
    verdict.ends_turn = turn.phase == Phase::kRunning;
    if (!verdict.ends_turn) {
      lock.Release();
      return capability::errors::TurnEnded();
    }
    return verdict;
  }
  turn.Emit("tool.requested", CallData(event.call, event.step, {}), now);
  Turn::Offer offer;
  if (verdict.code.empty()) {
    // §3.9 steps 4–6 as the turn resolved them and §4.3 step 7: the turn's one offered check.
    offer = turn.OfferOf(event.call.tool());
    verdict.tool = offer.tool;
    if (!offer.offered()) {
      verdict.code = capability::kToolUnavailable;
      verdict.cause = offer.cause;
      verdict.withheld = offer.withheld;
      // Its decision is recorded first (Refuse), then tool.completed.
      if (verdict.withheld != nullptr) return verdict;
    }
  }
  if (!verdict.code.empty()) {
    turn.Emit(
        "tool.completed",
        CallData(event.call, event.step, {{"status", Str("denied")}, {"code", Str(verdict.code)}}),
        now);
    return verdict;
  }
  // In flight: the turn's ending waits for it, and safeToRetry counts it.
  verdict.repeatable = Repeatable(*offer.tool);
  ++turn.in_flight;
  if (!verdict.repeatable) ++turn.in_flight_unrepeatable;
  return verdict;
}

absl::string_view Invocation::CheckDraining(const Turn& turn, absl::Time now) {
  if (turn.phase == Phase::kEnding || turn.audit_outage || now >= turn.drain_at) {
    return capability::kTurnDraining;
  }
  return "";
}

absl::string_view Invocation::CheckStepBudget(Turn& turn, std::optional<int64_t> step) {
  if (!step.has_value()) return "";
  // Declared steps are claims: bounded by max_steps and by the distinct steps seen.
  const bool seen = turn.steps_seen.contains(*step);
  if (*step < turn.limits.max_steps() &&
      (seen || turn.steps_seen.size() < static_cast<size_t>(turn.limits.max_steps()))) {
    turn.steps_seen.insert(*step);
    return "";
  }
  return capability::kStepLimitExceeded;
}

absl::string_view Invocation::CheckCallBudget(Turn& turn) {
  if (turn.tool_calls >= turn.limits.max_tool_calls()) return capability::kToolCallLimitExceeded;
  ++turn.tool_calls;
  return "";
}

v1::InvokeToolResponse Invocation::Refuse(Turn& turn, const CallEvent& event, absl::Time now,
                                          Verdict verdict) {
  bool fail_closed = false;
  if (verdict.withheld != nullptr) {
    // Semantics §5.2: the decision (denied, discovery's code) immediately before the refusal.
    fail_closed = verdict.withheld->fail_closed;
    if (!RecordWithheldDecision(turn, *verdict.tool, event.call, now, *verdict.withheld)) {
      verdict.code = capability::kAuditUnavailable;
      verdict.cause = "";
      fail_closed = true;
    }
    absl::MutexLock lock(&turn.mu);
    if (turn.phase != Phase::kEnded) {
      turn.Emit("tool.completed",
                CallData(event.call, event.step,
                         {{"status", Str("denied")}, {"code", Str(verdict.code)}}),
                now);
    }
  }
  v1::InvokeToolResponse response;
  pb::ToolResult* result = response.mutable_result();
  *result = RefusedResult(event.call, pb::TOOL_RESULT_STATUS_DENIED, verdict.code);
  *result->mutable_completed_at() = TimestampOf(now);
  RecordEnvelopeRefusal(turn, event.call, now, *result, verdict.cause, fail_closed);
  return response;
}

bool Invocation::RecordWithheldDecision(Turn& turn, const tools::Tool& tool,
                                        const pb::ToolCall& call, absl::Time now,
                                        const Turn::Withheld& withheld) {
  if (audit_
          .RecordPreEffect(DiscoveryDeniedEvent(turn.context, now, tool.ceiling(), call.id(),
                                                tool.name(), withheld.code, withheld.fail_closed,
                                                turn.authority_hash))
          .ok()) {
    return true;
  }
  absl::MutexLock lock(&turn.mu);
  turn.audit_outage = true;
  return false;
}

MediationResult Invocation::Mediate(const Turn& turn, const tools::Tool& tool,
                                    const pb::ToolCall& call, absl::Time now) {
  MediationScope mediation;
  mediation.context = &turn.context;
  mediation.lease_id = turn.lease_id;
  mediation.authority_hash = turn.authority_hash;
  mediation.catalog_hash = turn.catalog_hash;
  mediation.tools = &*turn.tools;
  mediation.turn_deadline = turn.deadline;
  return mediator_.Invoke(mediation, tool, call, now);
}

void Invocation::SettleCall(Turn& turn, const CallEvent& event, bool repeatable,
                            const MediationResult& mediated) {
  absl::MutexLock lock(&turn.mu);
  --turn.in_flight;
  if (!repeatable) {
    --turn.in_flight_unrepeatable;
    if (mediated.provider_entered && mediated.result.status() != pb::TOOL_RESULT_STATUS_DENIED) {
      turn.unrepeatable_effect = true;
    }
  }
  if (mediated.audit_unavailable) turn.audit_outage = true;
  if (turn.phase != Phase::kEnded) {
    Value data =
        CallData(event.call, event.step,
                 {{"status", Str(common::ToolResultStatusName(mediated.result.status()))}});
    if (mediated.result.has_error()) {
      (*data.mutable_struct_value()->mutable_fields())["code"] =
          Str(mediated.result.error().code());
    }
    turn.Emit("tool.completed", std::move(data), clock_.Now());
  }
  turn.changed.SignalAll();
}

bool Invocation::PastRefusalBound(Turn& turn) const {
  if (turn.refusals_past_budget > options_.max_refusals_past_budget) return true;
  return ++turn.refusals_past_budget > options_.max_refusals_past_budget;
}

void Invocation::EndForRefusals(Turn& turn, absl::string_view code, absl::Time now) {
  Settlement ending = Settlement::Failed(CodeError(code), pb::ENDED_BY_ENVELOPE);
  ending.cause = std::string(capability::kCauseRefusalsExhausted);
  (*ending.metadata.mutable_fields())["cause"] = Str(capability::kCauseRefusalsExhausted);
  (*ending.metadata.mutable_fields())["refusalsPastBudget"] =
      Num(static_cast<double>(options_.max_refusals_past_budget));
  settler_.Finalize(turn, std::move(ending), now);
}

absl::Status Invocation::RefuseEnded(const Turn& turn, const pb::ToolCall& call, absl::Time now) {
  // An attempted operation all the same: recorded (tool.invoked, source envelope, turn_draining
  // — "no new calls" — with cause turn_ended); no event follows the terminal.
  RecordEnvelopeRefusal(
      turn, call, now,
      RefusedResult(call, pb::TOOL_RESULT_STATUS_DENIED, capability::kTurnDraining),
      capability::kCauseTurnEnded);
  return capability::errors::TurnEnded();
}

void Invocation::RecordEnvelopeRefusal(const Turn& turn, const pb::ToolCall& call, absl::Time at,
                                       const pb::ToolResult& result, absl::string_view cause,
                                       bool fail_closed) {
  ToolInvokedFacts facts;
  facts.fail_closed = fail_closed;
  facts.source = pb::AUDIT_SOURCE_ENVELOPE;
  facts.status = result.status();
  facts.reason = result.error().code();
  facts.cause = std::string(cause);
  table_.metrics().ToolCallRefused(facts.reason);
  facts.authority_hash = turn.authority_hash;
  facts.catalog_hash = turn.catalog_hash;
  // Post-effect (seed ADR 0023): the refusal stands whatever the audit log's state.
  (void)audit_.RecordPostEffect(ToolInvokedEvent(turn.context, at, call, facts));
}

}  // namespace sharedos::envelope::core
