// FinishTurn, CancelTurn and deadlines through the engine, and SettleHarnessExit on its own.

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status/status_matchers.h"
#include "envelope_svc/core/turn_engine_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::authorizer::client::FakeAuthorizerClient;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using testing::FakeToolProvider;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::Parse;
using ::testing::SizeIs;
using ::testing::StartsWith;
using Method = FakeAuthorizerClient::Method;
using SettlementTest = testing::TurnEngineTest;

TEST_F(SettlementTest, CompleteSucceedsWritesTurnEndedOnceAndClosesTheLease) {
  const std::string turn = OpenRunning();
  Call(turn, "files.read", R"({"path": "a"})", 0);
  pb::ExecutionResult result = Finish(turn, R"pb(
    complete { output { string_value: "all tidy" } }
    metadata {
      fields {
        key: "promptHash"
        value { string_value: "abc" }
      }
    }
  )pb");
  EXPECT_EQ(result.version(), "1");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_SUCCEEDED);
  EXPECT_EQ(result.output().string_value(), "all tidy");
  EXPECT_EQ(result.execution_id(), "exec-1");
  EXPECT_EQ(result.trace_id(), "trace-1");
  EXPECT_TRUE(result.has_started_at());
  EXPECT_TRUE(result.has_completed_at());
  EXPECT_THAT(EventTypes(result),
              ElementsAre("turn.started", "tool.requested", "tool.completed", "turn.completed"));
  for (int i = 0; i < result.events_size(); ++i) EXPECT_EQ(result.events(i).sequence(), i);
  EXPECT_EQ(result.metadata().fields().at("promptHash").string_value(), "abc");
  EXPECT_EQ(
      result.metadata().fields().at("runtime").struct_value().fields().at("id").string_value(),
      "sharedos.grpc-driver");
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_TRUE(ended.reason().empty());
  EXPECT_FALSE(ended.has_ended_by());
  EXPECT_THAT(authorizer_.closed_leases(), SizeIs(1));
  EXPECT_EQ(authorizer_.open_leases(), 0u);

  // Ended: a second finish is refused, cancel answers the result unchanged.
  EXPECT_THAT(TryFinish(turn, R"pb(complete { output { string_value: "again" } })pb"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  pb::ExecutionResult cancelled = Cancel(turn);
  EXPECT_EQ(cancelled.status(), pb::EXECUTION_STATUS_SUCCEEDED);
  EXPECT_THAT(Audited(pb::AUDIT_EVENT_TYPE_TURN_ENDED), SizeIs(1));
  EXPECT_EQ(Get(turn).state(), v1::TURN_STATE_ENDED);
  EXPECT_EQ(engine_->running_turns(), 0u);
}

TEST_F(SettlementTest, RuntimeFailureKeepsRetryableOnlyWhenSafe) {
  const std::string reads = OpenRunning();
  Call(reads, "files.read", R"({"path": "a"})");
  pb::ExecutionResult result = Finish(reads, R"pb(
    fail { error { code: "driver_failed" message: "model timed out" retryable: true } }
  )pb");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(result.error().code(), "driver_failed");
  EXPECT_TRUE(result.error().retryable());
  EXPECT_EQ(result.events(result.events_size() - 1).type(), "turn.failed");
  EXPECT_EQ(result.events(result.events_size() - 1)
                .data()
                .struct_value()
                .fields()
                .at("source")
                .string_value(),
            "runtime");
  pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.reason(), "driver_failed");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_RUNTIME);

  audit_.Clear();
  pb::ExecutionRequest request = Request();
  request.set_execution_id("exec-2");
  const std::string writes = OpenRunning(request);
  EXPECT_EQ(Call(writes, "files.create", R"({"path": "out.txt"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  result = Finish(writes, R"pb(
    fail { error { code: "driver_failed" message: "model timed out" retryable: true } }
  )pb");
  EXPECT_FALSE(result.error().retryable());  // a write may have happened
}

TEST_F(SettlementTest, RuntimeFailureWithAnInfrastructureCodeIsNotRecordedFailClosed) {
  // The runtime's code is its own answer, not a fail-closed verdict of this kernel (ADR 0024).
  const std::string turn = OpenRunning();
  pb::ExecutionResult result = Finish(turn, R"pb(
    fail { error { code: "authority_unavailable" message: "gave up" } }
  )pb");
  EXPECT_EQ(result.error().code(), "authority_unavailable");
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.reason(), "authority_unavailable");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_RUNTIME);
  EXPECT_FALSE(ended.has_fail_closed());
}

