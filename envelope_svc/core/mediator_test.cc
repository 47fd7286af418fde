#include "envelope_svc/core/mediator.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <memory>
#include <string>
#include <vector>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "common/time/proto_time.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/tools/turn_tools.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;
using ::sharedos::authorizer::client::FakeAuthorizerClient;
using ::testing::ElementsAre;
using testing::FakeToolProvider;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
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

class MediatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = testing::TestRegistry();
    files_ = std::make_unique<FakeToolProvider>("files");
    host_ = std::make_unique<FakeToolProvider>(
        "host-1", std::vector<pb::ToolDefinition>{registry_->Find("host.echo")->definition()});
    tools::AttachedProviders providers;
    providers.files = files_.get();
    providers.hosts["host-1"] = host_.get();
    context_ = Parse<pb::AccessContext>(R"pb(
      namespace_id: "world-1"
      actor { agent_id: "agent-assistant" }
      authority { human_user_id: "user-alice" }
      owner { human_user_id: "user-alice" }
      purpose: "project work"
      trace_id: "trace-1"
      enabled_tool_namespaces: "files"
      enabled_tool_namespaces: "sharedos"
      now { seconds: 1786438800 }
    )pb");
    absl::StatusOr<tools::TurnTools> turn_tools =
        tools::TurnTools::Resolve(*registry_, providers, v1::ProviderContext(), absl::Now());
    ASSERT_TRUE(turn_tools.ok()) << turn_tools.status();
    turn_tools_.emplace(*std::move(turn_tools));
    az::OpenTurnAuthorityRequest open;
    *open.mutable_context() = context_;
    open.set_turn_id("turn-1");
    absl::StatusOr<az::OpenTurnAuthorityResponse> lease =
        authorizer_.OpenTurnAuthority(open, absl::Seconds(1));
    ASSERT_TRUE(lease.ok());
    scope_.context = &context_;
    scope_.lease_id = lease->lease_id();
    scope_.authority_hash = lease->authority_hash();
    scope_.catalog_hash = std::string(64, 'c');
    scope_.tools = &*turn_tools_;
  }

  MediationResult Invoke(const std::string& tool, const std::string& arguments_json,
                         const std::string& trace = "trace-1") {
    pb::ToolCall call;
    call.set_id("call-1");
    call.set_tool(tool);
    call.set_trace_id(trace);
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(arguments_json, call.mutable_arguments()).ok());
    *call.mutable_requested_at() = *common::ToProtoTimestamp(clock_.Now());
    // The turn's tool, as the turn's offered check resolved it.
    const tools::Tool* resolved = turn_tools_->Find(tool);
    EXPECT_NE(resolved, nullptr) << tool;
    if (resolved == nullptr) return MediationResult();
    return mediator_.Invoke(scope_, *resolved, call, clock_.Now());
  }

  // The single tool.invoked recorded (post-effect).
  pb::AuditEvent ToolInvoked() {
    std::vector<pb::AuditEvent> found;
    for (const auto& recorded : audit_.recorded()) {
      if (recorded.event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) {
        EXPECT_FALSE(recorded.pre_effect);
        found.push_back(recorded.event);
      }
    }
    EXPECT_THAT(found, SizeIs(1));
    return found.empty() ? pb::AuditEvent() : found[0];
  }

  std::vector<pb::AuditEventType> Types() {
    std::vector<pb::AuditEventType> types;
    for (const pb::AuditEvent& event : audit_.events()) types.push_back(event.type());
    return types;
  }

  void ExpectRefusal(const MediationResult& outcome, pb::ToolResultStatus status,
                     const std::string& code) {
    EXPECT_EQ(outcome.result.status(), status);
    EXPECT_EQ(outcome.result.error().code(), code);
    EXPECT_FALSE(outcome.result.error().retryable());
    EXPECT_TRUE(outcome.result.error().has_retryable());
    EXPECT_FALSE(outcome.result.error().message().empty());
    EXPECT_EQ(outcome.result.call_id(), "call-1");
    EXPECT_TRUE(outcome.result.has_completed_at());
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<FakeToolProvider> files_;
  std::unique_ptr<FakeToolProvider> host_;
  pb::AccessContext context_;
  std::optional<tools::TurnTools> turn_tools_;
  MediationScope scope_;
  Mediator mediator_{authorizer_, audit_, clock_, Mediator::Options()};
};

