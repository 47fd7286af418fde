// OpenTurn: validation, the admission steps and every ending at admission, through the engine.

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
using AdmissionTest = testing::TurnEngineTest;

TEST_F(AdmissionTest, OpenTurnAnswersTheCatalogueReachAndLimits) {
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

TEST_F(AdmissionTest, LimitsComeFromOptionsWithToolCallsDefaultingToSteps) {
  pb::ExecutionRequest request = Request();
  request.mutable_options()->set_max_steps(5);
  request.mutable_options()->set_timeout_ms(600000);
  v1::OpenTurnResponse response = Open(request);
  EXPECT_EQ(response.limits().max_steps(), 5);
  EXPECT_EQ(response.limits().max_tool_calls(), 5);
  EXPECT_EQ(response.limits().timeout_ms(), 600000);
}

TEST_F(AdmissionTest, StrictValidationNamesTheField) {
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

TEST_F(AdmissionTest, ContextOutsideTheCallersScopeIsPermissionDenied) {
  scope_.namespaces = {"world-2"};
  EXPECT_THAT(TryOpen(Request()), StatusIs(absl::StatusCode::kPermissionDenied));
  scope_.namespaces = {"world-1"};
  scope_.owners = {"human:user-bob"};
  EXPECT_THAT(TryOpen(Request()), StatusIs(absl::StatusCode::kPermissionDenied));
  scope_.owners = {"*"};
  EXPECT_TRUE(TryOpen(Request()).ok());
  EXPECT_EQ(authorizer_.calls(Method::kOpen), 1);
}

TEST_F(AdmissionTest, ExecutionIdIsUsedOnce) {
  OpenRunning();
  EXPECT_THAT(TryOpen(Request()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("execution_id")));
}

struct ContextCase {
  std::string name;
  std::string code;
  std::function<void(pb::ExecutionRequest&)> mutate;
};

class ContextDenialTest : public AdmissionTest,
                          public ::testing::WithParamInterface<ContextCase> {};

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

TEST_F(AdmissionTest, UnreachableAuthorizerDeniesAuthorityUnavailableFailClosed) {
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

TEST_F(AdmissionTest, UnavailableLeaseDeniesAndIsClosed) {
  authorizer_.SetLeaseUnavailable("authority_unavailable");
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_EQ(response.result().error().code(), "authority_unavailable");
  EXPECT_EQ(authorizer_.calls(Method::kAdmit), 0);
  EXPECT_THAT(authorizer_.closed_leases(), SizeIs(1));
  EXPECT_TRUE(TurnEnded().fail_closed());
}

TEST_F(AdmissionTest, LeaseRefusedForAnAuditOutageFailsTheTurn) {
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

TEST_F(AdmissionTest, AdmissionDenialEndsTheTurnBeforeTheRuntimeStarts) {
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

TEST_F(AdmissionTest, AdmissionDeniedFailClosedByTheAuthorizerIsRecordedFailClosed) {
  // The authorizer's verdict travels to turn.ended: its fail_closed flag, not the code, decides.
  authorizer_.DenyAdmission("host_policy_unavailable", /*fail_closed=*/true);
  v1::OpenTurnResponse response = Open();
  ASSERT_TRUE(response.has_result());
  EXPECT_EQ(response.result().status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(response.result().error().code(), "host_policy_unavailable");
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(ended.reason(), "host_policy_unavailable");
  EXPECT_TRUE(ended.fail_closed());
}

TEST_F(AdmissionTest, AdmissionWithoutAnAuthorizerFailsClosed) {
  authorizer_.FailMethod(Method::kAdmit, absl::DeadlineExceededError("slow"));
  v1::OpenTurnResponse response = Open();
  EXPECT_EQ(response.result().error().code(), "authority_unavailable");
  EXPECT_TRUE(TurnEnded().fail_closed());
}

TEST_F(AdmissionTest, ProviderThatCannotListFailsToolCatalogUnavailable) {
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

TEST_F(AdmissionTest, CatalogueTheAuditLogCannotHoldIsNeverShown) {
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

TEST_F(AdmissionTest, DiscoveryOutageListsAnEmptyCatalogueFailClosed) {
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

TEST_F(AdmissionTest, FailClosedWithholdingIsMarkedOnTheListing) {
  authorizer_.Withhold("files.read", "host_policy_unavailable", /*fail_closed=*/true);
  Open();
  const std::vector<pb::AuditEvent> listed = Audited(pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED);
  ASSERT_THAT(listed, SizeIs(1));
  EXPECT_EQ(listed[0].outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_TRUE(listed[0].fail_closed());
}

}  // namespace
}  // namespace sharedos::envelope::core