TEST_F(SettlementTest, RefusedWriteLeavesTheTurnSafeToRetry) {
  const std::string turn = OpenRunning();
  authorizer_.DenyAuthorize("files", "out.txt", "create", "no_matching_grant");
  EXPECT_EQ(Call(turn, "files.create", R"({"path": "out.txt"})").status(),
            pb::TOOL_RESULT_STATUS_DENIED);
  pb::ExecutionResult result = Finish(turn, R"pb(
    fail { error { code: "driver_failed" message: "gave up" retryable: true } }
  )pb");
  EXPECT_TRUE(result.error().retryable());
}

TEST_F(SettlementTest, EscalationWithoutTheAffordanceFailsAndRecordsNoEscalation) {
  pb::ExecutionRequest request = Request();
  request.clear_tools();
  request.add_tools("files.read");
  const std::string turn = OpenRunning(request);
  pb::ExecutionResult result = Finish(turn, R"pb(escalate { reason: "need write access" })pb");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(result.error().code(), "tool_unavailable");
  EXPECT_EQ(result.events(result.events_size() - 1)
                .data()
                .struct_value()
                .fields()
                .at("source")
                .string_value(),
            "envelope");
  EXPECT_EQ(authorizer_.calls(Method::kRecordEscalation), 0);
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(ended.reason(), "tool_unavailable");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
}

TEST_F(SettlementTest, EscalationIsRecordedAtTheAuthorizer) {
  const std::string turn = OpenRunning();
  clock_.AdvanceTime(absl::Seconds(3));
  pb::ExecutionResult result = Finish(turn, R"pb(escalate { reason: "  need write access  " })pb");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(result.escalation().reason(), "need write access");
  EXPECT_EQ(result.escalation().reviewer().human_user_id(), "user-alice");
  EXPECT_EQ(result.escalation().status(), pb::ESCALATION_STATUS_PENDING);
  EXPECT_FALSE(result.escalation().has_requested_authority());
  EXPECT_FALSE(result.has_error());
  const auto& escalated = result.events(result.events_size() - 1);
  EXPECT_EQ(escalated.type(), "turn.escalated");
  EXPECT_EQ(escalated.data().struct_value().fields().at("reason").string_value(),
            "need write access");
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  const auto recorded = authorizer_.escalation_requests()[0];
  EXPECT_EQ(recorded.execution_id(), "exec-1");
  EXPECT_EQ(recorded.reason(), "need write access");
  EXPECT_EQ(recorded.operation_instant().seconds(), 1786438803);
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_ESCALATED);
  EXPECT_EQ(ended.reason(), "escalation_requested");
}

TEST_F(SettlementTest, HostEscalatesADenialWithItsRequiredAuthority) {
  const std::string turn = OpenRunning();
  authorizer_.DenyAuthorize("files", "Workspace/out.txt", "create", "no_matching_grant");
  pb::ToolResult denied = Call(turn, "files.create", R"({"path": "Workspace/out.txt"})");
  ASSERT_EQ(denied.error().code(), "no_matching_grant");
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(
                  denied.error().details().fields().at("requiredAuthority").struct_value(), &json)
                  .ok());
  v1::FinishTurnRequest finish;
  finish.set_turn_id(turn);
  finish.mutable_escalate()->set_reason("the agent needs to write out.txt");
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  json, finish.mutable_escalate()->mutable_requested_authority())
                  .ok());
  const std::string required_id = finish.escalate().requested_authority().id();
  absl::StatusOr<v1::FinishTurnResponse> finished = engine_->FinishTurn(finish, scope_);
  ASSERT_TRUE(finished.ok()) << finished.status();
  const pb::ExecutionResult& result = finished->result();
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED);
  // The hop round-trips: the escalation asks for exactly what the denial described.
  EXPECT_EQ(result.escalation().requested_authority().id(), required_id);
  EXPECT_EQ(result.escalation().requested_authority().capabilities(0).actions(0), "create");
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  EXPECT_TRUE(authorizer_.escalation_requests()[0].has_requested_authority_ask());
}