TEST_F(MediatorTest, AllowedCallRunsOnItsProviderAndIsRecordedByTheKernel) {
  MediationResult outcome = Invoke("files.read", R"({"path": "Workspace/notes.txt"})");
  EXPECT_EQ(outcome.result.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_TRUE(outcome.provider_entered);
  ASSERT_THAT(files_->invocations(), SizeIs(1));
  const v1::InvokeRequest invoked = files_->invocations()[0];
  EXPECT_EQ(invoked.action(), "read");
  EXPECT_THAT(invoked.resource().path(), ElementsAre("Workspace", "notes.txt"));
  EXPECT_EQ(invoked.resource().owner().human_user_id(), "user-alice");  // defaulted

  // One authorizer call: discovery of the declared ceiling (non-consuming, never recorded on
  // allow) and the consuming decision together.
  EXPECT_EQ(authorizer_.calls(Method::kDiscover), 0);
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 1);
  ASSERT_THAT(authorizer_.authorize_requests(), SizeIs(1));
  const az::AuthorizeRequest decided = authorizer_.authorize_requests()[0];
  EXPECT_TRUE(decided.has_declared_ceiling());
  EXPECT_EQ(decided.declared_ceiling().resource().namespace_(), "files");
  EXPECT_EQ(decided.declared_ceiling().action(), "read");
  EXPECT_TRUE(decided.consume());
  EXPECT_EQ(decided.operation_id(), "call-1");
  EXPECT_EQ(decided.tool(), "files.read");
  EXPECT_TRUE(decided.has_operation_instant());

  EXPECT_THAT(Types(), ElementsAre(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED));
  const pb::AuditEvent event = ToolInvoked();
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_EQ(event.source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(event.grant_id(), "grant-files");
  EXPECT_EQ(event.operation_id(), "call-1");
  EXPECT_EQ(event.tool(), "files.read");
  EXPECT_EQ(event.action(), "read");
  EXPECT_THAT(event.resource().path(), ElementsAre("Workspace", "notes.txt"));
  EXPECT_EQ(event.authority_hash(), "authority-hash-1");
  EXPECT_TRUE(event.reason().empty());
  EXPECT_FALSE(event.has_fail_closed());
  EXPECT_EQ(event.namespace_id(), "world-1");
  EXPECT_EQ(event.trace_id(), "trace-1");
  // Only identifiers: the catalogue's hash, never arguments or results.
  ASSERT_EQ(event.metadata().fields_size(), 1);
  EXPECT_EQ(event.metadata().fields().at("catalogHash").string_value(), scope_.catalog_hash);
  EXPECT_THAT(event.DebugString(), ::testing::Not(HasSubstr("\"ok\"")));
}

TEST_F(MediatorTest, HostProvidedToolRunsOnTheHostProvider) {
  MediationResult outcome = Invoke("host.echo", "{}");
  EXPECT_EQ(outcome.result.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_THAT(host_->invocations(), SizeIs(1));
  EXPECT_THAT(files_->invocations(), IsEmpty());
}

TEST_F(MediatorTest, TraceMismatchIsDeniedBeforeAnyDecision) {
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})", "trace-other");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "trace_mismatch");
  EXPECT_EQ(authorizer_.calls(Method::kDiscover), 0);
  EXPECT_EQ(ToolInvoked().reason(), "trace_mismatch");
}

// A call of a tool the turn does not offer (not registered, its namespace off) never reaches the
// mediator: the turn's one offered check refuses it in the envelope (turn_test, invocation_test).

