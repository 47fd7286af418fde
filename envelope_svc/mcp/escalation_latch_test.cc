// The escalation latch (seed ADR 0018) on a real TurnEngine over test doubles, and the engine's
// MCP seat: RUNTIME_MCP turns, their execution tokens, FindMcpTurn.
#include "envelope_svc/mcp/escalation_latch.h"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "common/time/proto_time.h"
#include "common/validation/limits.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/execution_token.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::mcp {
namespace {

namespace pb = ::sharedos::protocol::v1;
using core::TurnEngine;
using core::testing::FakeToolProvider;
using ::sharedos::authorizer::client::FakeAuthorizerClient;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

pb::ExecutionRequest Request(bool offer_escalation = true) {
  pb::ExecutionRequest request =
      core::testing::TestExecutionRequest({"files.read", "files.create"});
  request.mutable_options()->set_timeout_ms(60000);
  if (offer_escalation) request.add_tools("sharedos.escalate");
  return request;
}

class EscalationLatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = core::testing::TestRegistry();
    files_ = std::make_unique<FakeToolProvider>("files");
    TurnEngine::Options options;
    options.mcp_url = "http://127.0.0.1:1/mcp";
    options.mcp_tokens = &codec_;
    tools::AttachedProviders providers;
    providers.files = files_.get();
    engine_ =
        std::make_unique<TurnEngine>(authorizer_, *registry_, providers, audit_, clock_, options);
    invoker_ = std::make_unique<EngineInvoker>(*engine_);
    latch_ = std::make_unique<EscalationLatch>(*engine_, *invoker_, clock_);
    scope_.namespaces = {"world-1"};
    scope_.owners = {"human:user-alice"};
  }

  v1::OpenTurnResponse Open(const pb::ExecutionRequest& request = Request(),
                            v1::Runtime runtime = v1::RUNTIME_MCP) {
    v1::OpenTurnRequest open;
    *open.mutable_execution_request() = request;
    open.set_runtime(runtime);
    absl::StatusOr<v1::OpenTurnResponse> response = engine_->OpenTurn(open, scope_);
    EXPECT_TRUE(response.ok()) << response.status();
    EXPECT_FALSE(response->has_result()) << response->result().DebugString();
    return response.ok() ? *response : v1::OpenTurnResponse();
  }

  TurnEngine::McpTurn Seat(const v1::OpenTurnResponse& opened) {
    absl::StatusOr<ExecutionTokenClaims> claims = codec_.Verify(opened.mcp().token(), clock_.Now());
    EXPECT_TRUE(claims.ok()) << claims.status();
    absl::StatusOr<TurnEngine::McpTurn> seat = engine_->FindMcpTurn(*claims);
    EXPECT_TRUE(seat.ok()) << seat.status();
    return *seat;
  }

  absl::StatusOr<pb::ToolResult> Call(const TurnEngine::McpTurn& seat, const std::string& tool,
                                      const std::string& arguments = "{}") {
    pb::ToolCall call;
    call.set_id(absl::StrCat("call-", ++calls_));
    call.set_tool(tool);
    call.set_trace_id("trace-1");
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(arguments, call.mutable_arguments()).ok());
    *call.mutable_requested_at() = *common::ToProtoTimestamp(clock_.Now());
    return latch_->Invoke(seat, call);
  }

  pb::ExecutionResult HarnessExited(const std::string& turn_id, const std::string& outcome) {
    v1::FinishTurnRequest finish;
    finish.set_turn_id(turn_id);
    finish.mutable_harness_exited()->set_outcome_status(outcome);
    absl::StatusOr<v1::FinishTurnResponse> response = engine_->FinishTurn(finish, scope_);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->result() : pb::ExecutionResult();
  }

  std::vector<pb::AuditEvent> Audited(pb::AuditEventType type) {
    std::vector<pb::AuditEvent> events;
    for (const pb::AuditEvent& event : audit_.events()) {
      if (event.type() == type) events.push_back(event);
    }
    return events;
  }

  static std::vector<std::string> EventTypes(const pb::ExecutionResult& result) {
    std::vector<std::string> types;
    for (const pb::ExecutionEvent& event : result.events()) types.push_back(event.type());
    return types;
  }

  int calls_ = 0;
  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  const ExecutionTokenCodec codec_{std::string(32, 'k')};
  FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<FakeToolProvider> files_;
  std::unique_ptr<TurnEngine> engine_;
  std::unique_ptr<EngineInvoker> invoker_;
  std::unique_ptr<EscalationLatch> latch_;
  common::server::HostScope scope_;
};

