// The Envelope service through a real in-process gRPC server with host credentials, deciding
// through a real in-process authorizer (AuthorizerCore behind AuthorizerService over an
// in-memory grant store, reached through GrpcAuthorizerClient): who may call, scope checks, a
// driver turn over the wire with its event stream, a refused write escalated with its required
// authority, and the audit records each step writes (one log for both services).
#include "envelope_svc/server/envelope_service.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>

#include <memory>
#include <string>
#include <vector>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/grpc_authorizer_client.h"
#include "authorizer_svc/core/authorizer_core.h"
#include "authorizer_svc/server/authorizer_service.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "gmock/gmock.h"
#include "grantstore_svc/client/fake_grant_store_client.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/testing/demo_world.h"

namespace sharedos::envelope::server {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kHostToken[] = "host-token-world-1";
constexpr char kOtherHostToken[] = "host-token-world-2";
constexpr char kAdminToken[] = "admin-token";
constexpr char kServiceToken[] = "service-token";

// The demo grant (tests/testing/demo_world.h: run agent-assistant, read Workspace/**, create
// Scratch/**, request an escalation) in this test's namespace.
pb::CapabilityGrant Grant() {
  pb::CapabilityGrant grant = ::sharedos::testing::demo::Grant();
  grant.set_id("grant-assistant");
  grant.set_namespace_id("world-1");
  return grant;
}

class EnvelopeServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string credentials = absl::StrCat(
        R"({"credentials": [)", R"({"name": "ops", "role": "admin", "token_sha256": ")",
        common::server::TokenDigestHex(kAdminToken), R"("},)",
        R"({"name": "envelope", "role": "service", "token_sha256": ")",
        common::server::TokenDigestHex(kServiceToken), R"("},)",
        R"({"name": "host-a", "role": "host", "token_sha256": ")",
        common::server::TokenDigestHex(kHostToken),
        R"(", "scope": {"namespaces": ["world-1"], "owners": ["human:user-alice"]}},)",
        R"({"name": "host-b", "role": "host", "token_sha256": ")",
        common::server::TokenDigestHex(kOtherHostToken),
        R"(", "scope": {"namespaces": ["world-2"], "owners": ["*"]}}]})");
    auto authenticator = common::server::Authenticator::FromJson(credentials);
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);

    // authorizer_svc, as its own in-process server.
    grantstore_.IssueGrant(Grant());
    authorizer_core_ = std::make_unique<authorizer::core::AuthorizerCore>(
        grantstore_, audit_, clock_, "envelope-service-test-lease-secret-32",
        authorizer::core::AuthorizerCore::Options{});
    authorizer_service_ =
        std::make_unique<authorizer::server::AuthorizerService>(*authorizer_core_, *authenticator_);
    auto authorizer_runner = common::server::ServerRunner::Start({}, {authorizer_service_.get()});
    ASSERT_TRUE(authorizer_runner.ok()) << authorizer_runner.status();
    authorizer_runner_ = *std::move(authorizer_runner);
    authorizer_client_ = std::make_unique<::sharedos::authorizer::client::GrpcAuthorizerClient>(
        authorizer::v1::Authorizer::NewStub(authorizer_runner_->InProcessChannel()), kServiceToken);

    // envelope_svc.
    registry_ = core::testing::TestRegistry();
    files_ = std::make_unique<core::testing::FakeToolProvider>("files");
    tools::AttachedProviders providers;
    providers.files = files_.get();
    engine_ = std::make_unique<core::TurnEngine>(*authorizer_client_, *registry_, providers, audit_,
                                                 clock_, core::TurnEngine::Options());
    service_ = std::make_unique<EnvelopeService>(*engine_, *authenticator_);
    auto runner = common::server::ServerRunner::Start({}, {service_.get()});
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    stub_ = v1::Envelope::NewStub(runner_->InProcessChannel());
  }

  void TearDown() override {
    stub_.reset();
    runner_->Shutdown();
    authorizer_client_.reset();
    authorizer_runner_->Shutdown();
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  static v1::OpenTurnRequest OpenRequest() {
    v1::OpenTurnRequest request;
    *request.mutable_execution_request() =
        core::testing::TestExecutionRequest({"files.read", "files.create", "sharedos.escalate"});
    request.set_runtime(v1::RUNTIME_DRIVER);
    return request;
  }

  std::string OpenTurn() {
    v1::OpenTurnResponse response;
    grpc::Status status = stub_->OpenTurn(As(kHostToken).get(), OpenRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.has_result()) << response.result().DebugString();
    return response.turn_id();
  }

  static v1::InvokeToolRequest Call(const std::string& turn_id, const std::string& tool,
                                    const std::string& path) {
    v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
                                                                id: "call-1"
                                                                trace_id: "trace-1"
                                                                arguments {}
                                                                requested_at { seconds: 1786438801 }
                                                              )pb",
                                                              request.mutable_call()));
    request.mutable_call()->set_tool(tool);
    if (!path.empty()) {
      (*request.mutable_call()->mutable_arguments()->mutable_fields())["path"].set_string_value(
          path);
    }
    request.set_step(0);
    return request;
  }

  std::vector<pb::AuditEventType> AuditTypes() {
    std::vector<pb::AuditEventType> types;
    for (const pb::AuditEvent& event : audit_.events()) types.push_back(event.type());
    return types;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  grantstore::client::FakeGrantStoreClient grantstore_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<common::server::Authenticator> authenticator_;
  std::unique_ptr<authorizer::core::AuthorizerCore> authorizer_core_;
  std::unique_ptr<authorizer::server::AuthorizerService> authorizer_service_;
  std::unique_ptr<common::server::ServerRunner> authorizer_runner_;
  std::unique_ptr<::sharedos::authorizer::client::GrpcAuthorizerClient> authorizer_client_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<core::testing::FakeToolProvider> files_;
  std::unique_ptr<core::TurnEngine> engine_;
  std::unique_ptr<EnvelopeService> service_;
  std::unique_ptr<common::server::ServerRunner> runner_;
  std::unique_ptr<v1::Envelope::Stub> stub_;
};

