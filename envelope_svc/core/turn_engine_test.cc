#include "envelope_svc/core/turn_engine.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "common/time/proto_time.h"
#include "envelope_svc/core/test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::authorizer::client::FakeAuthorizerClient;
using ::sharedos::common::StatusIs;
using ::testing::Contains;
using ::testing::ElementsAre;
using testing::FakeToolProvider;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using Method = FakeAuthorizerClient::Method;

template <typename T>
T Parse(const std::string& text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    ADD_FAILURE() << "bad text proto: " << text;
  }
  return message;
}

class TurnEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = testing::TestRegistry();
    files_ = std::make_unique<FakeToolProvider>("files");
    host_ = std::make_unique<FakeToolProvider>(
        "host-1", std::vector<pb::ToolDefinition>{registry_->Find("host.echo")->definition()});
    scope_.namespaces = {"world-1"};
    scope_.owners = {"human:user-alice"};
    MakeEngine(TurnEngine::Options());
  }

  void MakeEngine(TurnEngine::Options options) {
    tools::AttachedProviders providers;
    providers.files = files_.get();
    providers.hosts["host-1"] = host_.get();
    engine_ = std::make_unique<TurnEngine>(authorizer_, *registry_, providers, audit_, clock_,
                                           std::move(options));
  }

  static pb::ExecutionRequest Request() {
    return testing::TestExecutionRequest({"files.read", "files.create", "files.peek", "files.fixed",
                                          "host.echo", "notes.get", "sharedos.escalate"});
  }

  absl::StatusOr<v1::OpenTurnResponse> TryOpen(const pb::ExecutionRequest& request) {
    v1::OpenTurnRequest open;
    *open.mutable_execution_request() = request;
    open.set_runtime(v1::RUNTIME_DRIVER);
    return engine_->OpenTurn(open, scope_);
  }

  v1::OpenTurnResponse Open(const pb::ExecutionRequest& request = Request()) {
    absl::StatusOr<v1::OpenTurnResponse> response = TryOpen(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : v1::OpenTurnResponse();
  }

  // A turn that is running; its id.
  std::string OpenRunning(const pb::ExecutionRequest& request = Request()) {
    v1::OpenTurnResponse response = Open(request);
    EXPECT_FALSE(response.has_result()) << response.result().DebugString();
    return response.turn_id();
  }

  absl::StatusOr<v1::InvokeToolResponse> TryCall(const std::string& turn_id,
                                                 const std::string& tool,
                                                 const std::string& arguments = "{}",
                                                 std::optional<int64_t> step = std::nullopt,
                                                 const std::string& call_id = "call-1") {
    v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool(tool);
    call->set_trace_id("trace-1");
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(arguments, call->mutable_arguments()).ok());
    *call->mutable_requested_at() = *common::ToProtoTimestamp(clock_.Now());
    if (step.has_value()) request.set_step(*step);
    return engine_->InvokeTool(request, scope_);
  }

  pb::ToolResult Call(const std::string& turn_id, const std::string& tool,
                      const std::string& arguments = "{}",
                      std::optional<int64_t> step = std::nullopt) {
    absl::StatusOr<v1::InvokeToolResponse> response = TryCall(turn_id, tool, arguments, step);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->result() : pb::ToolResult();
  }

  absl::StatusOr<v1::FinishTurnResponse> TryFinish(const std::string& turn_id,
                                                   const std::string& outcome_text) {
    v1::FinishTurnRequest request = Parse<v1::FinishTurnRequest>(outcome_text);
    request.set_turn_id(turn_id);
    return engine_->FinishTurn(request, scope_);
  }

  pb::ExecutionResult Finish(const std::string& turn_id, const std::string& outcome_text) {
    absl::StatusOr<v1::FinishTurnResponse> response = TryFinish(turn_id, outcome_text);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->result() : pb::ExecutionResult();
  }

  pb::ExecutionResult Cancel(const std::string& turn_id) {
    v1::CancelTurnRequest request;
    request.set_turn_id(turn_id);
    absl::StatusOr<v1::CancelTurnResponse> response = engine_->CancelTurn(request, scope_);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? response->result() : pb::ExecutionResult();
  }

  v1::GetTurnResponse Get(const std::string& turn_id) {
    v1::GetTurnRequest request;
    request.set_turn_id(turn_id);
    absl::StatusOr<v1::GetTurnResponse> response = engine_->GetTurn(request, scope_);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : v1::GetTurnResponse();
  }

  static std::vector<std::string> EventTypes(const pb::ExecutionResult& result) {
    std::vector<std::string> types;
    for (const pb::ExecutionEvent& event : result.events()) types.push_back(event.type());
    return types;
  }

  std::vector<pb::AuditEvent> Audited(pb::AuditEventType type) {
    std::vector<pb::AuditEvent> events;
    for (const pb::AuditEvent& event : audit_.events()) {
      if (event.type() == type) events.push_back(event);
    }
    return events;
  }

  // The one turn.ended recorded, checked post-effect.
  pb::AuditEvent TurnEnded() {
    std::vector<pb::AuditEvent> ended;
    for (const auto& recorded : audit_.recorded()) {
      if (recorded.event.type() != pb::AUDIT_EVENT_TYPE_TURN_ENDED) continue;
      EXPECT_FALSE(recorded.pre_effect);
      ended.push_back(recorded.event);
    }
    EXPECT_THAT(ended, SizeIs(1));
    if (ended.empty()) return pb::AuditEvent();
    EXPECT_EQ(ended[0].operation_id(), "exec-1");
    EXPECT_FALSE(ended[0].has_source());
    return ended[0];
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<FakeToolProvider> files_;
  std::unique_ptr<FakeToolProvider> host_;
  common::server::HostScope scope_;
  std::unique_ptr<TurnEngine> engine_;
};