TEST_F(EscalationLatchTest, McpTurnAnswersItsEndpointAndATokenBoundToIt) {
  const v1::OpenTurnResponse opened = Open();
  EXPECT_EQ(opened.mcp().url(), "http://127.0.0.1:1/mcp");
  absl::StatusOr<ExecutionTokenClaims> claims = codec_.Verify(opened.mcp().token(), clock_.Now());
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->turn_id, opened.turn_id());
  EXPECT_EQ(claims->execution_id, "exec-1");
  EXPECT_EQ(claims->namespace_id, "world-1");
  EXPECT_EQ(claims->actor, "agent:agent-assistant");
  EXPECT_EQ(claims->catalog_hash, opened.catalog().catalog_hash());
  // The token lives as long as the turn.
  EXPECT_EQ(claims->expires_at, clock_.Now() + absl::Seconds(60));
  EXPECT_EQ(opened.mcp().expires_at().seconds(), 1786438800 + 60);

  const TurnEngine::McpTurn seat = Seat(opened);
  EXPECT_EQ(seat.turn_id, opened.turn_id());
  EXPECT_TRUE(seat.offers_escalation);
  ASSERT_NE(seat.catalog, nullptr);
  EXPECT_EQ(seat.catalog->tools_size(), opened.catalog().tools_size());
}

TEST_F(EscalationLatchTest, DriverTurnsHaveNoSeatAndTokensReachNoOtherTurn) {
  const v1::OpenTurnResponse driver = Open(Request(), v1::RUNTIME_DRIVER);
  EXPECT_FALSE(driver.has_mcp());
  ExecutionTokenClaims claims;
  claims.turn_id = driver.turn_id();
  claims.execution_id = "exec-1";
  claims.namespace_id = "world-1";
  claims.actor = "agent:agent-assistant";
  claims.catalog_hash = driver.catalog().catalog_hash();
  EXPECT_THAT(engine_->FindMcpTurn(claims), StatusIs(absl::StatusCode::kUnauthenticated));

  pb::ExecutionRequest second = Request();
  second.set_execution_id("exec-2");
  const v1::OpenTurnResponse mcp = Open(second);
  absl::StatusOr<ExecutionTokenClaims> own = codec_.Verify(mcp.mcp().token(), clock_.Now());
  ASSERT_TRUE(own.ok());
  ExecutionTokenClaims moved = *own;
  moved.execution_id = "exec-1";
  EXPECT_THAT(engine_->FindMcpTurn(moved), StatusIs(absl::StatusCode::kUnauthenticated));
  moved = *own;
  moved.catalog_hash = "sha256:other";
  EXPECT_THAT(engine_->FindMcpTurn(moved), StatusIs(absl::StatusCode::kUnauthenticated));
  moved = *own;
  moved.actor = "agent:agent-other";
  EXPECT_THAT(engine_->FindMcpTurn(moved), StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_TRUE(engine_->FindMcpTurn(*own).ok());
}

TEST_F(EscalationLatchTest, WithoutATokenCodecMcpIsNotConfigured) {
  TurnEngine::Options options;
  tools::AttachedProviders providers;
  providers.files = files_.get();
  TurnEngine plain(authorizer_, *registry_, providers, audit_, clock_, options);
  v1::OpenTurnRequest open;
  *open.mutable_execution_request() = Request();
  open.set_runtime(v1::RUNTIME_MCP);
  EXPECT_THAT(plain.OpenTurn(open, scope_),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("RUNTIME_MCP")));
}

// Issue 35: a CLI that meets two tools with one portable name reaches only one of them, so such
// an MCP turn never opens; a driver turn, which no CLI names, still may.
TEST_F(EscalationLatchTest, McpTurnWhoseToolsShareAPortableNameIsRefusedAtOpen) {
  pb::ExecutionRequest request = Request();
  request.add_tools("files_read");
  v1::OpenTurnRequest open;
  *open.mutable_execution_request() = request;
  open.set_runtime(v1::RUNTIME_MCP);
  EXPECT_THAT(engine_->OpenTurn(open, scope_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("execution_request.tools: \"files.read\" and \"files_read\"")));
  open.set_runtime(v1::RUNTIME_DRIVER);
  EXPECT_TRUE(engine_->OpenTurn(open, scope_).ok());
}

