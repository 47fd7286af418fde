#include "envelope_svc/core/audit_records.h"

#include <google/protobuf/text_format.h>

#include "common/status/status_matchers.h"
#include "common/validation/protocol.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;

pb::AccessContext Context() {
  pb::AccessContext context;
  EXPECT_TRUE(
      google::protobuf::TextFormat::ParseFromString(R"pb(
                                                      namespace_id: "world-1"
                                                      actor { agent_id: "agent-assistant" }
                                                      authority { human_user_id: "user-alice" }
                                                      owner { human_user_id: "user-alice" }
                                                      purpose: "project work"
                                                      trace_id: "trace-1"
                                                      enabled_tool_namespaces: "files"
                                                      now { seconds: 1786438800 }
                                                    )pb",
                                                    &context));
  return context;
}

// Every record is a valid protocol "1" AuditEvent once the writer stamps its id.
void ExpectValid(pb::AuditEvent event) {
  event.set_id("6f1c4a52-2f4b-4c1e-9d59-0d9c3f1f6b11");
  EXPECT_THAT(common::validation::ValidateAuditEvent(&event, "event"), IsOk());
  EXPECT_EQ(event.namespace_id(), "world-1");
  EXPECT_EQ(event.actor().agent_id(), "agent-assistant");
}

pb::ExecutionResult Result(pb::ExecutionStatus status, const std::string& code) {
  pb::ExecutionResult result;
  result.set_version("1");
  result.set_execution_id("exec-1");
  result.set_trace_id("trace-1");
  result.set_status(status);
  if (!code.empty()) {
    result.mutable_error()->set_code(code);
    result.mutable_error()->set_message("m");
  }
  result.mutable_completed_at()->set_seconds(1786438900);
  return result;
}

TEST(AuditRecordsTest, ToolInvokedStatesTheBoundaryAndCause) {
  pb::ToolCall call;
  call.set_id("call-1");
  call.set_tool("files.read");
  ToolInvokedFacts facts;
  facts.source = pb::AUDIT_SOURCE_ENVELOPE;
  facts.status = pb::TOOL_RESULT_STATUS_DENIED;
  facts.reason = "tool_unavailable";
  facts.cause = "not_offered";
  facts.authority_hash = "h";
  facts.catalog_hash = std::string(64, 'c');
  pb::AuditEvent event =
      ToolInvokedEvent(Context(), absl::FromUnixSeconds(1786438801), call, facts);
  EXPECT_EQ(event.type(), pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(event.cause(), "not_offered");
  EXPECT_EQ(event.operation_id(), "call-1");
  EXPECT_EQ(event.at().seconds(), 1786438801);
  EXPECT_FALSE(event.has_fail_closed());
  EXPECT_FALSE(event.has_resource());
  ExpectValid(event);
}

TEST(AuditRecordsTest, CatalogListedCarriesIdentifiersAndCounts) {
  CatalogListedFacts facts;
  facts.authority_hash = "h";
  facts.catalog_hash = std::string(64, 'c');
  facts.withheld_count = 3;
  facts.host_policy_version = "v2";
  pb::AuditEvent event = CatalogListedEvent(Context(), absl::FromUnixSeconds(1786438800), facts);
  EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(event.metadata().fields().at("withheldCount").number_value(), 3);
  EXPECT_EQ(event.metadata().fields().at("hostPolicyVersion").string_value(), "v2");
  EXPECT_EQ(event.metadata().fields().at("enabledNamespaces").list_value().values(0).string_value(),
            "files");
  ExpectValid(event);
}

TEST(AuditRecordsTest, DiscoveryDenialIsAnUnconsumedDecision) {
  pb::CapabilityRequirement ceiling;
  ceiling.mutable_resource()->set_namespace_("files");
  ceiling.set_action("read");
  pb::AuditEvent event =
      DiscoveryDeniedEvent(Context(), absl::FromUnixSeconds(1786438801), ceiling, "call-1",
                           "files.read", "host_policy_unavailable", true, "h");
  EXPECT_EQ(event.type(), pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_FALSE(event.consumed());
  EXPECT_TRUE(event.fail_closed());
  ExpectValid(event);
}

TEST(AuditRecordsTest, TurnEndedMapsEveryStatus) {
  struct Case {
    pb::ExecutionStatus status;
    std::string code;
    std::optional<pb::EndedBy> ended_by;
    pb::AuditOutcome outcome;
    std::string reason;
    bool has_ended_by;
    bool fail_closed;
  };
  const Case cases[] = {
      {pb::EXECUTION_STATUS_SUCCEEDED, "", std::nullopt, pb::AUDIT_OUTCOME_SUCCEEDED, "", false,
       false},
      {pb::EXECUTION_STATUS_DENIED, "authority_unavailable", std::nullopt, pb::AUDIT_OUTCOME_DENIED,
       "authority_unavailable", false, true},
      {pb::EXECUTION_STATUS_FAILED, "driver_failed", pb::ENDED_BY_RUNTIME, pb::AUDIT_OUTCOME_FAILED,
       "driver_failed", true, false},
      {pb::EXECUTION_STATUS_CANCELLED, "turn_cancelled", pb::ENDED_BY_ENVELOPE,
       pb::AUDIT_OUTCOME_FAILED, "turn_cancelled", true, false},
      {pb::EXECUTION_STATUS_CANCELLED, "", pb::ENDED_BY_ENVELOPE, pb::AUDIT_OUTCOME_FAILED,
       "turn_cancelled", true, false},
      {pb::EXECUTION_STATUS_ESCALATED, "", std::nullopt, pb::AUDIT_OUTCOME_ESCALATED,
       "escalation_requested", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    pb::AuditEvent event =
        TurnEndedEvent(Context(), Result(c.status, c.code), c.ended_by, c.fail_closed);
    EXPECT_EQ(event.type(), pb::AUDIT_EVENT_TYPE_TURN_ENDED);
    EXPECT_EQ(event.outcome(), c.outcome);
    EXPECT_EQ(event.reason(), c.reason);
    EXPECT_EQ(event.has_ended_by(), c.has_ended_by);
    EXPECT_EQ(event.fail_closed(), c.fail_closed);
    EXPECT_FALSE(event.has_source());
    EXPECT_EQ(event.operation_id(), "exec-1");
    EXPECT_EQ(event.at().seconds(), 1786438900);
    ExpectValid(event);
  }
}

TEST(AuditRecordsTest, TurnEndedTakesFailClosedFromTheVerdictNeverFromTheCode) {
  // An infrastructure code without a fail-closed verdict (a runtime's own failure code) is not
  // recorded fail closed; a verdict that is, is — whatever its code.
  pb::AuditEvent runtime = TurnEndedEvent(
      Context(), Result(pb::EXECUTION_STATUS_FAILED, "authority_unavailable"), pb::ENDED_BY_RUNTIME,
      /*fail_closed=*/false);
  EXPECT_EQ(runtime.reason(), "authority_unavailable");
  EXPECT_FALSE(runtime.has_fail_closed());
  pb::AuditEvent carried =
      TurnEndedEvent(Context(), Result(pb::EXECUTION_STATUS_DENIED, "host_policy_unavailable"),
                     std::nullopt, /*fail_closed=*/true);
  EXPECT_TRUE(carried.fail_closed());
  ExpectValid(carried);
}

}  // namespace
}  // namespace sharedos::envelope::core