// Seed ADR 0019: the identity fields of a requested authority are discarded and minted again,
// not refused — another owner, requester, namespace or id changes nothing but is not carried.
TEST_F(SettlementTest, RequestedAuthorityIdentityFieldsAreDiscarded) {
  const std::string turn = OpenRunning();
  absl::StatusOr<v1::FinishTurnResponse> finished =
      TryFinish(turn, R"pb(escalate {
                             reason: "x"
                             requested_authority {
                               id: "capreq-chosen-by-the-caller"
                               namespace_id: "world-other"
                               requester { agent_id: "agent-other" }
                               owner { human_user_id: "user-bob" }
                               capabilities {
                                 resource { namespace: "files" path: "a" }
                                 actions: "read"
                                 scope: SCOPE_EXACT
                               }
                             }
                           })pb");
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->result().status(), pb::EXECUTION_STATUS_ESCALATED);
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  // Only the ask reaches the authorizer (AuthorityAsk has no identity fields to carry).
  EXPECT_EQ(authorizer_.escalation_requests()[0].requested_authority_ask().capabilities_size(), 1);
}

TEST_F(SettlementTest, RequestedAuthorityWithoutCapabilitiesIsInvalid) {
  const std::string turn = OpenRunning();
  EXPECT_THAT(
      TryFinish(turn, R"pb(escalate {
                             reason: "x"
                             requested_authority {}
                           })pb"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("requested_authority.capabilities")));
  EXPECT_EQ(Get(turn).state(), v1::TURN_STATE_RUNNING);
}

TEST_F(SettlementTest, EscalationTheAuthorizerCannotStoreLeavesTheTurnOpen) {
  const std::string turn = OpenRunning();
  authorizer_.FailMethod(Method::kRecordEscalation, absl::UnavailableError("store down"));
  EXPECT_THAT(TryFinish(turn, R"pb(escalate { reason: "need write" })pb"),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("escalation not recorded")));
  EXPECT_EQ(Get(turn).state(), v1::TURN_STATE_RUNNING);
  EXPECT_THAT(Audited(pb::AUDIT_EVENT_TYPE_TURN_ENDED), IsEmpty());
  authorizer_.FailMethod(Method::kRecordEscalation, absl::OkStatus());
  EXPECT_EQ(Finish(turn, R"pb(escalate { reason: "need write" })pb").status(),
            pb::EXECUTION_STATUS_ESCALATED);
  TurnEnded();
}

