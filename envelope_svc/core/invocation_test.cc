// InvokeTool: the envelope's checks (source envelope) before mediation, and calls on ended turns,
// through the engine.

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
using InvocationTest = testing::TurnEngineTest;

TEST_F(InvocationTest, MediatedCallEmitsRequestedAndCompletedWithoutArguments) {
  const std::string turn = OpenRunning();
  pb::ToolResult result = Call(turn, "files.read", R"({"path": "Workspace/secret-name.txt"})", 0);
  EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  v1::GetTurnResponse got = Get(turn);
  EXPECT_THAT(EventTypes(got.result()),
              ElementsAre("turn.started", "tool.requested", "tool.completed"));
  const auto& completed = got.result().events(2).data().struct_value().fields();
  EXPECT_EQ(completed.at("status").string_value(), "succeeded");
  EXPECT_EQ(completed.at("callId").string_value(), "call-1");
  EXPECT_EQ(completed.at("step").number_value(), 0);
  EXPECT_THAT(got.result().DebugString(), Not(HasSubstr("secret-name")));
  EXPECT_THAT(got.result().DebugString(), Not(HasSubstr("\"ok\"")));
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(1));
  EXPECT_EQ(invoked[0].source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(invoked[0].metadata().fields().at("catalogHash").string_value(),
            Audited(pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED)[0]
                .metadata()
                .fields()
                .at("catalogHash")
                .string_value());
}

TEST_F(InvocationTest, ToolNotOfferedThisTurnIsRefusedByTheEnvelope) {
  pb::ExecutionRequest request = Request();
  request.clear_tools();
  request.add_tools("files.read");
  const std::string turn = OpenRunning(request);
  for (const std::string tool : {"files.create", "no.such.tool"}) {
    pb::ToolResult result = Call(turn, tool, R"({"path": "a"})");
    EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_DENIED);
    EXPECT_EQ(result.error().code(), "tool_unavailable");
    EXPECT_FALSE(result.error().retryable());
  }
  EXPECT_THAT(files_->invocations(), IsEmpty());
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 0);
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(2));
  // The cause says why: registered but not requested this turn, or not registered at all.
  EXPECT_EQ(invoked[0].cause(), "not_offered");
  EXPECT_EQ(invoked[1].cause(), "not_registered");
  for (const pb::AuditEvent& event : invoked) {
    EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_ENVELOPE);
    EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_DENIED);
    EXPECT_EQ(event.reason(), "tool_unavailable");
    EXPECT_FALSE(event.has_fail_closed());
    EXPECT_EQ(event.operation_id(), "call-1");
  }
  EXPECT_EQ(invoked[1].tool(), "no.such.tool");
  const v1::GetTurnResponse got = Get(turn);
  ASSERT_GE(got.result().events_size(), 3) << got.DebugString();
  const auto& completed = got.result().events(2).data().struct_value().fields();
  ASSERT_TRUE(completed.contains("code")) << got.DebugString();
  EXPECT_EQ(completed.at("code").string_value(), "tool_unavailable");
}

// A withheld tool's cause is discovery's own code (semantics §5.2): no_matching_grant,
// host_policy_denied (ADR 0020's count), …, each after its authorization.checked (denied, that
// code); a disabled namespace says so too, with no decision (none was made).
TEST_F(InvocationTest, WithheldToolsAreRefusedWithTheCauseThatWithheldThem) {
  authorizer_.Withhold("files.peek", "no_matching_grant");
  authorizer_.Withhold("files.create", "host_policy_denied");
  const std::string turn = OpenRunning(Request());
  for (const std::string tool : {"files.peek", "files.create", "notes.get"}) {
    pb::ToolResult result = Call(turn, tool, R"({"path": "a"})");
    EXPECT_EQ(result.status(), pb::TOOL_RESULT_STATUS_DENIED) << tool;
    EXPECT_EQ(result.error().code(), "tool_unavailable") << tool;
  }
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 0);
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(3));
  EXPECT_EQ(invoked[0].cause(), "no_matching_grant");
  EXPECT_EQ(invoked[1].cause(), "host_policy_denied");
  EXPECT_EQ(invoked[2].cause(), "namespace_disabled");
  for (const pb::AuditEvent& event : invoked) {
    EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_ENVELOPE);
    EXPECT_EQ(event.reason(), "tool_unavailable");
  }
  // Each decision immediately precedes its refusal; the disabled namespace has none.
  const std::vector<pb::AuditEvent> all = audit_.events();
  std::vector<std::string> decided;
  for (size_t i = 1; i < all.size(); ++i) {
    if (all[i].type() != pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) continue;
    const pb::AuditEvent& before = all[i - 1];
    if (before.type() != pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED) continue;
    EXPECT_EQ(before.outcome(), pb::AUDIT_OUTCOME_DENIED);
    EXPECT_EQ(before.reason(), all[i].cause());
    EXPECT_EQ(before.operation_id(), all[i].operation_id());
    EXPECT_FALSE(before.consumed());
    decided.push_back(before.reason());
  }
  EXPECT_THAT(decided, ElementsAre("no_matching_grant", "host_policy_denied"));
}