TEST_F(MediatorTest, DiscoveryDenialIsRecordedAsADecisionThenAsTheCauseOfToolUnavailable) {
  authorizer_.Withhold("files.read", "no_matching_grant");
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "tool_unavailable");
  EXPECT_THAT(outcome.result.error().details().fields(), IsEmpty());  // never from discovery
  ASSERT_THAT(Types(), ElementsAre(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,
                                   pb::AUDIT_EVENT_TYPE_TOOL_INVOKED));
  const auto recorded = audit_.recorded();
  const pb::AuditEvent& checked = recorded[0].event;
  EXPECT_TRUE(recorded[0].pre_effect);
  EXPECT_EQ(checked.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(checked.reason(), "no_matching_grant");
  EXPECT_EQ(checked.resource().namespace_(), "files");  // the declared ceiling
  EXPECT_THAT(checked.resource().path(), IsEmpty());
  EXPECT_EQ(checked.action(), "read");
  EXPECT_TRUE(checked.has_consumed());
  EXPECT_FALSE(checked.consumed());
  EXPECT_EQ(checked.operation_id(), "call-1");
  EXPECT_EQ(checked.authority_hash(), "authority-hash-1");
  const pb::AuditEvent invoked = ToolInvoked();
  EXPECT_EQ(invoked.reason(), "tool_unavailable");
  EXPECT_EQ(invoked.cause(), "no_matching_grant");
  EXPECT_FALSE(invoked.has_fail_closed());
  EXPECT_THAT(authorizer_.authorize_requests(), IsEmpty());
}

TEST_F(MediatorTest, DiscoveryComesBeforeArgumentChecksThroughASeparateDiscover) {
  authorizer_.Withhold("files.read", "no_matching_grant");
  MediationResult outcome = Invoke("files.read", R"({"path": 7})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "tool_unavailable");
  EXPECT_EQ(authorizer_.calls(Method::kDiscover), 1);
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 0);
  EXPECT_EQ(ToolInvoked().cause(), "no_matching_grant");
  // Discoverable: the argument refusal stands, after the same separate check.
  authorizer_.Unwithhold("files.read");
  outcome = Invoke("files.read", R"({"path": 7})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_FAILED, "invalid_tool_arguments");
  EXPECT_EQ(authorizer_.calls(Method::kDiscover), 2);
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 0);
}

TEST_F(MediatorTest, AWithheldToolNamingAForeignOwnerIsUnavailableNotInvalidRequest) {
  authorizer_.Withhold("files.peek", "no_matching_grant");
  MediationResult outcome =
      Invoke("files.peek", R"({"path": "x", "owner": {"kind": "human", "userId": "user-bob"}})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "tool_unavailable");
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 1);  // one call, withheld before deciding
  EXPECT_THAT(authorizer_.authorize_requests(), IsEmpty());
  ASSERT_THAT(Types(), ElementsAre(pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,
                                   pb::AUDIT_EVENT_TYPE_TOOL_INVOKED));
  EXPECT_EQ(ToolInvoked().cause(), "no_matching_grant");
}

TEST_F(MediatorTest, FailClosedDiscoveryDenialIsMarkedOnBothRecords) {
  authorizer_.Withhold("files.read", "host_policy_unavailable", /*fail_closed=*/true);
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "tool_unavailable");
  for (const pb::AuditEvent& event : audit_.events()) EXPECT_TRUE(event.fail_closed());
  EXPECT_EQ(ToolInvoked().cause(), "host_policy_unavailable");
}

TEST_F(MediatorTest, UnreachableAuthorizerAtDiscoveryFailsClosed) {
  authorizer_.FailMethod(Method::kDiscover, absl::UnavailableError("down"));
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "tool_unavailable");
  const pb::AuditEvent invoked = ToolInvoked();
  EXPECT_EQ(invoked.cause(), "authority_unavailable");
  EXPECT_TRUE(invoked.fail_closed());
  EXPECT_THAT(files_->invocations(), IsEmpty());
}

TEST_F(MediatorTest, DiscoveryRecordThatAuditCannotTakeRefusesAuditUnavailable) {
  authorizer_.Withhold("files.read", "no_matching_grant");
  audit_.FailPreEffect(true);
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "audit_unavailable");
  EXPECT_TRUE(outcome.audit_unavailable);
  const pb::AuditEvent invoked = ToolInvoked();
  EXPECT_EQ(invoked.reason(), "audit_unavailable");
  EXPECT_TRUE(invoked.fail_closed());
}