TEST_F(EscalationLatchTest, CallsPassThroughToTheEngineUntilTheAsk) {
  const v1::OpenTurnResponse opened = Open();
  const TurnEngine::McpTurn seat = Seat(opened);
  absl::StatusOr<pb::ToolResult> read = Call(seat, "files.read", R"({"path": "notes.md"})");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_THAT(files_->invocations(), SizeIs(1));
  EXPECT_THAT(Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED), SizeIs(1));
}

TEST_F(EscalationLatchTest, AskIsAnsweredWithAStopAndLaterCallsArePending) {
  const v1::OpenTurnResponse opened = Open();
  const TurnEngine::McpTurn seat = Seat(opened);
  ASSERT_TRUE(Call(seat, "files.read", R"({"path": "a.md"})").ok());
  const size_t audited_before = audit_.events().size();

  absl::StatusOr<pb::ToolResult> ask =
      Call(seat, "sharedos.escalate", R"({"reason": "  need write access to Reports  "})");
  ASSERT_TRUE(ask.ok()) << ask.status();
  EXPECT_EQ(ask->status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  const auto& output = ask->output().struct_value().fields();
  EXPECT_TRUE(output.at("escalated").bool_value());
  EXPECT_EQ(output.at("reason").string_value(), "need write access to Reports");
  EXPECT_THAT(output.at("note").string_value(), HasSubstr("Stop"));

  for (const char* tool : {"files.read", "files.create", "sharedos.escalate", "not.a.tool"}) {
    absl::StatusOr<pb::ToolResult> later = Call(seat, tool, R"({"path": "b.md"})");
    ASSERT_TRUE(later.ok()) << later.status();
    EXPECT_EQ(later->status(), pb::TOOL_RESULT_STATUS_DENIED) << tool;
    EXPECT_EQ(later->error().code(), "escalation_pending") << tool;
    EXPECT_FALSE(later->error().retryable());
  }
  // Neither the ask nor the calls after it reached the engine: no operation, no provider call.
  EXPECT_THAT(files_->invocations(), SizeIs(1));
  EXPECT_EQ(audit_.events().size(), audited_before);
  EXPECT_EQ(authorizer_.calls(FakeAuthorizerClient::Method::kRecordEscalation), 0);

  const pb::ExecutionResult result = HarnessExited(opened.turn_id(), "completed");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(result.escalation().reason(), "need write access to Reports");
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  EXPECT_EQ(authorizer_.escalation_requests()[0].reason(), "need write access to Reports");
  const auto& metadata = result.metadata().fields();
  EXPECT_EQ(metadata.at("harnessOutcome").string_value(), "completed");
  EXPECT_EQ(metadata.at("callsAfterEscalation").number_value(), 4);
  EXPECT_EQ(metadata.at("escalationAsked").struct_value().fields().at("tool").string_value(),
            "sharedos.escalate");
  EXPECT_EQ(metadata.at("runtime").struct_value().fields().at("id").string_value(),
            "sharedos.mcp-harness");
  const std::vector<std::string> types = EventTypes(result);
  ASSERT_FALSE(types.empty());
  EXPECT_EQ(types.back(), "turn.escalated");
  // Only the one files.read shows as a call.
  EXPECT_EQ(std::count(types.begin(), types.end(), "tool.requested"), 1);
  const std::vector<pb::AuditEvent> ended = Audited(pb::AUDIT_EVENT_TYPE_TURN_ENDED);
  ASSERT_THAT(ended, SizeIs(1));
  EXPECT_EQ(ended[0].reason(), "escalation_requested");
}

TEST_F(EscalationLatchTest, UngrantedAskPassesThroughAndIsRefusedToolUnavailable) {
  const v1::OpenTurnResponse opened = Open(Request(/*offer_escalation=*/false));
  const TurnEngine::McpTurn seat = Seat(opened);
  EXPECT_FALSE(seat.offers_escalation);
  absl::StatusOr<pb::ToolResult> ask = Call(seat, "sharedos.escalate", R"({"reason": "please"})");
  ASSERT_TRUE(ask.ok()) << ask.status();
  EXPECT_EQ(ask->status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(ask->error().code(), "tool_unavailable");
  const std::vector<pb::AuditEvent> invoked = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(invoked, SizeIs(1));
  EXPECT_EQ(invoked[0].cause(), "not_offered");
  // Not latched: the next call runs, and the harness's exit settles the turn its own way.
  absl::StatusOr<pb::ToolResult> read = Call(seat, "files.read", R"({"path": "a.md"})");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  const pb::ExecutionResult result = HarnessExited(opened.turn_id(), "error");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(result.error().code(), "harness_exited_without_outcome");
  EXPECT_THAT(authorizer_.escalation_requests(), IsEmpty());
}

TEST_F(EscalationLatchTest, UnrecordedEscalationKeepsTheTurnOpenForARetry) {
  const v1::OpenTurnResponse opened = Open();
  const TurnEngine::McpTurn seat = Seat(opened);
  ASSERT_TRUE(Call(seat, "sharedos.escalate", R"({"reason": "need more"})").ok());
  authorizer_.FailMethod(FakeAuthorizerClient::Method::kRecordEscalation,
                         absl::UnavailableError("down"));
  v1::FinishTurnRequest finish;
  finish.set_turn_id(opened.turn_id());
  finish.mutable_harness_exited()->set_outcome_status("completed");
  EXPECT_THAT(engine_->FinishTurn(finish, scope_), StatusIs(absl::StatusCode::kUnavailable));
  authorizer_.FailMethod(FakeAuthorizerClient::Method::kRecordEscalation, absl::OkStatus());
  EXPECT_EQ(HarnessExited(opened.turn_id(), "completed").status(), pb::EXECUTION_STATUS_ESCALATED);
}

TEST_F(EscalationLatchTest, AskOnAnEndedTurnIsNotLatched) {
  const v1::OpenTurnResponse opened = Open();
  const TurnEngine::McpTurn seat = Seat(opened);
  EXPECT_EQ(HarnessExited(opened.turn_id(), "error").status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_THAT(Call(seat, "sharedos.escalate", R"({"reason": "late"})"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// harness_exited.outcome_status reaches turn.ended's record (harnessOutcome): bounded first.
TEST_F(EscalationLatchTest, HarnessOutcomeThatIsNotAnIdentifierIsRefused) {
  const v1::OpenTurnResponse opened = Open();
  v1::FinishTurnRequest finish;
  finish.set_turn_id(opened.turn_id());
  finish.mutable_harness_exited()->set_outcome_status(
      std::string(common::validation::kMaxIdentifierLength + 1, 'x'));
  EXPECT_THAT(
      engine_->FinishTurn(finish, scope_),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("harness_exited.outcome_status")));
  // The refused report left the turn running: the next one ends it.
  EXPECT_EQ(HarnessExited(opened.turn_id(), "error").status(), pb::EXECUTION_STATUS_FAILED);
}

TEST_F(EscalationLatchTest, HarnessCompletingWithoutAnAskSucceeds) {
  const v1::OpenTurnResponse opened = Open();
  v1::FinishTurnRequest finish;
  finish.set_turn_id(opened.turn_id());
  finish.mutable_harness_exited()->set_outcome_status("completed");
  finish.mutable_harness_exited()->mutable_output()->set_string_value("done");
  absl::StatusOr<v1::FinishTurnResponse> response = engine_->FinishTurn(finish, scope_);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->result().status(), pb::EXECUTION_STATUS_SUCCEEDED);
  EXPECT_FALSE(response->result().metadata().fields().contains("callsAfterEscalation"));
}

// A metadata field as text ("" when absent), so a missing field fails the test, not the run.
std::string Field(const google::protobuf::Struct& metadata, const std::string& key) {
  auto it = metadata.fields().find(key);
  if (it == metadata.fields().end()) return "";
  if (it->second.has_number_value()) return absl::StrCat(it->second.number_value());
  return it->second.string_value();
}

// The capreq- id of the authority a no_matching_grant refusal described.
std::string RequirementId(const pb::ToolResult& refused) {
  const auto& details = refused.error().details().fields();
  auto it = details.find("requiredAuthority");
  if (it == details.end()) return "";
  const auto& described = it->second.struct_value().fields();
  auto id = described.find("id");
  return id == described.end() ? "" : id->second.string_value();
}

// docs/adr/0018: an MCP escalation names the authority a refusal of the turn described.
TEST_F(EscalationLatchTest, AskNamingADescribedRequirementEscalatesForExactlyThatAuthority) {
  authorizer_.DenyAuthorize("files", "Reports/q3.md", "create", "no_matching_grant");
  authorizer_.DenyAuthorize("files", "Reports/q4.md", "create", "no_matching_grant");
  const v1::OpenTurnResponse opened = Open();
  const TurnEngine::McpTurn seat = Seat(opened);
  absl::StatusOr<pb::ToolResult> q3 = Call(seat, "files.create", R"({"path": "Reports/q3.md"})");
  absl::StatusOr<pb::ToolResult> q4 = Call(seat, "files.create", R"({"path": "Reports/q4.md"})");
  ASSERT_TRUE(q3.ok() && q4.ok());
  ASSERT_EQ(q3->error().code(), "no_matching_grant");
  const std::string q3_id = RequirementId(*q3);
  ASSERT_THAT(q3_id, ::testing::StartsWith("capreq-"));
  ASSERT_NE(q3_id, RequirementId(*q4));

  absl::StatusOr<pb::ToolResult> ask = Call(
      seat, "sharedos.escalate",
      absl::StrCat(R"({"reason": "write the Q3 report", "requirement": "  )", q3_id, R"(  "})"));
  ASSERT_TRUE(ask.ok()) << ask.status();
  EXPECT_EQ(ask->status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  ASSERT_TRUE(Call(seat, "files.read", R"({"path": "a.md"})").ok());  // pending, counted

  const pb::ExecutionResult result = HarnessExited(opened.turn_id(), "completed");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED);
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  const authorizer::v1::RecordEscalationRequest asked = authorizer_.escalation_requests()[0];
  ASSERT_TRUE(asked.has_requested_authority_ask()) << asked.DebugString();
  ASSERT_EQ(asked.requested_authority_ask().capabilities_size(), 1);
  EXPECT_THAT(asked.requested_authority_ask().capabilities(0).resource().path(),
              ::testing::ElementsAre("Reports", "q3.md"));
  EXPECT_THAT(asked.requested_authority_ask().capabilities(0).actions(),
              ::testing::ElementsAre("create"));
  EXPECT_EQ(Field(result.metadata(), "escalationRequirement"), q3_id) << result.DebugString();

  // turn.ended records what the harness did after it asked, never its reason text.
  const std::vector<pb::AuditEvent> ended = Audited(pb::AUDIT_EVENT_TYPE_TURN_ENDED);
  ASSERT_THAT(ended, SizeIs(1));
  const google::protobuf::Struct& recorded = ended[0].metadata();
  EXPECT_EQ(Field(recorded, "harnessOutcome"), "completed") << ended[0].DebugString();
  EXPECT_EQ(Field(recorded, "callsAfterEscalation"), "1");
  EXPECT_EQ(Field(recorded, "escalationRequirement"), q3_id);
  EXPECT_FALSE(recorded.fields().contains("escalationAsked"));
  EXPECT_THAT(ended[0].DebugString(), ::testing::Not(HasSubstr("write the Q3 report")));
}

TEST_F(EscalationLatchTest, AskNamingAnUndescribedRequirementIsRefusedRecordedAndNotLatched) {
  authorizer_.DenyAuthorize("files", "Reports/q3.md", "create", "no_matching_grant");
  const v1::OpenTurnResponse opened = Open();
  const TurnEngine::McpTurn seat = Seat(opened);
  const std::string invented = "capreq-" + std::string(64, 'a');
  for (const std::string& requirement :
       {absl::StrCat("\"", invented, "\""), std::string("7"), std::string("\"not-an-id\"")}) {
    absl::StatusOr<pb::ToolResult> ask =
        Call(seat, "sharedos.escalate",
             absl::StrCat(R"({"reason": "please", "requirement": )", requirement, "}"));
    ASSERT_TRUE(ask.ok()) << ask.status();
    EXPECT_EQ(ask->status(), pb::TOOL_RESULT_STATUS_FAILED) << requirement;
    EXPECT_EQ(ask->error().code(), "invalid_tool_arguments") << requirement;
    EXPECT_EQ(ask->error().message(), core::kUndescribedRequirementMessage);
  }
  const std::vector<pb::AuditEvent> refused = Audited(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  ASSERT_THAT(refused, SizeIs(3));
  EXPECT_EQ(refused[0].reason(), "invalid_tool_arguments");
  EXPECT_EQ(refused[0].cause(), "requirement_not_described");
  EXPECT_EQ(refused[0].source(), pb::AUDIT_SOURCE_ENVELOPE);

  // Not latched: the next call runs; an ask naming none then names the one authority described.
  absl::StatusOr<pb::ToolResult> q3 = Call(seat, "files.create", R"({"path": "Reports/q3.md"})");
  ASSERT_TRUE(q3.ok());
  EXPECT_EQ(q3->error().code(), "no_matching_grant");
  absl::StatusOr<pb::ToolResult> ask = Call(seat, "sharedos.escalate", R"({"reason": "please"})");
  ASSERT_TRUE(ask.ok());
  EXPECT_EQ(ask->status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  const pb::ExecutionResult result = HarnessExited(opened.turn_id(), "completed");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(Field(result.metadata(), "escalationRequirement"), RequirementId(*q3));
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  EXPECT_TRUE(authorizer_.escalation_requests()[0].has_requested_authority_ask());
}

TEST_F(EscalationLatchTest, AskNamingNoneOfSeveralDescribedNamesNone) {
  authorizer_.DenyAuthorize("files", "Reports/q3.md", "create", "no_matching_grant");
  authorizer_.DenyAuthorize("files", "Reports/q4.md", "create", "no_matching_grant");
  const v1::OpenTurnResponse opened = Open();
  const TurnEngine::McpTurn seat = Seat(opened);
  ASSERT_TRUE(Call(seat, "files.create", R"({"path": "Reports/q3.md"})").ok());
  ASSERT_TRUE(Call(seat, "files.create", R"({"path": "Reports/q4.md"})").ok());
  ASSERT_TRUE(Call(seat, "sharedos.escalate", R"({"reason": "please"})").ok());
  const pb::ExecutionResult result = HarnessExited(opened.turn_id(), "completed");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_FALSE(result.metadata().fields().contains("escalationRequirement"));
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  EXPECT_FALSE(authorizer_.escalation_requests()[0].has_requested_authority_ask());
}

TEST(EscalationRequirementTest, TrimmedIdOrNoneOrUnusable) {
  google::protobuf::Struct arguments;
  (*arguments.mutable_fields())["reason"].set_string_value("why");
  EXPECT_EQ(EscalationRequirement(arguments), std::nullopt);
  auto& requirement = (*arguments.mutable_fields())["requirement"];
  requirement.set_string_value("  capreq-ab \n");
  EXPECT_EQ(EscalationRequirement(arguments), "capreq-ab");
  requirement.set_string_value("   ");
  EXPECT_EQ(EscalationRequirement(arguments), std::nullopt);
  requirement.set_null_value(google::protobuf::NULL_VALUE);
  EXPECT_EQ(EscalationRequirement(arguments), std::nullopt);
  // Not a string: no turn holds it (refused as undescribed, never ignored).
  requirement.set_number_value(3);
  EXPECT_EQ(EscalationRequirement(arguments), "");
  // Longer than any id: cut, never copied whole.
  requirement.set_string_value(std::string(5000, 'x'));
  EXPECT_EQ(EscalationRequirement(arguments)->size(), 128u);
}

google::protobuf::Struct Reason(const std::string& text) {
  google::protobuf::Struct arguments;
  (*arguments.mutable_fields())["reason"].set_string_value(text);
  return arguments;
}

TEST(EscalationReasonTest, TrimsAndFallsBack) {
  EXPECT_EQ(EscalationReason(Reason("  why \n")), "why");
  EXPECT_EQ(EscalationReason(Reason("   ")), kEscalationFallbackReason);
  // The protocol's trim (JavaScript's), not only ASCII: U+2028 and U+00A0 go too.
  EXPECT_EQ(EscalationReason(Reason("\u2028why\u00a0")), "why");
  EXPECT_EQ(EscalationReason(google::protobuf::Struct()), kEscalationFallbackReason);
  google::protobuf::Struct number;
  (*number.mutable_fields())["reason"].set_number_value(3);
  EXPECT_EQ(EscalationReason(number), kEscalationFallbackReason);
}

TEST(EscalationReasonTest, CutsAt512Utf16UnitsWithoutSplittingACharacter) {
  EXPECT_EQ(EscalationReason(Reason(std::string(600, 'a'))), std::string(512, 'a'));
  // 511 units, then U+1F600 (two units) would make 513: it is left out whole.
  const std::string emoji = "\xF0\x9F\x98\x80";
  EXPECT_EQ(EscalationReason(Reason(std::string(511, 'a') + emoji)), std::string(511, 'a'));
  EXPECT_EQ(EscalationReason(Reason(std::string(510, 'a') + emoji + "b")),
            std::string(510, 'a') + emoji);
  // "é" is two UTF-8 bytes but one unit.
  std::string accents;
  for (int i = 0; i < 600; ++i) accents += "\xC3\xA9";
  EXPECT_EQ(EscalationReason(Reason(accents)).size(), 1024u);
}

}  // namespace
}  // namespace sharedos::envelope::mcp
