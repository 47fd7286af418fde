#include "common/metrics/metrics.h"

#include <memory>
#include <string>

#include "common/metrics/sinks.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace sharedos::common::metrics {
namespace {

// The vocabularies the components pass in (capability::kDecisionReasonCodes, kTurnBudgetCodes),
// spelled here: common sits below capability.
constexpr DecisionMetrics::ReasonCodes kReasonCodes = {"allowed",
                                                       "no_matching_grant",
                                                       "grant_exhausted",
                                                       "invalid_context",
                                                       "invalid_request",
                                                       "authority_unavailable",
                                                       "usage_store_unavailable",
                                                       "delegation_chain_unverified",
                                                       "delegation_chain_invalid",
                                                       "host_policy_denied",
                                                       "host_policy_unavailable",
                                                       "audit_unavailable"};
constexpr TurnMetrics::BudgetCodes kBudgetCodes = {"step_limit_exceeded",
                                                   "tool_call_limit_exceeded", "turn_draining"};

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(MetricsExposerTest, ServesTheRegistryOnAPickedLoopbackPort) {
  Metrics metrics;
  DecisionMetrics decisions(&metrics, kReasonCodes);
  decisions.Decided(DecisionMetrics::Operation::kAuthorize, "no_matching_grant", false);
  absl::StatusOr<std::unique_ptr<MetricsExposer>> exposer =
      MetricsExposer::Start(metrics, "127.0.0.1", 0);
  ASSERT_TRUE(exposer.ok()) << exposer.status();
  ASSERT_GT((*exposer)->port(), 0);
  EXPECT_EQ((*exposer)->url(),
            "http://127.0.0.1:" + std::to_string((*exposer)->port()) + "/metrics");

  httplib::Client client("127.0.0.1", (*exposer)->port());
  httplib::Result result = client.Get("/metrics");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_THAT(result->body,
              HasSubstr("sharedos_decisions_total{fail_closed=\"false\",operation=\"authorize\","
                        "outcome=\"denied\",reason_code=\"no_matching_grant\"} 1"));
}

TEST(MetricsExposerTest, RefusesANonLoopbackHostAndABadPort) {
  Metrics metrics;
  EXPECT_THAT(MetricsExposer::Start(metrics, "0.0.0.0", 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metrics_host")));
  EXPECT_THAT(MetricsExposer::Start(metrics, "127.0.0.1", 70000),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("metrics_port")));
}

TEST(DecisionMetricsTest, CountsByReasonCodeAndFailClosedAndOtherForUnknownCodes) {
  Metrics metrics;
  DecisionMetrics decisions(&metrics, kReasonCodes);
  decisions.Decided(DecisionMetrics::Operation::kAdmitTurn, "allowed", false);
  decisions.Decided(DecisionMetrics::Operation::kAuthorize, "audit_unavailable", true);
  decisions.Decided(DecisionMetrics::Operation::kAuthorize, "made_up/code", false);
  decisions.EscalationRequested();
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("{fail_closed=\"false\",operation=\"admit_turn\",outcome=\"allowed\","
                              "reason_code=\"allowed\"} 1"));
  EXPECT_THAT(text, HasSubstr("{fail_closed=\"true\",operation=\"authorize\",outcome=\"denied\","
                              "reason_code=\"audit_unavailable\"} 1"));
  EXPECT_THAT(text, HasSubstr("{fail_closed=\"false\",operation=\"authorize\",outcome=\"denied\","
                              "reason_code=\"other\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("made_up")));
  EXPECT_THAT(text, HasSubstr("sharedos_escalations_requested_total 1"));
}

TEST(SinksTest, ANullRegistryMeansNoMetricsAndNoCrash) {
  DecisionMetrics decisions(nullptr, kReasonCodes);
  decisions.Decided(DecisionMetrics::Operation::kAuthorize, "allowed", false);
  decisions.EscalationRequested();
  TurnMetrics turns(nullptr, kBudgetCodes);
  turns.TurnOpened();
  turns.TurnFinished(1, true);
  turns.ToolCallRefused("step_limit_exceeded");
  turns.McpRequest("tools/call", TurnMetrics::McpStatus::kOk);
  AuditMetrics audit(nullptr);
  audit.Committed(3, 3, absl::Milliseconds(1), 7);
  audit.Verified(false);
  OutboxMetrics outbox(nullptr, "envelope");
  outbox.Outbox(1, absl::Seconds(1));
  outbox.MovedAside(1);
  OutboxMetrics none;
  none.Outbox(1, absl::Seconds(1));
  EscalationMetrics escalations(nullptr);
  escalations.Resolved(EscalationMetrics::Resolution::kApproved);
}

TEST(TurnMetricsTest, OpenGaugeFollowsTurnsAndStatusesAreBounded) {
  Metrics metrics;
  TurnMetrics turns(&metrics, kBudgetCodes);
  turns.TurnOpened();
  turns.TurnOpened();
  turns.TurnFinished(5, /*was_open=*/true);
  turns.TurnFinished(2, /*was_open=*/false);
  turns.TurnFinished(99, /*was_open=*/false);
  turns.ToolCallRefused("step_limit_exceeded");
  turns.ToolCallRefused("no_matching_grant");  // Not a budget code: not counted.
  turns.McpRequest("notifications/initialized", TurnMetrics::McpStatus::kOk);
  turns.McpRequest("evil/method-name", TurnMetrics::McpStatus::kError);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("sharedos_turns_open 1"));
  EXPECT_THAT(text, HasSubstr("sharedos_turns_finished_total{status=\"escalated\"} 1"));
  EXPECT_THAT(text, HasSubstr("sharedos_turns_finished_total{status=\"denied\"} 1"));
  EXPECT_THAT(text, HasSubstr("sharedos_turns_finished_total{status=\"other\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("sharedos_budget_refusals_total{reason_code=\"step_limit_exceeded\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("reason_code=\"no_matching_grant\"")));
  EXPECT_THAT(text, HasSubstr("{method=\"notifications\",status=\"ok\"} 1"));
  EXPECT_THAT(text, HasSubstr("{method=\"other\",status=\"error\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("evil")));
}

TEST(AuditMetricsTest, CommitsMoveAppendsHeadAndHistograms) {
  Metrics metrics;
  AuditMetrics audit(&metrics);
  audit.Committed(3, 3, absl::Milliseconds(2), 41);
  audit.Committed(2, 1, absl::Milliseconds(1), 42);
  audit.Verified(true);
  audit.Verified(false);
  audit.Verified(false);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("sharedos_audit_appends_total 4"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_chain_head_sequence 42"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_group_commit_size_count 2"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_group_commit_size_sum 5"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_verify_total{result=\"ok\"} 1"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_verify_total{result=\"broken\"} 2"));
}

TEST(OutboxMetricsTest, EachWriterIsItsOwnSeries) {
  Metrics metrics;
  OutboxMetrics envelope(&metrics, "envelope");
  OutboxMetrics grantstore(&metrics, "grantstore");
  envelope.Outbox(5, absl::Seconds(3));
  envelope.MovedAside(2);
  grantstore.Outbox(1, absl::ZeroDuration());
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("sharedos_audit_outbox_depth{writer=\"envelope\"} 5"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_outbox_oldest_age_seconds{writer=\"envelope\"} 3"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_undeliverable_total{writer=\"envelope\"} 2"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_outbox_depth{writer=\"grantstore\"} 1"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_undeliverable_total{writer=\"grantstore\"} 0"));
}

}  // namespace
}  // namespace sharedos::common::metrics