TEST_F(SettlementTest, FinishTurnErrors) {
  const std::string turn = OpenRunning();
  EXPECT_THAT(TryFinish(turn, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outcome")));
  EXPECT_THAT(TryFinish(turn, "complete {}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("complete.output")));
  EXPECT_THAT(TryFinish(turn, "fail {}"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("fail.error")));
  EXPECT_THAT(TryFinish(turn, R"pb(escalate { reason: "   " })pb"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("escalate.reason")));
  EXPECT_THAT(TryFinish(turn, R"pb(harness_exited { outcome_status: "completed" })pb"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("RUNTIME_DRIVER")));
  EXPECT_THAT(TryFinish("turn-unknown", R"pb(complete { output { bool_value: true } })pb"),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(Get(turn).state(), v1::TURN_STATE_RUNNING);
}

TEST_F(SettlementTest, CancelEndsTheTurnOnceAndIsIdempotent) {
  const std::string turn = OpenRunning();
  pb::ExecutionResult result = Cancel(turn);
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_CANCELLED);
  EXPECT_EQ(result.error().code(), "turn_cancelled");
  EXPECT_EQ(result.events(result.events_size() - 1).type(), "turn.cancelled");
  pb::ExecutionResult again = Cancel(turn);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(again, result));
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(ended.reason(), "turn_cancelled");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
  EXPECT_FALSE(ended.has_fail_closed());
  EXPECT_THAT(authorizer_.closed_leases(), SizeIs(1));
}

TEST_F(SettlementTest, DeadlineCancelsTheTurn) {
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_timeout_ms(1000);
  const std::string turn = OpenRunning(request);
  clock_.AdvanceTime(absl::Milliseconds(999));
  EXPECT_EQ(engine_->CancelExpired(), 0);
  clock_.AdvanceTime(absl::Milliseconds(1));
  EXPECT_EQ(engine_->CancelExpired(), 1);
  v1::GetTurnResponse got = Get(turn);
  EXPECT_EQ(got.state(), v1::TURN_STATE_ENDED);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_CANCELLED);
  EXPECT_EQ(TurnEnded().reason(), "turn_cancelled");
  EXPECT_EQ(engine_->running_turns(), 0u);
}

TEST_F(SettlementTest, OperationsPastTheDeadlineFindTheTurnCancelled) {
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_timeout_ms(1000);
  const std::string turn = OpenRunning(request);
  clock_.AdvanceTime(absl::Seconds(2));
  EXPECT_THAT(TryCall(turn, "files.read", R"({"path": "a"})"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(files_->invocations(), IsEmpty());
  EXPECT_EQ(Get(turn).result().status(), pb::EXECUTION_STATUS_CANCELLED);
  TurnEnded();
}

TEST_F(SettlementTest, CancelWhileACallRunsKeepsTheCallsRecordButNoLaterEvent) {
  const std::string turn = OpenRunning();
  files_->SetBehavior("files.create", FakeToolProvider::Behavior::kBlock);
  absl::StatusOr<v1::InvokeToolResponse> running;
  std::thread call([&] { running = TryCall(turn, "files.create", R"({"path": "x"})"); });
  files_->entered().WaitForNotification();
  pb::ExecutionResult cancelled = Cancel(turn);
  EXPECT_EQ(cancelled.status(), pb::EXECUTION_STATUS_CANCELLED);
  files_->Release();
  call.join();
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->result().status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_THAT(Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED), SizeIs(1));
  EXPECT_EQ(EventTypes(Get(turn).result()).back(), "turn.cancelled");
}

TEST_F(SettlementTest, FinishWaitsForACallStillRunning) {
  const std::string turn = OpenRunning();
  files_->SetBehavior("files.create", FakeToolProvider::Behavior::kBlock);
  std::thread call([&] { TryCall(turn, "files.create", R"({"path": "x"})").IgnoreError(); });
  files_->entered().WaitForNotification();
  absl::StatusOr<v1::FinishTurnResponse> finished;
  std::thread finish(
      [&] { finished = TryFinish(turn, R"pb(complete { output { bool_value: true } })pb"); });
  files_->Release();
  call.join();
  finish.join();
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_THAT(EventTypes(finished->result()),
              ElementsAre("turn.started", "tool.requested", "tool.completed", "turn.completed"));
}

TEST(SettleHarnessExitTest, MapsTheHarnessOutcome) {
  v1::HarnessExitedOutcome exited =
      Parse<v1::HarnessExitedOutcome>(R"pb(outcome_status: "completed"
                                           output { string_value: "answer" })pb");
  HarnessSettlement settled = SettleHarnessExit(exited, false);
  EXPECT_EQ(settled.status, pb::EXECUTION_STATUS_SUCCEEDED);
  EXPECT_EQ(settled.output->string_value(), "answer");
  EXPECT_EQ(settled.metadata.fields().at("harnessOutcome").string_value(), "completed");

  settled = SettleHarnessExit(exited, /*escalation_latched=*/true);
  EXPECT_EQ(settled.status, pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(settled.metadata.fields().at("harnessOutcome").string_value(), "completed");

  exited = Parse<v1::HarnessExitedOutcome>(R"pb(outcome_status: "error"
                                                error_code: "harness_failed"
                                                exit_code: 3)pb");
  settled = SettleHarnessExit(exited, false);
  EXPECT_EQ(settled.status, pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(settled.error->code(), "harness_failed");
  EXPECT_EQ(settled.metadata.fields().at("harnessErrorCode").string_value(), "harness_failed");

  settled = SettleHarnessExit(Parse<v1::HarnessExitedOutcome>(R"pb(outcome_status: "max_turns")pb"),
                              false);
  EXPECT_EQ(settled.error->code(), "harness_exited_without_outcome");
}

}  // namespace
}  // namespace sharedos::envelope::core