// ---------------------------------------------------------------------------------------------
// OpenTurn

TEST_F(TurnEngineTest, OpenTurnAnswersTheCatalogueReachAndLimits) {
  pb::ReachResult reach = Parse<pb::ReachResult>(R"pb(
    status: REACH_STATUS_COMPUTED
    reach { namespace: "files" path: "Workspace" actions: "read" scope: SCOPE_DESCENDANTS }
    reach { namespace: "repo" path: "r" actions: "status" scope: SCOPE_EXACT }
  )pb");
  authorizer_.SetReach(reach);
  authorizer_.SetHostPolicyVersion("policy-3");
  authorizer_.Withhold("files.peek", "no_matching_grant");
  v1::OpenTurnResponse response = Open();
  ASSERT_FALSE(response.has_result());
  EXPECT_THAT(response.turn_id(), StartsWith("turn-"));

  // Discoverable ∩ requested (notes.get's namespace is off; files.peek withheld), by name.
  std::vector<std::string> names;
  for (const auto& tool : response.catalog().tools()) names.push_back(tool.name());
  EXPECT_THAT(names, ElementsAre("files.create", "files.fixed", "files.read", "host.echo",
                                 "sharedos.escalate"));
  EXPECT_EQ(response.catalog().version(), "1");
  EXPECT_EQ(response.catalog().execution_id(), "exec-1");
  EXPECT_THAT(response.catalog().catalog_hash(), SizeIs(64));
  // The published projection never carries the ceiling.
  EXPECT_THAT(response.catalog().DebugString(), Not(HasSubstr("required_capability")));

  // Reach cut to the catalogue's resource namespaces (files, sharedos).
  ASSERT_THAT(response.reach().reach(), SizeIs(1));
  EXPECT_EQ(response.reach().reach(0).namespace_(), "files");

  EXPECT_EQ(response.limits().max_steps(), 16);
  EXPECT_EQ(response.limits().max_tool_calls(), 16);
  EXPECT_EQ(response.limits().timeout_ms(), 120000);

  // tool.catalog.listed, pre-effect, counts and identifiers only.
  ASSERT_THAT(audit_.recorded(), SizeIs(1));
  const auto listed = audit_.recorded()[0];
  EXPECT_TRUE(listed.pre_effect);
  EXPECT_EQ(listed.event.type(), pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED);
  EXPECT_EQ(listed.event.outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_EQ(listed.event.source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(listed.event.authority_hash(), "authority-hash-1");
  EXPECT_FALSE(listed.event.has_fail_closed());
  const auto& metadata = listed.event.metadata().fields();
  EXPECT_EQ(metadata.at("catalogHash").string_value(), response.catalog().catalog_hash());
  EXPECT_EQ(metadata.at("hostPolicyVersion").string_value(), "policy-3");
  // 7 registered tools: notes.get (namespace off) and files.peek (withheld).
  EXPECT_EQ(metadata.at("withheldCount").number_value(), 2);
  ASSERT_EQ(metadata.at("enabledNamespaces").list_value().values_size(), 2);
  EXPECT_THAT(listed.event.DebugString(), Not(HasSubstr("files.read")));

  v1::GetTurnResponse got = Get(response.turn_id());
  EXPECT_EQ(got.state(), v1::TURN_STATE_RUNNING);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_UNSPECIFIED);
  EXPECT_THAT(EventTypes(got.result()), ElementsAre("turn.started"));
  EXPECT_EQ(engine_->running_turns(), 1u);
}

TEST_F(TurnEngineTest, LimitsComeFromOptionsWithToolCallsDefaultingToSteps) {
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_max_steps(5);
  request.mutable_options()->set_timeout_ms(600000);
  v1::OpenTurnResponse response = Open(request);
  EXPECT_EQ(response.limits().max_steps(), 5);
  EXPECT_EQ(response.limits().max_tool_calls(), 5);
  EXPECT_EQ(response.limits().timeout_ms(), 600000);
}

TEST_F(TurnEngineTest, StrictValidationNamesTheField) {
  pb::ExecutionRequest request = Request();
  request.set_version("2");
  EXPECT_THAT(TryOpen(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("execution_request.version")));
  request = Request();
  request.mutable_options()->set_timeout_ms(600001);
  EXPECT_THAT(TryOpen(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("execution_request.options.timeout_ms")));
  request = Request();
  request.mutable_context()
      ->mutable_actor()
      ->GetReflection()
      ->MutableUnknownFields(request.mutable_context()->mutable_actor())
      ->AddVarint(9, 1);
  EXPECT_THAT(TryOpen(request), StatusIs(absl::StatusCode::kInvalidArgument,
                                         HasSubstr("context.actor: unknown field 9")));
  v1::OpenTurnRequest open;
  *open.mutable_execution_request() = Request();
  EXPECT_THAT(engine_->OpenTurn(open, scope_),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("runtime")));
  open.set_runtime(v1::RUNTIME_MCP);
  EXPECT_THAT(engine_->OpenTurn(open, scope_),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("RUNTIME_MCP")));
  EXPECT_EQ(authorizer_.calls(Method::kOpen), 0);
  EXPECT_THAT(audit_.events(), IsEmpty());
}