TEST_F(MediatorTest, ForwardedEscalationIsNeverExecuted) {
  MediationResult outcome = Invoke("sharedos.escalate", R"({"reason": "need write"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_FAILED, "escalation_not_terminated");
  EXPECT_THAT(authorizer_.authorize_requests(), IsEmpty());
  const pb::AuditEvent event = ToolInvoked();
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(event.reason(), "escalation_not_terminated");
}

TEST_F(MediatorTest, ArgumentsOutsideTheInputSchemaFailInvalidToolArguments) {
  MediationResult outcome = Invoke("files.read", R"({"path": 7, "secret": "s3cr3t"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_FAILED, "invalid_tool_arguments");
  EXPECT_THAT(authorizer_.authorize_requests(), IsEmpty());
  const pb::AuditEvent event = ToolInvoked();
  EXPECT_EQ(event.reason(), "invalid_tool_arguments");
  EXPECT_THAT(event.DebugString(), ::testing::Not(HasSubstr("s3cr3t")));
  EXPECT_THAT(outcome.result.DebugString(), ::testing::Not(HasSubstr("s3cr3t")));
}

TEST_F(MediatorTest, UnresolvableRequirementFailsResolution) {
  MediationResult outcome = Invoke("files.read", R"({"path": "a/../b"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_FAILED, "tool_requirement_resolution_failed");
  EXPECT_EQ(ToolInvoked().reason(), "tool_requirement_resolution_failed");
  EXPECT_THAT(authorizer_.authorize_requests(), IsEmpty());
}

TEST_F(MediatorTest, ForeignOwnerIsDecidedByTheAuthorizerWithoutConsuming) {
  MediationResult outcome =
      Invoke("files.peek", R"({"path": "x", "owner": {"kind": "human", "userId": "user-bob"}})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "invalid_request");
  ASSERT_THAT(authorizer_.authorize_requests(), SizeIs(1));
  EXPECT_FALSE(authorizer_.authorize_requests()[0].consume());
  EXPECT_EQ(authorizer_.authorize_requests()[0].requirement().resource().owner().human_user_id(),
            "user-bob");
  const pb::AuditEvent event = ToolInvoked();
  EXPECT_EQ(event.reason(), "invalid_request");
  EXPECT_EQ(event.resource().owner().human_user_id(), "user-bob");
  EXPECT_THAT(files_->invocations(), IsEmpty());
}

TEST_F(MediatorTest, RequirementOutsideTheCeilingFailsInvalidToolRequirement) {
  MediationResult outcome = Invoke("files.fixed", "{}");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_FAILED, "invalid_tool_requirement");
  EXPECT_THAT(authorizer_.authorize_requests(), IsEmpty());
  EXPECT_EQ(ToolInvoked().reason(), "invalid_tool_requirement");
}

TEST_F(MediatorTest, NoMatchingGrantCarriesTheRequiredAuthority) {
  authorizer_.DenyAuthorize("files", "Workspace/out.txt", "create", "no_matching_grant");
  MediationResult outcome = Invoke("files.create", R"({"path": "Workspace/out.txt"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "no_matching_grant");
  const auto& details = outcome.result.error().details().fields();
  ASSERT_TRUE(details.contains("requiredAuthority"));
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(
                  details.at("requiredAuthority").struct_value(), &json)
                  .ok());
  pb::CapabilityRequest required;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &required).ok());
  EXPECT_THAT(required.id(), StartsWith("capreq-"));
  EXPECT_EQ(required.capabilities(0).actions(0), "create");
  EXPECT_THAT(required.capabilities(0).resource().path(), ElementsAre("Workspace", "out.txt"));
  EXPECT_THAT(files_->invocations(), IsEmpty());
  const pb::AuditEvent event = ToolInvoked();
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(event.reason(), "no_matching_grant");
  EXPECT_TRUE(event.cause().empty());
  EXPECT_FALSE(event.has_fail_closed());
}

TEST_F(MediatorTest, ExhaustedGrantIsNamedOnTheRecord) {
  authorizer_.DenyAuthorize("files", "a", "read", "grant_exhausted");
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "grant_exhausted");
  EXPECT_THAT(outcome.result.error().details().fields(), IsEmpty());
  EXPECT_EQ(ToolInvoked().grant_id(), "grant-files");
}