// A tool withheld by an outage at discovery (a fail-closed code) says so: its cause is that code,
// and both its decision and its refusal are recorded fail_closed.
TEST_F(InvocationTest, ToolWithheldByAnOutageIsRefusedFailClosedWithThatCode) {
  authorizer_.Withhold("files.peek", "usage_store_unavailable", /*fail_closed=*/true);
  const std::string turn = OpenRunning(Request());
  pb::ToolResult result = Call(turn, "files.peek", R"({"path": "a"})");
  EXPECT_EQ(result.error().code(), "tool_unavailable");
  const std::vector<pb::AuditEvent> all = audit_.events();
  ASSERT_GE(all.size(), 2u);
  const pb::AuditEvent& refused = all.back();
  EXPECT_EQ(refused.type(), pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  EXPECT_EQ(refused.cause(), "usage_store_unavailable");
  EXPECT_TRUE(refused.fail_closed());
  const pb::AuditEvent& decided = all[all.size() - 2];
  EXPECT_EQ(decided.type(), pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  EXPECT_EQ(decided.reason(), "usage_store_unavailable");
  EXPECT_TRUE(decided.fail_closed());
}

TEST_F(InvocationTest, CallBudgetRefusesTheCallNotTheTurn) {
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_max_tool_calls(2);
  const std::string turn = OpenRunning(request);
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "b"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  for (int i = 0; i < 2; ++i) {
    pb::ToolResult refused = Call(turn, "files.read", R"({"path": "c"})");
    EXPECT_EQ(refused.status(), pb::TOOL_RESULT_STATUS_DENIED);
    EXPECT_EQ(refused.error().code(), "tool_call_limit_exceeded");
  }
  EXPECT_THAT(files_->invocations(), SizeIs(2));
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(4));
  EXPECT_EQ(invoked[3].source(), pb::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(invoked[3].reason(), "tool_call_limit_exceeded");
  EXPECT_TRUE(invoked[3].cause().empty());
  EXPECT_EQ(Finish(turn, R"pb(complete { output { string_value: "done" } })pb").status(),
            pb::EXECUTION_STATUS_SUCCEEDED);
}

// Issue 34 (observation 2): refusals past the budget are recorded one by one up to the bound;
// the next ends the turn (the refusal's code, cause refusals_exhausted) and later calls leave no
// record.
TEST_F(InvocationTest, RefusalsPastTheBudgetAreBoundedThenTheTurnEnds) {
  TurnEngine::Options options;
  options.max_refusals_past_budget = 3;
  MakeEngine(options);
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_max_tool_calls(1);
  const std::string turn = OpenRunning(request);
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  for (int i = 0; i < 4; ++i) {
    pb::ToolResult refused = Call(turn, "files.read", R"({"path": "b"})");
    EXPECT_EQ(refused.status(), pb::TOOL_RESULT_STATUS_DENIED) << i;
    EXPECT_EQ(refused.error().code(), "tool_call_limit_exceeded") << i;
  }
  // The fourth ended the turn.
  const v1::GetTurnResponse got = Get(turn);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(got.result().error().code(), "tool_call_limit_exceeded");
  EXPECT_EQ(got.result().metadata().fields().at("cause").string_value(), "refusals_exhausted");
  const size_t events = got.result().events_size();
  const size_t records = audit_.events().size();
  for (int i = 0; i < 100; ++i) {
    EXPECT_THAT(TryCall(turn, "files.read", R"({"path": "c"})"),
                StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("ended")));
  }
  EXPECT_EQ(audit_.events().size(), records);
  EXPECT_EQ(Get(turn).result().events_size(), events);
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(4));  // one call, three refusals
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.reason(), "tool_call_limit_exceeded");
  EXPECT_EQ(ended.cause(), "refusals_exhausted");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
}

