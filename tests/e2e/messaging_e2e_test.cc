// Two agents talk through SharedOS (issue 19; semantics §3.9 messages.request, seed ADR 0025),
// on both deployments: agent A (agent-assistant) asks agent B (agent-bob) through the
// kernel-supplied messages.request tool inside its turn; B's host takes the message from the
// built-in transport (MessageRoutes.Receive), opens B's turn with it, and B answers through
// Envelope.SendMessage; A's call returns B's reply. Then the route lease A → B is revoked: the
// next request — still allowed by the kernel — is refused message_request_not_accepted, cause
// route_lease_revoked, and its message.sent record says so. No payload reaches audit.
#include <google/protobuf/util/json_util.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"
#include "tests/e2e/e2e_deployment.h"
#include "tests/testing/demo_world.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace demo = ::sharedos::testing::demo;
using ::testing::SizeIs;

constexpr char kTrace[] = "trace-messaging";

// A's grant: run A, send to B. B's grant: run B, send to A.
constexpr char kGrantA[] = R"pb(
  id: "grant-msg-a"
  namespace_id: "world-demo"
  subject { agent_id: "agent-assistant" }
  issuer { human_user_id: "user-alice" }
  capabilities {
    resource { namespace: "sharedos.execution" path: "agent" path: "agent-assistant" }
    actions: "invoke"
    scope: SCOPE_EXACT
  }
  capabilities {
    resource { namespace: "sharedos.messaging" path: "agent" path: "agent-bob" }
    actions: "send"
    scope: SCOPE_EXACT
  }
  constraints {}
  issued_at { seconds: 1700000000 }
)pb";
constexpr char kGrantB[] = R"pb(
  id: "grant-msg-b"
  namespace_id: "world-demo"
  subject { agent_id: "agent-bob" }
  issuer { human_user_id: "user-alice" }
  capabilities {
    resource { namespace: "sharedos.execution" path: "agent" path: "agent-bob" }
    actions: "invoke"
    scope: SCOPE_EXACT
  }
  capabilities {
    resource { namespace: "sharedos.messaging" path: "agent" path: "agent-assistant" }
    actions: "send"
    scope: SCOPE_EXACT
  }
  constraints {}
  issued_at { seconds: 1700000000 }
)pb";

class MessagingEndToEndTest : public e2e::DeploymentTest {
 protected:
  MessagingEndToEndTest() : DeploymentTest(demo::RegistryText(), /*sharedosd_registry=*/false) {}

  void Connect() {
    routes_ = envelope::v1::MessageRoutes::NewStub(
        grpc::CreateChannel(envelope_address_, grpc::InsecureChannelCredentials()));
  }

  // A's turn: the demo turn with the messages namespace and messages.request.
  std::string OpenA() {
    envelope::v1::OpenTurnRequest request = demo::TurnRequest("exec-msg-a", kTrace);
    request.mutable_execution_request()->mutable_context()->add_enabled_tool_namespaces("messages");
    request.mutable_execution_request()->add_tools("messages.request");
    return Open(request, "messages.request");
  }

  // B's turn, opened with the message A sent (its trace and purpose).
  std::string OpenB(const pb::MessageEnvelope& inbound) {
    envelope::v1::OpenTurnRequest request = demo::TurnRequest("exec-msg-b", inbound.trace_id());
    pb::ExecutionRequest* execution = request.mutable_execution_request();
    execution->mutable_agent()->set_agent_id("agent-bob");
    execution->mutable_context()->mutable_actor()->set_agent_id("agent-bob");
    execution->mutable_context()->set_purpose(inbound.purpose());
    *execution->mutable_message() = inbound;
    execution->clear_tools();
    return Open(request, "");
  }

