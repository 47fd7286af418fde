#include "common/metrics/sinks.h"

#include <string>

namespace sharedos::common::metrics {
namespace {

constexpr absl::string_view kOther = "other";

template <size_t N>
absl::string_view LabelAt(const std::array<absl::string_view, N>& vocabulary, size_t i) {
  return i < N ? vocabulary[i] : kOther;
}

prometheus::Family<prometheus::Counter>& CounterFamily(Metrics& metrics, const std::string& name,
                                                       const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(metrics.registry());
}

prometheus::Family<prometheus::Gauge>& GaugeFamily(Metrics& metrics, const std::string& name,
                                                   const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(metrics.registry());
}

prometheus::Histogram* NewHistogram(Metrics& metrics, const std::string& name,
                                    const std::string& help,
                                    const prometheus::Histogram::BucketBoundaries& buckets) {
  return &prometheus::BuildHistogram()
              .Name(name)
              .Help(help)
              .Register(metrics.registry())
              .Add({}, buckets);
}

void Increment(prometheus::Counter* counter, double by = 1) {
  if (counter != nullptr) counter->Increment(by);
}

}  // namespace

// ---- DecisionMetrics ----

DecisionMetrics::DecisionMetrics(Metrics* metrics, const ReasonCodes& reason_codes)
    : reason_codes_(reason_codes) {
  if (metrics == nullptr) return;
  auto& family = CounterFamily(*metrics, "sharedos_decisions_total",
                               "Authorization decisions answered, by operation, outcome, reason "
                               "code and whether infrastructure failed closed.");
  static constexpr std::array<absl::string_view, 2> kOperations = {"authorize", "admit_turn"};
  for (size_t op = 0; op < 2; ++op) {
    for (size_t code = 0; code < kCodes; ++code) {
      const absl::string_view name = LabelAt(reason_codes_, code);
      for (size_t fail_closed = 0; fail_closed < 2; ++fail_closed) {
        decisions_[op][code][fail_closed] = &family.Add({
            {"operation", std::string(kOperations[op])},
            {"outcome", code == 0 ? "allowed" : "denied"},
            {"reason_code", std::string(name)},
            {"fail_closed", fail_closed ? "true" : "false"},
        });
      }
    }
  }
  escalations_requested_ = &CounterFamily(*metrics, "sharedos_escalations_requested_total",
                                          "Escalations stored PENDING at the grant store.")
                                .Add({});
}

void DecisionMetrics::Decided(Operation operation, absl::string_view reason_code,
                              bool fail_closed) {
  if (escalations_requested_ == nullptr) return;
  Increment(decisions_[static_cast<size_t>(operation)][IndexOf(reason_codes_, reason_code)]
                      [fail_closed ? 1 : 0]);
}

void DecisionMetrics::EscalationRequested() { Increment(escalations_requested_); }

// ---- EscalationMetrics ----

EscalationMetrics::EscalationMetrics(Metrics* metrics) {
  if (metrics == nullptr) return;
  auto& family = CounterFamily(*metrics, "sharedos_escalations_resolved_total",
                               "Escalations resolved, by resolution.");
  static constexpr std::array<absl::string_view, 4> kResolutions = {"approved", "denied", "expired",
                                                                    "other"};
  for (size_t i = 0; i < kResolutions.size(); ++i) {
    resolved_[i] = &family.Add({{"resolution", std::string(kResolutions[i])}});
  }
}

void EscalationMetrics::Resolved(Resolution resolution) {
  Increment(resolved_[static_cast<size_t>(resolution)]);
}

// ---- TurnMetrics ----

const std::array<absl::string_view, 5>& TurnMetrics::TerminalStatuses() {
  static constexpr std::array<absl::string_view, 5> kStatuses = {"succeeded", "denied", "failed",
                                                                 "cancelled", "escalated"};
  return kStatuses;
}

const std::array<absl::string_view, 6>& TurnMetrics::McpMethods() {
  static constexpr std::array<absl::string_view, 6> kMethods = {
      "initialize", "ping", "server/discover", "tools/list", "tools/call", "notifications"};
  return kMethods;
}

TurnMetrics::TurnMetrics(Metrics* metrics, const BudgetCodes& budget_codes)
    : budget_codes_(budget_codes) {
  if (metrics == nullptr) return;
  open_ = &GaugeFamily(*metrics, "sharedos_turns_open", "Turns open now.").Add({});
  auto& finished =
      CounterFamily(*metrics, "sharedos_turns_finished_total", "Turns ended, by terminal status.");
  for (size_t i = 0; i < finished_.size(); ++i) {
    finished_[i] = &finished.Add({{"status", std::string(LabelAt(TerminalStatuses(), i))}});
  }
  auto& budget = CounterFamily(*metrics, "sharedos_budget_refusals_total",
                               "Tool calls refused by a turn budget, by reason code.");
  for (size_t i = 0; i < budget_.size(); ++i) {
    budget_[i] = &budget.Add({{"reason_code", std::string(budget_codes_[i])}});
  }
  auto& mcp = CounterFamily(*metrics, "sharedos_mcp_requests_total",
                            "MCP front-door requests, by method and status.");
  for (size_t i = 0; i < mcp_.size(); ++i) {
    for (size_t status = 0; status < 2; ++status) {
      mcp_[i][status] = &mcp.Add({{"method", std::string(LabelAt(McpMethods(), i))},
                                  {"status", status == 0 ? "ok" : "error"}});
    }
  }
}

void TurnMetrics::TurnOpened() {
  if (open_ != nullptr) open_->Increment();
}

void TurnMetrics::TurnFinished(int execution_status, bool was_open) {
  if (open_ == nullptr) return;
  if (was_open) open_->Decrement();
  const bool known = execution_status >= 1 && execution_status <= 5;
  Increment(finished_[known ? execution_status - 1 : TerminalStatuses().size()]);
}

void TurnMetrics::ToolCallRefused(absl::string_view reason_code) {
  if (open_ == nullptr) return;
  const size_t i = IndexOf(budget_codes_, reason_code);
  if (i < budget_.size()) Increment(budget_[i]);
}

void TurnMetrics::McpRequest(absl::string_view method, McpStatus status) {
  if (open_ == nullptr) return;
  if (method.rfind("notifications/", 0) == 0) method = "notifications";
  Increment(mcp_[IndexOf(McpMethods(), method)][static_cast<size_t>(status)]);
}

// ---- AuditMetrics ----

AuditMetrics::AuditMetrics(Metrics* metrics) {
  if (metrics == nullptr) return;
  appends_ = &CounterFamily(*metrics, "sharedos_audit_appends_total",
                            "Audit events made durable in the chain.")
                  .Add({});
  group_size_ = NewHistogram(*metrics, "sharedos_audit_group_commit_size",
                             "Events per group commit of the audit log.",
                             {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096});
  commit_seconds_ = NewHistogram(*metrics, "sharedos_audit_commit_seconds",
                                 "Time to make one group commit durable.", LatencyBuckets());
  head_ = &GaugeFamily(*metrics, "sharedos_audit_chain_head_sequence",
                       "Sequence number of the audit chain's head.")
               .Add({});
  auto& verified = CounterFamily(*metrics, "sharedos_audit_verify_total",
                                 "Audit chain verifications answered, by result.");
  verified_[0] = &verified.Add({{"result", "broken"}});
  verified_[1] = &verified.Add({{"result", "ok"}});
}

void AuditMetrics::Verified(bool ok) { Increment(verified_[ok ? 1 : 0]); }

void AuditMetrics::Committed(int64_t events, int64_t appended, absl::Duration elapsed,
                             int64_t head_sequence) {
  if (appends_ == nullptr) return;
  if (appended > 0) appends_->Increment(static_cast<double>(appended));
  group_size_->Observe(static_cast<double>(events));
  commit_seconds_->Observe(absl::ToDoubleSeconds(elapsed));
  head_->Set(static_cast<double>(head_sequence));
}

void AuditMetrics::Head(int64_t head_sequence) {
  if (head_ != nullptr) head_->Set(static_cast<double>(head_sequence));
}

// ---- OutboxMetrics ----

OutboxMetrics::OutboxMetrics(Metrics* metrics, absl::string_view writer) {
  if (metrics == nullptr) return;
  const prometheus::Labels labels = {{"writer", std::string(writer)}};
  depth_ = &GaugeFamily(*metrics, "sharedos_audit_outbox_depth",
                        "Audit records waiting in a writer's outbox for audit_svc.")
                .Add(labels);
  age_ = &GaugeFamily(*metrics, "sharedos_audit_outbox_oldest_age_seconds",
                      "Age of the oldest record waiting in a writer's outbox (0 when empty).")
              .Add(labels);
  undeliverable_ = &CounterFamily(*metrics, "sharedos_audit_undeliverable_total",
                                  "Outbox records moved aside as undeliverable.")
                        .Add(labels);
}

void OutboxMetrics::Outbox(int64_t depth, absl::Duration oldest_age) {
  if (depth_ == nullptr) return;
  depth_->Set(static_cast<double>(depth));
  age_->Set(absl::ToDoubleSeconds(oldest_age));
}

void OutboxMetrics::Depth(int64_t depth) {
  if (depth_ != nullptr) depth_->Set(static_cast<double>(depth));
}

void OutboxMetrics::MovedAside(int64_t records) {
  Increment(undeliverable_, static_cast<double>(records));
}

WitnessMetrics::WitnessMetrics(Metrics* metrics) {
  if (metrics == nullptr) return;
  auto& posts = CounterFamily(*metrics, "sharedos_audit_witness_posts_total",
                              "Checkpoints posted to the witness, by result.");
  posts_[0] = &posts.Add({{"result", "delivered"}});
  posts_[1] = &posts.Add({{"result", "refused"}});
  posts_[2] = &posts.Add({{"result", "failed"}});
  dropped_ = &CounterFamily(*metrics, "sharedos_audit_witness_dropped_total",
                            "Checkpoints dropped unsent from the witness queue (full).")
                  .Add({});
  pending_ = &GaugeFamily(*metrics, "sharedos_audit_witness_pending",
                          "Checkpoints waiting to be posted to the witness.")
                  .Add({});
  delivered_ = &GaugeFamily(*metrics, "sharedos_audit_witness_delivered_sequence",
                            "Sequence of the last checkpoint the witness accepted.")
                    .Add({});
  conflicts_ = &CounterFamily(*metrics, "sharedos_audit_witness_conflicts_total",
                              "Checkpoints this witness refused as older than or inconsistent "
                              "with the one it holds (a rollback or a rewrite).")
                    .Add({});
}

void WitnessMetrics::Posted(Post result) { Increment(posts_[static_cast<size_t>(result)]); }
void WitnessMetrics::Dropped() { Increment(dropped_); }
void WitnessMetrics::Pending(int64_t pending) {
  if (pending_ != nullptr) pending_->Set(static_cast<double>(pending));
}
void WitnessMetrics::Delivered(int64_t sequence) {
  if (delivered_ != nullptr) delivered_->Set(static_cast<double>(sequence));
}
void WitnessMetrics::Conflict() { Increment(conflicts_); }

}  // namespace sharedos::common::metrics