TEST_F(InvocationTest, CallsAfterAnEndingAreRecordedOnlyUpToTheBound) {
  TurnEngine::Options options;
  options.max_refusals_past_budget = 2;
  MakeEngine(options);
  const std::string turn = OpenRunning();
  Finish(turn, R"pb(complete { output { string_value: "done" } })pb");
  const size_t records = audit_.events().size();
  for (int i = 0; i < 10; ++i) {
    EXPECT_THAT(TryCall(turn, "files.read", R"({"path": "c"})"),
                StatusIs(absl::StatusCode::kFailedPrecondition));
  }
  EXPECT_EQ(audit_.events().size(), records + 2);
}

TEST_F(InvocationTest, StepBudgetCountsDeclaredSteps) {
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_max_steps(2);
  request.mutable_options()->set_max_tool_calls(10);
  const std::string turn = OpenRunning(request);
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a"})", 0).status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a"})", 1).status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  pb::ToolResult refused = Call(turn, "files.read", R"({"path": "a"})", 2);
  EXPECT_EQ(refused.status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(refused.error().code(), "step_limit_exceeded");
  // A step already seen may call again; an undeclared step is bounded by calls only.
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a"})", 1).status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a"})").status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(5));
  EXPECT_EQ(invoked[2].source(), pb::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(invoked[2].reason(), "step_limit_exceeded");
}

TEST_F(InvocationTest, CallsInTheDrainWindowAreRefusedTurnDraining) {
  TurnEngine::Options options;
  options.drain_grace = absl::Milliseconds(500);
  MakeEngine(options);
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_timeout_ms(1000);
  const std::string turn = OpenRunning(request);
  clock_.AdvanceTime(absl::Milliseconds(600));
  pb::ToolResult refused = Call(turn, "files.read", R"({"path": "a"})");
  EXPECT_EQ(refused.status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(refused.error().code(), "turn_draining");
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(1));
  EXPECT_EQ(invoked[0].source(), pb::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(invoked[0].reason(), "turn_draining");
}

TEST_F(InvocationTest, AuditOutageDrainsTheTurnAndFailsItAuditUnavailable) {
  const std::string turn = OpenRunning();
  authorizer_.DenyAuthorize("files", "a", "read", "audit_unavailable", /*fail_closed=*/true);
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "a"})").error().code(), "audit_unavailable");
  EXPECT_EQ(Call(turn, "files.read", R"({"path": "b"})").error().code(), "turn_draining");
  pb::ExecutionResult result = Finish(turn, R"pb(complete { output { string_value: "done" } })pb");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(result.error().code(), "audit_unavailable");
  EXPECT_TRUE(result.error().retryable());  // only reads ran
  EXPECT_EQ(result.events(result.events_size() - 1)
                .data()
                .struct_value()
                .fields()
                .at("source")
                .string_value(),
            "envelope");
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(ended.reason(), "audit_unavailable");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
  EXPECT_TRUE(ended.fail_closed());
}

