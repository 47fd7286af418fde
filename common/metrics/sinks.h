// The metrics each SharedOS component reports, one class per component, each built once from a
// `Metrics*` (null: every call is a no-op) with every series it can touch resolved up front, so a
// hot path costs a branch, an index into a small fixed array and an atomic add — no map lookup,
// no allocation. Labels come from fixed vocabularies only (reason codes, turn statuses, MCP method
// names); a value outside a vocabulary is counted under "other". The reason-code vocabularies are
// the caller's (capability/reason_codes.h, a plane above this one), passed in at construction.
// Thread-safe.

#ifndef SHAREDOS_COMMON_METRICS_SINKS_H_
#define SHAREDOS_COMMON_METRICS_SINKS_H_

#include <array>
#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/metrics/metrics.h"

namespace sharedos::common::metrics {

// The index of `value` in `vocabulary`, or vocabulary.size() ("other").
template <size_t N>
size_t IndexOf(const std::array<absl::string_view, N>& vocabulary, absl::string_view value) {
  for (size_t i = 0; i < N; ++i) {
    if (vocabulary[i] == value) return i;
  }
  return N;
}

// authorizer_svc: sharedos_decisions_total{operation, outcome, reason_code, fail_closed} and
// sharedos_escalations_requested_total.
class DecisionMetrics {
 public:
  enum class Operation : uint8_t { kAuthorize, kAdmitTurn };
  // The decision codes (semantics §6.1) and audit_unavailable, "allowed" first
  // (capability::kDecisionReasonCodes).
  using ReasonCodes = std::array<absl::string_view, 12>;

  DecisionMetrics(Metrics* metrics, const ReasonCodes& reason_codes);

  void Decided(Operation operation, absl::string_view reason_code, bool fail_closed);
  void EscalationRequested();

 private:
  static constexpr size_t kCodes = 13;  // ReasonCodes and "other".
  const ReasonCodes reason_codes_;
  std::array<std::array<std::array<prometheus::Counter*, 2>, kCodes>, 2> decisions_{};
  prometheus::Counter* escalations_requested_ = nullptr;
};

// grantstore_svc: sharedos_escalations_resolved_total{resolution}.
class EscalationMetrics {
 public:
  enum class Resolution : uint8_t { kApproved, kDenied, kExpired, kOther };
  explicit EscalationMetrics(Metrics* metrics);
  void Resolved(Resolution resolution);

 private:
  std::array<prometheus::Counter*, 4> resolved_{};
};

// envelope_svc: sharedos_turns_open, sharedos_turns_finished_total{status},
// sharedos_budget_refusals_total{reason_code} and sharedos_mcp_requests_total{method, status}.
class TurnMetrics {
 public:
  // Terminal turn statuses, lower case, in the order of protocol.v1.ExecutionStatus (1..5; the
  // protocol is frozen).
  static const std::array<absl::string_view, 5>& TerminalStatuses();
  // step_limit_exceeded, tool_call_limit_exceeded, turn_draining (capability::kTurnBudgetCodes).
  using BudgetCodes = std::array<absl::string_view, 3>;
  // The MCP methods a harness calls.
  static const std::array<absl::string_view, 6>& McpMethods();
  enum class McpStatus : uint8_t { kOk, kError };

  TurnMetrics(Metrics* metrics, const BudgetCodes& budget_codes);

  void TurnOpened();
  // A turn ended with ExecutionStatus `execution_status`; `was_open`: it had been counted open
  // (false for a turn that ended while it was being opened).
  void TurnFinished(int execution_status, bool was_open);
  // Counted only when `reason_code` is a budget code.
  void ToolCallRefused(absl::string_view reason_code);
  void McpRequest(absl::string_view method, McpStatus status);

 private:
  const BudgetCodes budget_codes_;
  prometheus::Gauge* open_ = nullptr;
  std::array<prometheus::Counter*, 6> finished_{};
  std::array<prometheus::Counter*, 3> budget_{};
  std::array<std::array<prometheus::Counter*, 2>, 7> mcp_{};
};

// audit_svc's log: sharedos_audit_appends_total (events made durable),
// sharedos_audit_group_commit_size, sharedos_audit_commit_seconds,
// sharedos_audit_chain_head_sequence and sharedos_audit_verify_total. (The writers' outboxes:
// OutboxMetrics.)
class AuditMetrics {
 public:
  explicit AuditMetrics(Metrics* metrics);

  // One group commit of `events` events (`appended` of them new, the rest duplicates) that took
  // `elapsed` and ended at `head_sequence`.
  void Committed(int64_t events, int64_t appended, absl::Duration elapsed, int64_t head_sequence);
  // The chain's head as found at start-up.
  void Head(int64_t head_sequence);
  // One chain verification answered: sharedos_audit_verify_total{result="ok"|"broken"}.
  void Verified(bool ok);

 private:
  prometheus::Counter* appends_ = nullptr;
  prometheus::Histogram* group_size_ = nullptr;
  prometheus::Histogram* commit_seconds_ = nullptr;
  prometheus::Gauge* head_ = nullptr;
  std::array<prometheus::Counter*, 2> verified_{};  // broken, ok
};

// One audit writer's outbox (audit_svc/client/outbox.h), labelled writer="<writer>" (a fixed
// word: "grantstore", "authorizer", "envelope"): sharedos_audit_outbox_depth,
// sharedos_audit_outbox_oldest_age_seconds and sharedos_audit_undeliverable_total. Copyable (it
// holds the registry's metrics, which outlive it).
class OutboxMetrics {
 public:
  OutboxMetrics() = default;  // no metrics
  OutboxMetrics(Metrics* metrics, absl::string_view writer);

  // The outbox's state: records waiting, age of the oldest (zero when empty).
  void Outbox(int64_t depth, absl::Duration oldest_age);
  // The depth alone, after a record entered or left (the age follows on the next Outbox).
  void Depth(int64_t depth);
  // Records moved aside as undeliverable (audit_svc refused them outright).
  void MovedAside(int64_t records);

 private:
  prometheus::Gauge* depth_ = nullptr;
  prometheus::Gauge* age_ = nullptr;
  prometheus::Counter* undeliverable_ = nullptr;
};

// Checkpoints shipped to a witness (audit_svc --checkpoint_witness, docs/adr/0023):
// sharedos_audit_witness_posts_total{result="delivered"|"refused"|"failed"} (refused: the
// witness answered 4xx and the checkpoint is not retried; failed: an attempt that will be
// retried), sharedos_audit_witness_dropped_total (checkpoints dropped from a full queue),
// sharedos_audit_witness_pending (checkpoints waiting) and
// sharedos_audit_witness_delivered_sequence (the last sequence the witness accepted). And, on a
// witness, sharedos_audit_witness_conflicts_total (checkpoints refused as a rollback or rewrite).
class WitnessMetrics {
 public:
  enum class Post : uint8_t { kDelivered, kRefused, kFailed };
  explicit WitnessMetrics(Metrics* metrics);

  void Posted(Post result);
  void Dropped();
  void Pending(int64_t pending);
  void Delivered(int64_t sequence);
  void Conflict();

 private:
  std::array<prometheus::Counter*, 3> posts_{};
  prometheus::Counter* dropped_ = nullptr;
  prometheus::Gauge* pending_ = nullptr;
  prometheus::Gauge* delivered_ = nullptr;
  prometheus::Counter* conflicts_ = nullptr;
};

}  // namespace sharedos::common::metrics

#endif  // SHAREDOS_COMMON_METRICS_SINKS_H_