TEST_F(TurnEngineTest, ContextOutsideTheCallersScopeIsPermissionDenied) {
  scope_.namespaces = {"world-2"};
  EXPECT_THAT(TryOpen(Request()), StatusIs(absl::StatusCode::kPermissionDenied));
  scope_.namespaces = {"world-1"};
  scope_.owners = {"human:user-bob"};
  EXPECT_THAT(TryOpen(Request()), StatusIs(absl::StatusCode::kPermissionDenied));
  scope_.owners = {"*"};
  EXPECT_TRUE(TryOpen(Request()).ok());
  EXPECT_EQ(authorizer_.calls(Method::kOpen), 1);
}

TEST_F(TurnEngineTest, ExecutionIdIsUsedOnce) {
  OpenRunning();
  EXPECT_THAT(TryOpen(Request()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("execution_id")));
}

struct ContextCase {
  std::string name;
  std::string code;
  std::function<void(pb::ExecutionRequest&)> mutate;
};

class ContextDenialTest : public TurnEngineTest,
                          public ::testing::WithParamInterface<ContextCase> {};

TEST_P(ContextDenialTest, IsDeniedWithoutTouchingTheAuthorizer) {
  pb::ExecutionRequest request = Request();
  GetParam().mutate(request);
  v1::OpenTurnResponse response = Open(request);
  ASSERT_TRUE(response.has_result());
  EXPECT_FALSE(response.has_catalog());
  const pb::ExecutionResult& result = response.result();
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(result.error().code(), GetParam().code);
  EXPECT_THAT(EventTypes(result), ElementsAre("turn.denied"));
  EXPECT_EQ(result.events(0).data().struct_value().fields().at("code").string_value(),
            GetParam().code);
  EXPECT_EQ(authorizer_.calls(Method::kOpen), 0);
  EXPECT_EQ(authorizer_.calls(Method::kAdmit), 0);
  EXPECT_THAT(audit_.events(), SizeIs(1));
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(ended.reason(), GetParam().code);
  EXPECT_FALSE(ended.has_ended_by());
  EXPECT_FALSE(ended.has_fail_closed());
  EXPECT_EQ(Get(response.turn_id()).state(), v1::TURN_STATE_ENDED);
}