TEST_F(InvocationTest, InvokeToolTransportErrors) {
  const std::string turn = OpenRunning();
  EXPECT_THAT(TryCall("turn-unknown", "files.read"), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(TryCall(turn, "files.read", "{}", -1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("step")));
  EXPECT_THAT(TryCall("", "files.read"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("turn_id")));
  EXPECT_THAT(TryCall(turn, "files.read", "{}", std::nullopt, ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("call.id")));
  common::server::HostScope other;
  other.namespaces = {"world-1"};
  other.owners = {"human:user-bob"};
  v1::InvokeToolRequest request;
  request.set_turn_id(turn);
  *request.mutable_call() = Parse<pb::ToolCall>(R"pb(id: "c"
                                                     tool: "files.read"
                                                     trace_id: "trace-1"
                                                     arguments {}
                                                     requested_at {})pb");
  // Another scope's turn is as unknown as one that never was (ADR 0014, T2).
  EXPECT_THAT(engine_->InvokeTool(request, other), StatusIs(absl::StatusCode::kNotFound));
  Cancel(turn);
  EXPECT_THAT(TryCall(turn, "files.read", R"({"path": "a"})"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// An agent calling after its turn ended keeps the documented FAILED_PRECONDITION answer, and the
// attempt reaches audit: tool.invoked, source envelope, denied turn_draining, cause turn_ended,
// post-effect — and no event follows the turn's terminal one.
TEST_F(InvocationTest, CallOnAnEndedTurnIsRefusedAndRecorded) {
  const std::string turn = OpenRunning();
  const pb::ExecutionResult result =
      Finish(turn, R"pb(complete { output { string_value: "done" } })pb");
  ASSERT_EQ(result.status(), pb::EXECUTION_STATUS_SUCCEEDED);
  EXPECT_THAT(TryCall(turn, "files.read", R"({"path": "a"})", 3, "call-late"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("ended")));
  EXPECT_THAT(files_->invocations(), IsEmpty());
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 0);

  std::vector<pb::AuditEvent> invoked;
  for (const auto& recorded : audit_.recorded(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED)) {
    EXPECT_FALSE(recorded.pre_effect);
    invoked.push_back(recorded.event);
  }
  ASSERT_THAT(invoked, SizeIs(1));
  const pb::AuditEvent& event = invoked[0];
  EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(event.reason(), "turn_draining");
  EXPECT_EQ(event.cause(), "turn_ended");
  EXPECT_EQ(event.operation_id(), "call-late");
  EXPECT_EQ(event.tool(), "files.read");
  EXPECT_EQ(event.trace_id(), "trace-1");
  EXPECT_EQ(event.authority_hash(), "authority-hash-1");
  EXPECT_FALSE(event.has_fail_closed());
  EXPECT_THAT(event.DebugString(), Not(HasSubstr("path")));
  // The record follows the turn's end; the turn's events and result are unchanged.
  EXPECT_EQ(audit_.events().back().type(), pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  TurnEnded();
  EXPECT_EQ(Get(turn).result().events_size(), result.events_size());
}

TEST_F(InvocationTest, CallsOnTurnsEndedByTheDeadlineOrAtOpenTurnAreRecorded) {
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_timeout_ms(1000);
  const std::string expired = OpenRunning(request);
  clock_.AdvanceTime(absl::Seconds(2));
  EXPECT_THAT(TryCall(expired, "files.read", R"({"path": "a"})"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  // The deadline ended the turn first (turn.ended turn_cancelled), then the call is recorded.
  ASSERT_THAT(audit_.events(), Not(IsEmpty()));
  EXPECT_EQ(TurnEnded().reason(), "turn_cancelled");
  std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(1));
  EXPECT_EQ(invoked[0].reason(), "turn_draining");
  EXPECT_EQ(invoked[0].cause(), "turn_ended");

  // A turn denied at OpenTurn never had an authority: the record carries none.
  pb::ExecutionRequest mismatched = Request();
  mismatched.set_execution_id("exec-2");
  mismatched.mutable_context()->mutable_actor()->set_agent_id("agent-other");
  const v1::OpenTurnResponse denied = Open(mismatched);
  ASSERT_TRUE(denied.has_result());
  EXPECT_THAT(TryCall(denied.turn_id(), "files.read", R"({"path": "a"})", std::nullopt, "call-2"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(2));
  EXPECT_EQ(invoked[1].operation_id(), "call-2");
  EXPECT_EQ(invoked[1].source(), pb::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(invoked[1].cause(), "turn_ended");
  EXPECT_TRUE(invoked[1].authority_hash().empty());
  EXPECT_EQ(invoked[1].actor().agent_id(), "agent-other");
}

}  // namespace
}  // namespace sharedos::envelope::core