  std::string Open(const envelope::v1::OpenTurnRequest& request, const std::string& offered) {
    envelope::v1::OpenTurnResponse response;
    grpc::Status status = envelope_stub_->OpenTurn(As(host_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.has_result()) << response.result().DebugString();
    if (!offered.empty()) {
      bool found = false;
      for (const auto& tool : response.catalog().tools()) found = found || tool.name() == offered;
      EXPECT_TRUE(found) << offered << " not offered: " << response.catalog().DebugString();
    }
    return response.turn_id();
  }

  pb::ToolResult Ask(const std::string& turn_id, const std::string& call_id) {
    envelope::v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool("messages.request");
    call->set_trace_id(kTrace);
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    R"({"recipient": {"kind": "agent", "agentId": "agent-bob"},
                        "payload": {"question": "the-secret-question"}})",
                    call->mutable_arguments())
                    .ok());
    call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    envelope::v1::InvokeToolResponse response;
    grpc::Status status = envelope_stub_->InvokeTool(As(host_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.result();
  }

  // B's host: the message waiting for B, B's turn, B's answer, B's turn finished.
  void AnswerAsB() {
    envelope::v1::ReceiveRequest receive;
    receive.set_namespace_id("world-demo");
    receive.mutable_receiver()->set_agent_id("agent-bob");
    receive.set_max(1);
    receive.mutable_wait()->set_seconds(20);
    envelope::v1::ReceiveResponse inbox;
    grpc::Status status = routes_->Receive(As(host_token_).get(), receive, &inbox);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_THAT(inbox.messages(), SizeIs(1));
    const pb::MessageEnvelope& inbound = inbox.messages(0);
    // Built from A's trusted context, never from its arguments.
    EXPECT_EQ(inbound.sender().agent_id(), "agent-assistant");
    EXPECT_EQ(inbound.trace_id(), kTrace);
    EXPECT_EQ(inbound.purpose(), "keep notes");
    const std::string b_turn = OpenB(inbound);
    ASSERT_FALSE(b_turn.empty());

    envelope::v1::SendMessageRequest send;
    send.set_turn_id(b_turn);
    pb::MessageEnvelope* reply = send.mutable_message();
    reply->set_version("1");
    reply->set_id("reply-from-bob");
    reply->mutable_sender()->set_agent_id("agent-bob");
    reply->mutable_receiver()->set_agent_id("agent-assistant");
    reply->set_purpose(inbound.purpose());
    reply->set_trace_id(inbound.trace_id());
    reply->set_reply_to(inbound.id());
    reply->mutable_created_at()->set_seconds(demo::kNowSeconds + 2);
    (*reply->mutable_payload()->mutable_struct_value()->mutable_fields())["answer"]
        .set_string_value("forty-two");
    envelope::v1::SendMessageResponse sent;
    status = envelope_stub_->SendMessage(As(host_token_).get(), send, &sent);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(sent.receipt().status(), envelope::v1::MESSAGE_DELIVERY_STATUS_DELIVERED)
        << sent.receipt().DebugString();
    Finish(b_turn);
  }

  void Finish(const std::string& turn_id) {
    envelope::v1::FinishTurnRequest finish;
    finish.set_turn_id(turn_id);
    finish.mutable_complete()->mutable_output()->set_string_value("done");
    envelope::v1::FinishTurnResponse finished;
    grpc::Status status = envelope_stub_->FinishTurn(As(host_token_).get(), finish, &finished);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(finished.result().status(), pb::EXECUTION_STATUS_SUCCEEDED);
  }

  std::unique_ptr<envelope::v1::MessageRoutes::Stub> routes_;
};

TEST_P(MessagingEndToEndTest, AAsksBThroughItsTurnThenARevokedLeaseRefusesTheNextRequest) {
  Connect();
  IssueGrant(kGrantA);
  IssueGrant(kGrantB);
  ASSERT_FALSE(HasFatalFailure());
  const std::string a_turn = OpenA();
  ASSERT_FALSE(a_turn.empty());

  std::thread b_host([&] { AnswerAsB(); });
  pb::ToolResult answered = Ask(a_turn, "call-ask-1");
  b_host.join();
  ASSERT_EQ(answered.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << answered.DebugString();
  EXPECT_EQ(answered.output().struct_value().fields().at("answer").string_value(), "forty-two");

  // The host's transport revokes the route lease A → B.
  envelope::v1::RevokeRouteRequest revoke;
  revoke.set_namespace_id("world-demo");
  revoke.mutable_sender()->set_agent_id("agent-assistant");
  revoke.mutable_receiver()->set_agent_id("agent-bob");
  envelope::v1::RevokeRouteResponse revoked;
  grpc::Status status = routes_->RevokeRoute(As(host_token_).get(), revoke, &revoked);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(revoked.was_leased());

  pb::ToolResult refused = Ask(a_turn, "call-ask-2");
  ASSERT_EQ(refused.status(), pb::TOOL_RESULT_STATUS_FAILED) << refused.DebugString();
  EXPECT_EQ(refused.error().code(), "message_request_not_accepted");
  Finish(a_turn);

  const auto found = [](const std::vector<pb::AuditEvent>& events, pb::AuditEventType type,
                        const std::string& operation_id) -> const pb::AuditEvent* {
    for (const pb::AuditEvent& event : events) {
      if (event.type() == type && event.operation_id() == operation_id) return &event;
    }
    return nullptr;
  };
  std::vector<pb::AuditEvent> events = AuditUntil([&](const std::vector<pb::AuditEvent>& so_far) {
    return found(so_far, pb::AUDIT_EVENT_TYPE_MESSAGE_SENT, "call-ask-2") != nullptr &&
           found(so_far, pb::AUDIT_EVENT_TYPE_TOOL_INVOKED, "call-ask-2") != nullptr;
  });
  const pb::AuditEvent* sent = found(events, pb::AUDIT_EVENT_TYPE_MESSAGE_SENT, "call-ask-2");
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(sent->reason(), "route_lease_revoked");
  EXPECT_EQ(sent->receiver().agent_id(), "agent-bob");
  EXPECT_EQ(sent->grant_id(), "grant-msg-a");
  EXPECT_EQ(sent->source(), pb::AUDIT_SOURCE_KERNEL);
  const pb::AuditEvent* invoked = found(events, pb::AUDIT_EVENT_TYPE_TOOL_INVOKED, "call-ask-2");
  ASSERT_NE(invoked, nullptr);
  EXPECT_EQ(invoked->outcome(), pb::AUDIT_OUTCOME_FAILED);
  EXPECT_EQ(invoked->reason(), "message_request_not_accepted");
  EXPECT_EQ(invoked->cause(), "route_lease_revoked");
  // The first request and B's reply were sent and recorded; no payload is in the log.
  const pb::AuditEvent* first = found(events, pb::AUDIT_EVENT_TYPE_MESSAGE_SENT, "call-ask-1");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  bool reply_recorded = false;
  for (const pb::AuditEvent& event : events) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_MESSAGE_SENT && event.message_id() == "reply-from-bob")
      reply_recorded = true;
    EXPECT_EQ(event.DebugString().find("the-secret-question"), std::string::npos);
    EXPECT_EQ(event.DebugString().find("forty-two"), std::string::npos);
  }
  EXPECT_TRUE(reply_recorded);
}