TEST_F(EnvelopeServiceTest, OnlyHostCredentialsMayRunTurns) {
  v1::OpenTurnResponse response;
  for (const std::string token : {"", "not-a-token"}) {
    EXPECT_EQ(stub_->OpenTurn(As(token).get(), OpenRequest(), &response).error_code(),
              grpc::StatusCode::UNAUTHENTICATED)
        << token;
  }
  for (const std::string token : {kAdminToken, kServiceToken}) {
    EXPECT_EQ(stub_->OpenTurn(As(token).get(), OpenRequest(), &response).error_code(),
              grpc::StatusCode::PERMISSION_DENIED)
        << token;
  }
  v1::GetTurnResponse got;
  v1::GetTurnRequest get;
  get.set_turn_id("turn-x");
  EXPECT_EQ(stub_->GetTurn(As("").get(), get, &got).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(grantstore_.calls(grantstore::client::FakeGrantStoreClient::Method::kLoadAuthority), 0);
  EXPECT_THAT(audit_.events(), IsEmpty());
}

TEST_F(EnvelopeServiceTest, ContextOutsideTheHostsScopeIsPermissionDenied) {
  v1::OpenTurnResponse response;
  grpc::Status status = stub_->OpenTurn(As(kOtherHostToken).get(), OpenRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("scope"));

  // Nor may another host drive a turn it did not open: to it the turn does not exist
  // (ADR 0014, T2 — nothing of another host's turns leaks).
  const std::string turn_id = OpenTurn();
  v1::InvokeToolResponse invoked;
  EXPECT_EQ(stub_
                ->InvokeTool(As(kOtherHostToken).get(),
                             Call(turn_id, "files.read", "Workspace/notes.txt"), &invoked)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
  v1::CancelTurnRequest cancel;
  cancel.set_turn_id(turn_id);
  v1::CancelTurnResponse cancelled;
  EXPECT_EQ(stub_->CancelTurn(As(kOtherHostToken).get(), cancel, &cancelled).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(files_->invocations(), IsEmpty());
}

TEST_F(EnvelopeServiceTest, MalformedAndUnknownAreGrpcErrors) {
  v1::OpenTurnRequest request = OpenRequest();
  request.mutable_execution_request()->set_version("2");
  v1::OpenTurnResponse opened;
  grpc::Status status = stub_->OpenTurn(As(kHostToken).get(), request, &opened);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("execution_request.version"));

  v1::InvokeToolResponse invoked;
  EXPECT_EQ(
      stub_->InvokeTool(As(kHostToken).get(), Call("turn-unknown", "files.read", "a"), &invoked)
          .error_code(),
      grpc::StatusCode::NOT_FOUND);
  v1::FinishTurnRequest finish;
  finish.set_turn_id(OpenTurn());
  v1::FinishTurnResponse finished;
  EXPECT_EQ(stub_->FinishTurn(As(kHostToken).get(), finish, &finished).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(EnvelopeServiceTest, DriverTurnOverTheWire) {
  const std::string turn_id = OpenTurn();

  // A watcher from the first event, reading until the stream ends with the turn.
  grpc::ClientContext watch_context;
  watch_context.AddMetadata("authorization", absl::StrCat("Bearer ", kHostToken));
  v1::WatchTurnRequest watch;
  watch.set_turn_id(turn_id);
  std::unique_ptr<grpc::ClientReader<v1::WatchTurnResponse>> reader =
      stub_->WatchTurn(&watch_context, watch);

  v1::InvokeToolResponse invoked;
  grpc::Status status = stub_->InvokeTool(
      As(kHostToken).get(), Call(turn_id, "files.read", "Workspace/notes.txt"), &invoked);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(invoked.result().status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  ASSERT_THAT(files_->invocations(), SizeIs(1));
  EXPECT_THAT(files_->invocations()[0].resource().path(), ElementsAre("Workspace", "notes.txt"));

  // A refusal is a successful RPC.
  status = stub_->InvokeTool(As(kHostToken).get(), Call(turn_id, "files.delete", "a"), &invoked);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(invoked.result().status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(invoked.result().error().code(), "tool_unavailable");

  v1::FinishTurnRequest finish;
  finish.set_turn_id(turn_id);
  finish.mutable_complete()->mutable_output()->set_string_value("done");
  v1::FinishTurnResponse finished;
  status = stub_->FinishTurn(As(kHostToken).get(), finish, &finished);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(finished.result().status(), pb::EXECUTION_STATUS_SUCCEEDED);

  std::vector<std::string> streamed;
  v1::WatchTurnResponse event;
  while (reader->Read(&event)) streamed.push_back(event.event().type());
  status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(streamed, ElementsAre("turn.started", "tool.requested", "tool.completed",
                                    "tool.requested", "tool.completed", "turn.completed"));

  v1::GetTurnRequest get;
  get.set_turn_id(turn_id);
  v1::GetTurnResponse got;
  ASSERT_TRUE(stub_->GetTurn(As(kHostToken).get(), get, &got).ok());
  EXPECT_EQ(got.state(), v1::TURN_STATE_ENDED);
  EXPECT_EQ(got.result().events_size(), 6);

  // Ended: a call is FAILED_PRECONDITION, a cancel answers the result unchanged.
  EXPECT_EQ(stub_
                ->InvokeTool(As(kHostToken).get(),
                             Call(turn_id, "files.read", "Workspace/notes.txt"), &invoked)
                .error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  v1::CancelTurnRequest cancel;
  cancel.set_turn_id(turn_id);
  v1::CancelTurnResponse cancelled;
  ASSERT_TRUE(stub_->CancelTurn(As(kHostToken).get(), cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.result().status(), pb::EXECUTION_STATUS_SUCCEEDED);

  // The lease is closed at the authorizer.
  EXPECT_EQ(authorizer_core_->held_leases(), 0);
}

TEST_F(EnvelopeServiceTest, AdmissionDenialIsASuccessfulResponse) {
  grantstore_.RevokeGrant("world-1", "grant-assistant", absl::FromUnixSeconds(1786438000));
  v1::OpenTurnResponse response;
  grpc::Status status = stub_->OpenTurn(As(kHostToken).get(), OpenRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.result().status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(response.result().error().code(), "no_matching_grant");
  EXPECT_FALSE(response.has_catalog());
  EXPECT_THAT(AuditTypes(), ElementsAre(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED,
                                        pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,
                                        pb::AUDIT_EVENT_TYPE_TURN_ENDED));
  EXPECT_EQ(audit_.events()[2].outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(audit_.events()[2].reason(), "no_matching_grant");
}

TEST_F(EnvelopeServiceTest, RefusedWriteIsEscalatedWithItsRequiredAuthority) {
  const std::string turn_id = OpenTurn();
  v1::InvokeToolRequest write = Call(turn_id, "files.create", "Workspace/out.txt");
  write.mutable_call()->set_id("call-write");
  v1::InvokeToolResponse refused;
  grpc::Status status = stub_->InvokeTool(As(kHostToken).get(), write, &refused);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(refused.result().status(), pb::TOOL_RESULT_STATUS_DENIED);
  ASSERT_EQ(refused.result().error().code(), "no_matching_grant");
  std::string json;
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(
          refused.result().error().details().fields().at("requiredAuthority").struct_value(), &json)
          .ok());
  EXPECT_THAT(files_->invocations(), IsEmpty());

  v1::FinishTurnRequest finish;
  finish.set_turn_id(turn_id);
  finish.mutable_escalate()->set_reason("needs to write out.txt");
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  json, finish.mutable_escalate()->mutable_requested_authority())
                  .ok());
  v1::FinishTurnResponse finished;
  status = stub_->FinishTurn(As(kHostToken).get(), finish, &finished);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(finished.result().status(), pb::EXECUTION_STATUS_ESCALATED);
  // The hop round-trips to the same capreq id, minted again by the authorizer.
  EXPECT_EQ(finished.result().escalation().requested_authority().id(),
            finish.escalate().requested_authority().id());
  ASSERT_THAT(grantstore_.escalations(), SizeIs(1));
  EXPECT_EQ(grantstore_.escalations()[0].execution_id(), "exec-1");

  EXPECT_THAT(
      AuditTypes(),
      ElementsAre(pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED,     // the lease
                  pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,  // admission
                  pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED,
                  pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,  // the write, denied
                  pb::AUDIT_EVENT_TYPE_TOOL_INVOKED, pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED,
                  pb::AUDIT_EVENT_TYPE_TURN_ENDED));
  const std::vector<pb::AuditEvent> events = audit_.events();
  EXPECT_EQ(events[2].source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(events[2].authority_hash(), events[0].authority_hash());
  EXPECT_EQ(events[3].reason(), "no_matching_grant");
  EXPECT_EQ(events[3].operation_id(), "call-write");
  EXPECT_FALSE(events[3].consumed());
  EXPECT_EQ(events[4].source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(events[4].reason(), "no_matching_grant");
  EXPECT_EQ(events[4].authority_hash(), events[0].authority_hash());
  EXPECT_EQ(events[5].requested_authority().id(), finish.escalate().requested_authority().id());
  EXPECT_EQ(events[6].outcome(), pb::AUDIT_OUTCOME_ESCALATED);
  EXPECT_EQ(events[6].reason(), "escalation_requested");
}

// Semantics §5.2 (seed ADR 0023): a tool withheld at discovery is refused tool_unavailable with
// discovery's own code as its cause, and the decision is recorded immediately before.
TEST_F(EnvelopeServiceTest, ToolWithheldAtDiscoveryIsRefusedWithTheDiscoveryCode) {
  v1::OpenTurnRequest request = OpenRequest();
  request.mutable_execution_request()->add_tools("notes.get");
  request.mutable_execution_request()->mutable_context()->add_enabled_tool_namespaces("notes");
  v1::OpenTurnResponse opened;
  grpc::Status status = stub_->OpenTurn(As(kHostToken).get(), request, &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  for (const auto& tool : opened.catalog().tools()) EXPECT_NE(tool.name(), "notes.get");
  v1::InvokeToolRequest call = Call(opened.turn_id(), "notes.get", "");
  call.mutable_call()->set_id("call-withheld");
  v1::InvokeToolResponse invoked;
  status = stub_->InvokeTool(As(kHostToken).get(), call, &invoked);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(invoked.result().error().code(), "tool_unavailable");
  const std::vector<pb::AuditEvent> events = audit_.events();
  ASSERT_GE(events.size(), 2u);
  const pb::AuditEvent& refused = events.back();
  EXPECT_EQ(refused.type(), pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  EXPECT_EQ(refused.source(), pb::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(refused.reason(), "tool_unavailable");
  EXPECT_EQ(refused.cause(), "no_matching_grant");
  const pb::AuditEvent& decided = events[events.size() - 2];
  EXPECT_EQ(decided.type(), pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  EXPECT_EQ(decided.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(decided.reason(), "no_matching_grant");
  EXPECT_EQ(decided.operation_id(), "call-withheld");
  EXPECT_FALSE(decided.consumed());
  EXPECT_EQ(decided.authority_hash(), refused.authority_hash());
}

// Issue 16 §5: the denial's required authority is a typed CapabilityRequest on the response
// (and still protobuf JSON in error.details); escalating it — even with identity fields a host
// filled in wrongly, which are discarded and minted again (seed ADR 0019) — names the same id,
// and the host learns the stored escalation's id.
TEST_F(EnvelopeServiceTest, TypedRequiredAuthorityEscalatesToTheSameIdAndTheHostLearnsItsId) {
  const std::string turn_id = OpenTurn();
  v1::InvokeToolRequest write = Call(turn_id, "files.create", "Workspace/out.txt");
  write.mutable_call()->set_id("call-write");
  v1::InvokeToolResponse refused;
  grpc::Status status = stub_->InvokeTool(As(kHostToken).get(), write, &refused);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(refused.result().error().code(), "no_matching_grant");
  ASSERT_TRUE(refused.has_required_authority());
  const pb::CapabilityRequest& required = refused.required_authority();
  EXPECT_EQ(required.id().rfind("capreq-", 0), 0u) << required.id();
  std::string json;
  ASSERT_TRUE(
      google::protobuf::util::MessageToJsonString(
          refused.result().error().details().fields().at("requiredAuthority").struct_value(), &json)
          .ok());
  pb::CapabilityRequest from_details;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &from_details).ok());
  EXPECT_EQ(from_details.SerializeAsString(), required.SerializeAsString());

  v1::FinishTurnRequest finish;
  finish.set_turn_id(turn_id);
  finish.mutable_escalate()->set_reason("needs to write out.txt");
  pb::CapabilityRequest* ask = finish.mutable_escalate()->mutable_requested_authority();
  *ask = required;
  ask->set_id("capreq-chosen-by-the-host");
  ask->set_namespace_id("world-2");
  ask->mutable_requester()->set_agent_id("agent-someone-else");
  ask->mutable_owner()->set_human_user_id("user-bob");
  v1::FinishTurnResponse finished;
  status = stub_->FinishTurn(As(kHostToken).get(), finish, &finished);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(finished.result().status(), pb::EXECUTION_STATUS_ESCALATED);
  const pb::CapabilityRequest& requested = finished.result().escalation().requested_authority();
  EXPECT_EQ(requested.id(), required.id());
  EXPECT_EQ(requested.namespace_id(), "world-1");
  EXPECT_EQ(requested.owner().human_user_id(), "user-alice");
  EXPECT_EQ(requested.requester().agent_id(), "agent-assistant");

  ASSERT_THAT(grantstore_.escalations(), SizeIs(1));
  EXPECT_FALSE(finished.escalation_id().empty());
  EXPECT_EQ(finished.escalation_id(), grantstore_.escalations()[0].escalation_id());
  v1::GetTurnRequest get;
  get.set_turn_id(turn_id);
  v1::GetTurnResponse got;
  ASSERT_TRUE(stub_->GetTurn(As(kHostToken).get(), get, &got).ok());
  EXPECT_EQ(got.escalation_id(), finished.escalation_id());
}

}  // namespace
}  // namespace sharedos::envelope::server