TEST_F(MediatorTest, InfrastructureDenialIsFailClosed) {
  authorizer_.DenyAuthorize("files", "a", "read", "usage_store_unavailable",
                            /*fail_closed=*/true);
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "usage_store_unavailable");
  EXPECT_TRUE(ToolInvoked().fail_closed());
  EXPECT_FALSE(outcome.audit_unavailable);
}

TEST_F(MediatorTest, UnreachableAuthorizerAtTheDecisionFailsClosed) {
  authorizer_.FailMethod(Method::kAuthorize, absl::DeadlineExceededError("slow"));
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "authority_unavailable");
  EXPECT_TRUE(ToolInvoked().fail_closed());
  EXPECT_THAT(files_->invocations(), IsEmpty());
}

// An Authorize that does not answer is followed by a Discover of the tool alone, which tells
// which step failed: discovery (tool_unavailable) or the decision (authority_unavailable) — for
// a foreign owner's resource too, whose decision never consumes.
TEST_F(MediatorTest, UnansweredAuthorizeAsksDiscoveryAloneWhichStepFailed) {
  authorizer_.FailMethod(Method::kAuthorize, absl::UnavailableError("down"));
  authorizer_.Withhold("files.read", "no_matching_grant");
  ExpectRefusal(Invoke("files.read", R"({"path": "a"})"), pb::TOOL_RESULT_STATUS_DENIED,
                "tool_unavailable");
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 1);
  EXPECT_EQ(authorizer_.calls(Method::kDiscover), 1);
  EXPECT_EQ(ToolInvoked().cause(), "no_matching_grant");

  audit_.Clear();
  MediationResult outcome =
      Invoke("files.peek", R"({"path": "x", "owner": {"kind": "human", "userId": "user-bob"}})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "authority_unavailable");
  EXPECT_EQ(authorizer_.calls(Method::kAuthorize), 2);
  EXPECT_EQ(authorizer_.calls(Method::kDiscover), 2);
  const pb::AuditEvent invoked = ToolInvoked();
  EXPECT_TRUE(invoked.fail_closed());
  EXPECT_EQ(invoked.resource().owner().human_user_id(), "user-bob");
  EXPECT_THAT(Types(), ElementsAre(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED));
}

TEST_F(MediatorTest, DecisionRefusedForAnAuditOutageIsReportedToTheTurn) {
  authorizer_.DenyAuthorize("files", "a", "read", "audit_unavailable", /*fail_closed=*/true);
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_DENIED, "audit_unavailable");
  EXPECT_TRUE(outcome.audit_unavailable);
  EXPECT_TRUE(ToolInvoked().fail_closed());
}

TEST_F(MediatorTest, ProviderErrorFailsToolExecutionFailedWithoutItsText) {
  files_->SetBehavior("files.read", FakeToolProvider::Behavior::kError);
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_FAILED, "tool_execution_failed");
  EXPECT_TRUE(outcome.provider_entered);
  EXPECT_THAT(outcome.result.DebugString(), ::testing::Not(HasSubstr("backend down")));
  const pb::AuditEvent event = ToolInvoked();
  EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(event.reason(), "tool_execution_failed");
  EXPECT_EQ(event.grant_id(), "grant-files");
  EXPECT_THAT(event.DebugString(), ::testing::Not(HasSubstr("backend down")));
}

TEST_F(MediatorTest, ResultForAnotherCallFailsInvalidToolResult) {
  files_->SetBehavior("files.read", FakeToolProvider::Behavior::kWrongCallId);
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  ExpectRefusal(outcome, pb::TOOL_RESULT_STATUS_FAILED, "invalid_tool_result");
  EXPECT_EQ(ToolInvoked().reason(), "invalid_tool_result");
}

TEST_F(MediatorTest, PostEffectAuditOutageNeverChangesTheResult) {
  audit_.FailPostEffect(true);
  MediationResult outcome = Invoke("files.read", R"({"path": "a"})");
  EXPECT_EQ(outcome.result.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_FALSE(outcome.audit_unavailable);
}

}  // namespace
}  // namespace sharedos::envelope::core