// A host's own MessageTransport (envelope_svc --message_transport): its lease refusal is what the
// agent's request gets, verbatim, as cause.
class HostTransport final : public envelope::v1::MessageTransport::Service {
 public:
  grpc::Status Send(grpc::ServerContext*, const envelope::v1::TransportSendRequest* request,
                    envelope::v1::TransportSendResponse* response) override {
    envelope::v1::MessageDeliveryResult* receipt = response->mutable_receipt();
    receipt->set_message_id(request->message().id());
    receipt->set_status(envelope::v1::MESSAGE_DELIVERY_STATUS_DENIED);
    receipt->mutable_error()->set_code("route_lease_closed_by_host");
    receipt->mutable_error()->set_message("the host closed this route");
    return grpc::Status::OK;
  }
};

class HostTransportEndToEndTest : public MessagingEndToEndTest {
 protected:
  void SetUp() override {
    if (sharedosd()) GTEST_SKIP() << "sharedosd serves the built-in transport";
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&transport_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    envelope_args_ = {"--builtin_messaging=false",
                      absl::StrCat("--message_transport=127.0.0.1:", port)};
    MessagingEndToEndTest::SetUp();
  }
  void TearDown() override {
    MessagingEndToEndTest::TearDown();
    if (server_ != nullptr) server_->Shutdown();
  }

  HostTransport transport_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_P(HostTransportEndToEndTest, TheHostsLeaseRefusalIsReturnedVerbatim) {
  IssueGrant(kGrantA);
  ASSERT_FALSE(HasFatalFailure());
  const std::string a_turn = OpenA();
  ASSERT_FALSE(a_turn.empty());
  pb::ToolResult refused = Ask(a_turn, "call-ask-host");
  ASSERT_EQ(refused.status(), pb::TOOL_RESULT_STATUS_FAILED) << refused.DebugString();
  EXPECT_EQ(refused.error().code(), "message_request_not_accepted");
  Finish(a_turn);
  std::vector<pb::AuditEvent> events = AuditUntil([](const std::vector<pb::AuditEvent>& so_far) {
    for (const pb::AuditEvent& event : so_far) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED &&
          event.operation_id() == "call-ask-host") {
        return true;
      }
    }
    return false;
  });
  bool found = false;
  for (const pb::AuditEvent& event : events) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED &&
        event.operation_id() == "call-ask-host") {
      found = true;
      EXPECT_EQ(event.cause(), "route_lease_closed_by_host");
    }
    if (event.type() == pb::AUDIT_EVENT_TYPE_MESSAGE_SENT) {
      EXPECT_EQ(event.reason(), "route_lease_closed_by_host");
    }
  }
  EXPECT_TRUE(found);
}

INSTANTIATE_TEST_SUITE_P(Deployments, MessagingEndToEndTest, ::testing::Bool(),
                         e2e::DeploymentName);
INSTANTIATE_TEST_SUITE_P(Deployments, HostTransportEndToEndTest, ::testing::Bool(),
                         e2e::DeploymentName);

}  // namespace
}  // namespace sharedos