INSTANTIATE_TEST_SUITE_P(
    Codes, ContextDenialTest,
    ::testing::Values(
        ContextCase{"ActorMismatch", "actor_mismatch",
                    [](pb::ExecutionRequest& r) {
                      r.mutable_context()->mutable_actor()->set_agent_id("agent-other");
                    }},
        ContextCase{"ReceiverMismatch", "receiver_mismatch",
                    [](pb::ExecutionRequest& r) {
                      r.mutable_message()->mutable_receiver()->set_agent_id("agent-other");
                    }},
        ContextCase{"MessageTraceMismatch", "message_context_mismatch",
                    [](pb::ExecutionRequest& r) { r.mutable_message()->set_trace_id("trace-2"); }},
        ContextCase{
            "MessagePurposeMismatch", "message_context_mismatch",
            [](pb::ExecutionRequest& r) { r.mutable_message()->set_purpose("something else"); }}),
    [](const auto& info) { return info.param.name; });

TEST_F(TurnEngineTest, UnreachableAuthorizerDeniesAuthorityUnavailableFailClosed) {
  authorizer_.FailMethod(Method::kOpen, absl::UnavailableError("connection refused"));
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_EQ(response.result().status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(response.result().error().code(), "authority_unavailable");
  EXPECT_THAT(response.result().DebugString(), Not(HasSubstr("connection refused")));
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(ended.reason(), "authority_unavailable");
  EXPECT_TRUE(ended.fail_closed());
}

TEST_F(TurnEngineTest, UnavailableLeaseDeniesAndIsClosed) {
  authorizer_.SetLeaseUnavailable("authority_unavailable");
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_EQ(response.result().error().code(), "authority_unavailable");
  EXPECT_EQ(authorizer_.calls(Method::kAdmit), 0);
  EXPECT_THAT(authorizer_.closed_leases(), SizeIs(1));
  EXPECT_TRUE(TurnEnded().fail_closed());
}

TEST_F(TurnEngineTest, LeaseRefusedForAnAuditOutageFailsTheTurn) {
  authorizer_.SetLeaseUnavailable("audit_unavailable");
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_EQ(response.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(response.result().error().code(), "audit_unavailable");
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
  EXPECT_TRUE(ended.fail_closed());
}

TEST_F(TurnEngineTest, AdmissionDenialEndsTheTurnBeforeTheRuntimeStarts) {
  authorizer_.DenyAdmission("no_matching_grant");
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_EQ(response.result().status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(response.result().error().code(), "no_matching_grant");
  EXPECT_FALSE(response.result().error().retryable());
  EXPECT_THAT(EventTypes(response.result()), ElementsAre("turn.denied"));
  EXPECT_FALSE(response.result().has_metadata());  // no runtime ran
  EXPECT_EQ(authorizer_.calls(Method::kDiscover), 0);
  EXPECT_THAT(authorizer_.closed_leases(), SizeIs(1));
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(ended.reason(), "no_matching_grant");
  EXPECT_FALSE(ended.has_fail_closed());
  EXPECT_EQ(engine_->running_turns(), 0u);
  EXPECT_EQ(engine_->held_turns(), 1u);
}

TEST_F(TurnEngineTest, AdmissionWithoutAnAuthorizerFailsClosed) {
  authorizer_.FailMethod(Method::kAdmit, absl::DeadlineExceededError("slow"));
  v1::OpenTurnResponse response = Open();
  EXPECT_EQ(response.result().error().code(), "authority_unavailable");
  EXPECT_TRUE(TurnEnded().fail_closed());
}

TEST_F(TurnEngineTest, ProviderThatCannotListFailsToolCatalogUnavailable) {
  host_->FailListTools(absl::UnavailableError("host down"));
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_EQ(response.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(response.result().error().code(), "tool_catalog_unavailable");
  EXPECT_THAT(EventTypes(response.result()), ElementsAre("turn.failed"));
  EXPECT_EQ(response.result().events(0).data().struct_value().fields().at("source").string_value(),
            "envelope");
  EXPECT_THAT(Audited(pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED), IsEmpty());
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.reason(), "tool_catalog_unavailable");
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
}

TEST_F(TurnEngineTest, CatalogueTheAuditLogCannotHoldIsNeverShown) {
  audit_.FailPreEffect(true);
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_FALSE(response.has_catalog());
  EXPECT_EQ(response.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(response.result().error().code(), "audit_unavailable");
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
  EXPECT_TRUE(ended.fail_closed());
  EXPECT_THAT(authorizer_.closed_leases(), SizeIs(1));
}

TEST_F(TurnEngineTest, DiscoveryOutageListsAnEmptyCatalogueFailClosed) {
  authorizer_.FailMethod(Method::kDiscover, absl::UnavailableError("down"));
  v1::OpenTurnResponse response = Open();
  ASSERT_FALSE(response.has_result());
  EXPECT_THAT(response.catalog().tools(), IsEmpty());
  const std::vector<pb::AuditEvent> listed = Audited(pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED);
  ASSERT_THAT(listed, SizeIs(1));
  EXPECT_EQ(listed[0].outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(listed[0].reason(), "authority_unavailable");
  EXPECT_TRUE(listed[0].fail_closed());
  EXPECT_EQ(listed[0].metadata().fields().at("withheldCount").number_value(), 0);
  // sha256("[]"): the empty catalogue.
  EXPECT_EQ(response.catalog().catalog_hash(),
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945");
}

TEST_F(TurnEngineTest, FailClosedWithholdingIsMarkedOnTheListing) {
  authorizer_.Withhold("files.read", "host_policy_unavailable", /*fail_closed=*/true);
  Open();
  const std::vector<pb::AuditEvent> listed = Audited(pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED);
  ASSERT_THAT(listed, SizeIs(1));
  EXPECT_EQ(listed[0].outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_TRUE(listed[0].fail_closed());
}

// ---------------------------------------------------------------------------------------------
// InvokeTool: the turn layer (source envelope)

TEST_F(TurnEngineTest, MediatedCallEmitsRequestedAndCompletedWithoutArguments) {
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

TEST_F(TurnEngineTest, ToolNotOfferedThisTurnIsRefusedByTheEnvelope) {
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

// A withheld tool's cause says who withheld it: the host ceiling (host_policy_denied, ADR 0020's
// count) or discovery otherwise (not_discoverable); a disabled namespace says so too.
TEST_F(TurnEngineTest, WithheldToolsAreRefusedWithTheCauseThatWithheldThem) {
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
  EXPECT_EQ(invoked[0].cause(), "not_discoverable");
  EXPECT_EQ(invoked[1].cause(), "host_policy_denied");
  EXPECT_EQ(invoked[2].cause(), "namespace_disabled");
  for (const pb::AuditEvent& event : invoked) {
    EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_ENVELOPE);
    EXPECT_EQ(event.reason(), "tool_unavailable");
  }
}

TEST_F(TurnEngineTest, CallBudgetRefusesTheCallNotTheTurn) {
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

TEST_F(TurnEngineTest, StepBudgetCountsDeclaredSteps) {
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

TEST_F(TurnEngineTest, CallsInTheDrainWindowAreRefusedTurnDraining) {
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

TEST_F(TurnEngineTest, AuditOutageDrainsTheTurnAndFailsItAuditUnavailable) {
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

TEST_F(TurnEngineTest, InvokeToolTransportErrors) {
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
  EXPECT_THAT(engine_->InvokeTool(request, other), StatusIs(absl::StatusCode::kPermissionDenied));
  Cancel(turn);
  EXPECT_THAT(TryCall(turn, "files.read", R"({"path": "a"})"),
              StatusIs(absl::StatusCode::kFailedPrecondition));
}

// ---------------------------------------------------------------------------------------------
// Terminals

TEST_F(TurnEngineTest, CompleteSucceedsWritesTurnEndedOnceAndClosesTheLease) {
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

TEST_F(TurnEngineTest, RuntimeFailureKeepsRetryableOnlyWhenSafe) {
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

TEST_F(TurnEngineTest, RefusedWriteLeavesTheTurnSafeToRetry) {
  const std::string turn = OpenRunning();
  authorizer_.DenyAuthorize("files", "out.txt", "create", "no_matching_grant");
  EXPECT_EQ(Call(turn, "files.create", R"({"path": "out.txt"})").status(),
            pb::TOOL_RESULT_STATUS_DENIED);
  pb::ExecutionResult result = Finish(turn, R"pb(
    fail { error { code: "driver_failed" message: "gave up" retryable: true } }
  )pb");
  EXPECT_TRUE(result.error().retryable());
}

TEST_F(TurnEngineTest, EscalationWithoutTheAffordanceFailsAndRecordsNoEscalation) {
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

TEST_F(TurnEngineTest, EscalationIsRecordedAtTheAuthorizer) {
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

TEST_F(TurnEngineTest, HostEscalatesADenialWithItsRequiredAuthority) {
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

TEST_F(TurnEngineTest, RequestedAuthorityOfAnotherOwnerIsInvalid) {
  const std::string turn = OpenRunning();
  EXPECT_THAT(TryFinish(turn, R"pb(escalate {
                                     reason: "x"
                                     requested_authority {
                                       owner { human_user_id: "user-bob" }
                                       capabilities {
                                         resource { namespace: "files" path: "a" }
                                         actions: "read"
                                         scope: SCOPE_EXACT
                                       }
                                     }
                                   })pb"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("requested_authority.owner")));
  EXPECT_THAT(
      TryFinish(turn, R"pb(escalate {
                             reason: "x"
                             requested_authority {}
                           })pb"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("requested_authority.capabilities")));
  EXPECT_EQ(Get(turn).state(), v1::TURN_STATE_RUNNING);
}

TEST_F(TurnEngineTest, EscalationTheAuthorizerCannotStoreLeavesTheTurnOpen) {
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

TEST_F(TurnEngineTest, FinishTurnErrors) {
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

TEST_F(TurnEngineTest, CancelEndsTheTurnOnceAndIsIdempotent) {
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

TEST_F(TurnEngineTest, DeadlineCancelsTheTurn) {
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

TEST_F(TurnEngineTest, OperationsPastTheDeadlineFindTheTurnCancelled) {
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

TEST_F(TurnEngineTest, EndedTurnsAreForgottenAfterTheirRetention) {
  TurnEngine::Options options;
  options.ended_turn_retention = absl::Minutes(1);
  MakeEngine(options);
  const std::string turn = OpenRunning();
  Cancel(turn);
  clock_.AdvanceTime(absl::Minutes(2));
  engine_->CancelExpired();
  EXPECT_EQ(engine_->held_turns(), 0u);
  v1::GetTurnRequest get;
  get.set_turn_id(turn);
  EXPECT_THAT(engine_->GetTurn(get, scope_), StatusIs(absl::StatusCode::kNotFound));
  // The execution id is free again.
  EXPECT_TRUE(TryOpen(Request()).ok());
}

TEST_F(TurnEngineTest, CancelWhileACallRunsKeepsTheCallsRecordButNoLaterEvent) {
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

TEST_F(TurnEngineTest, FinishWaitsForACallStillRunning) {
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

TEST_F(TurnEngineTest, WatchTurnStreamsFromASequenceAndEndsAfterTheLastEvent) {
  const std::string turn = OpenRunning();
  std::vector<pb::ExecutionEvent> seen;
  absl::Status watched;
  v1::WatchTurnRequest request;
  request.set_turn_id(turn);
  request.set_from_sequence(1);
  std::thread watcher([&] {
    watched = engine_->WatchTurn(
        request, scope_,
        [&](const pb::ExecutionEvent& event) {
          seen.push_back(event);
          return true;
        },
        [] { return false; });
  });
  Call(turn, "files.read", R"({"path": "a"})");
  Finish(turn, R"pb(complete { output { bool_value: true } })pb");
  watcher.join();
  EXPECT_TRUE(watched.ok()) << watched;
  std::vector<std::string> types;
  for (const auto& event : seen) types.push_back(event.type());
  EXPECT_THAT(types, ElementsAre("tool.requested", "tool.completed", "turn.completed"));
  EXPECT_EQ(seen[0].sequence(), 1);

  // After the end: the tail only, then the stream ends.
  request.set_from_sequence(3);
  seen.clear();
  EXPECT_TRUE(engine_
                  ->WatchTurn(
                      request, scope_,
                      [&](const pb::ExecutionEvent& event) {
                        seen.push_back(event);
                        return true;
                      },
                      [] { return false; })
                  .ok());
  ASSERT_THAT(seen, SizeIs(1));
  EXPECT_EQ(seen[0].type(), "turn.completed");
  request.set_from_sequence(-1);
  EXPECT_THAT(engine_->WatchTurn(
                  request, scope_, [](const auto&) { return true; }, [] { return false; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("from_sequence")));
}

TEST_F(TurnEngineTest, WatchTurnStopsWhenTheReaderIsGone) {
  const std::string turn = OpenRunning();
  v1::WatchTurnRequest request;
  request.set_turn_id(turn);
  EXPECT_THAT(engine_->WatchTurn(
                  request, scope_, [](const auto&) { return true; }, [] { return true; }),
              StatusIs(absl::StatusCode::kCancelled));
  EXPECT_THAT(engine_->WatchTurn(
                  request, scope_, [](const auto&) { return false; }, [] { return false; }),
              StatusIs(absl::StatusCode::kCancelled));
}

// ---------------------------------------------------------------------------------------------
// Helpers

TEST(ScopeCoversTest, NamespaceAndOwner) {
  pb::AccessContext context;
  context.set_namespace_id("world-1");
  context.mutable_owner()->set_human_user_id("user-alice");
  common::server::HostScope scope;
  EXPECT_FALSE(ScopeCovers(scope, context));
  scope.namespaces = {"world-1"};
  EXPECT_FALSE(ScopeCovers(scope, context));
  scope.owners = {"human:user-alice"};
  EXPECT_TRUE(ScopeCovers(scope, context));
  scope.owners = {"agent:user-alice"};
  EXPECT_FALSE(ScopeCovers(scope, context));
  scope.owners = {"*"};
  EXPECT_TRUE(ScopeCovers(scope, context));
  scope.namespaces = {"world-2"};
  EXPECT_FALSE(ScopeCovers(scope, context));
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

// ---------------------------------------------------------------------------------------------
// Calls on ended turns

// An agent calling after its turn ended keeps the documented FAILED_PRECONDITION answer, and the
// attempt reaches audit: tool.invoked, source envelope, denied turn_draining, cause turn_ended,
// post-effect — and no event follows the turn's terminal one.
TEST_F(TurnEngineTest, CallOnAnEndedTurnIsRefusedAndRecorded) {
  const std::string turn = OpenRunning();
  const pb::ExecutionResult result =
      Finish(turn, R"pb(complete { output { string_value: "done" } })pb");
  ASSERT_EQ(result.status(), pb::EXECUTION_STATUS_SUCCEEDED);
  EXPECT_THAT(TryCall(turn, "files.read", R"({"path": "a"})", 3, "call-late"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("ended")));
  EXPECT_THAT(files_->invocations(), IsEmpty());
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 0);

  std::vector<pb::AuditEvent> invoked;
  for (const auto& recorded : audit_.recorded()) {
    if (recorded.event.type() != pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) continue;
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

TEST_F(TurnEngineTest, CallsOnTurnsEndedByTheDeadlineOrAtOpenTurnAreRecorded) {
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
