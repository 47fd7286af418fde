// Envelope replicas by forwarding (issue 18, ADR 0011): one grantstore_svc, one audit_svc, one
// authorizer_svc and TWO envelope_svc replicas (r1, r2), each the other's peer over gRPC and MCP.
// A turn's calls alternate between the replicas, gRPC and MCP alike, and are served by the
// turn's owner; a bounded grant (max uses) is never exceeded across replicas; an escalation
// latched through the non-owner still ends the turn ESCALATED; a forwarded call is never
// forwarded again (NOT_FOUND); the owner killed with SIGKILL leaves calls through the other
// replica UNAVAILABLE, fail closed (authority_unavailable), and its restart ends its turns
// (turn.ended interrupted in audit, once); SIGTERM drains a replica (NOT_SERVING, no new turn,
// its open turn still served through its peer until it ends, then a clean exit). A world's
// messages live at one replica (ADR 0013), reached through either; its loss fails closed.
#include <httplib.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/client/health_check.h"
#include "envelope_svc/messaging/replicated_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/crash/campaign.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos::crash {
namespace {

namespace demo = ::sharedos::testing::demo;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;
using ::sharedos::testing::FourProcessDeployment;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;
using Service = FourProcessDeployment::Service;

// The reads the bounded grant allows, across both replicas.
constexpr int kReads = 3;
// The agent the demo agent messages.
constexpr char kPeerAgent[] = "agent-peer";

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = MakeDir(
        absl::StrCat("replicas-", ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    auto options = DemoFourProcessOptions(dir);
    ASSERT_TRUE(options.ok()) << options.status();
    options->mcp = true;
    options->replicas = true;
    options->envelope_args = {"--replica_drain_timeout=20s"};
    auto started = FourProcessDeployment::Start(*std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    four_ = *std::move(started);
    IssueGrants();
  }

  // Everything of the demo grant but reads, unbounded; the reads in a grant of their own,
  // bounded to kReads uses.
  void IssueGrants() {
    auto grants = grantstore::v1::GrantStore::NewStub(Connect(four_->grantstore_address()));
    pb::CapabilityGrant open = demo::Grant();
    open.set_id("grant-replicas-open");
    demo::RemoveCapability(open, "files", {"Workspace"});
    // The demo agent may message kPeerAgent (ADR 0013's test below).
    pb::Capability* message = open.add_capabilities();
    message->mutable_resource()->set_namespace_("sharedos.messaging");
    message->mutable_resource()->add_path("agent");
    message->mutable_resource()->add_path(kPeerAgent);
    message->add_actions("send");
    message->set_scope(pb::SCOPE_EXACT);
    pb::CapabilityGrant reads = demo::Grant();
    reads.set_id("grant-replicas-reads");
    pb::Capability* read = demo::FindCapability(reads, "files", {"Workspace"});
    ASSERT_NE(read, nullptr);
    const pb::Capability only = *read;
    reads.clear_capabilities();
    *reads.add_capabilities() = only;
    reads.mutable_constraints()->set_max_uses(kReads);
    for (const pb::CapabilityGrant& grant : {open, reads}) {
      grantstore::v1::IssueGrantRequest request;
      *request.mutable_grant() = grant;
      grantstore::v1::IssueGrantResponse response;
      grpc::Status status =
          grants->IssueGrant(As(four_->admin_token(), absl::Seconds(10)).get(), request, &response);
      ASSERT_TRUE(status.ok()) << status.error_message();
    }
  }

  std::unique_ptr<ev1::Envelope::Stub> Envelope(Service replica) {
    return ev1::Envelope::NewStub(Connect(four_->address(replica)));
  }

  ev1::OpenTurnResponse Open(Service replica, const std::string& execution,
                             ev1::Runtime runtime = ev1::RUNTIME_DRIVER) {
    ev1::OpenTurnResponse opened;
    grpc::Status status = Envelope(replica)->OpenTurn(
        As(four_->host_token(), absl::Seconds(20)).get(),
        demo::TurnRequest(execution, "trace-" + execution, runtime), &opened);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(opened.has_result()) << opened.result().DebugString();
    return opened;
  }

  // files.read of Workspace/notes.txt on `turn_id` through `replica` over gRPC.
  grpc::Status Read(Service replica, const std::string& turn_id, const std::string& execution,
                    const std::string& call_id, ev1::InvokeToolResponse* response) {
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool("files.read");
    call->set_trace_id("trace-" + execution);
    (*call->mutable_arguments()->mutable_fields())["path"].set_string_value("Workspace/notes.txt");
    call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    return Envelope(replica)->InvokeTool(As(four_->host_token(), absl::Seconds(10)).get(), request,
                                         response);
  }

  grpc::Status Get(Service replica, const std::string& turn_id, ev1::GetTurnResponse* response) {
    ev1::GetTurnRequest request;
    request.set_turn_id(turn_id);
    return Envelope(replica)->GetTurn(As(four_->host_token(), absl::Seconds(10)).get(), request,
                                      response);
  }

  grpc::Status Complete(Service replica, const std::string& turn_id,
                        ev1::FinishTurnResponse* response) {
    ev1::FinishTurnRequest request;
    request.set_turn_id(turn_id);
    request.mutable_complete()->mutable_output()->set_string_value("done");
    return Envelope(replica)->FinishTurn(As(four_->host_token(), absl::Seconds(15)).get(), request,
                                         response);
  }

  struct HttpAnswer {
    int status = 0;
    Json body;
  };

  // One JSON-RPC request to the MCP front door of `replica` with the turn's execution token.
  HttpAnswer Mcp(Service replica, const std::string& token, const Json& message) {
    return McpBody(replica, token, message.dump());
  }

  HttpAnswer McpBody(Service replica, const std::string& token, const std::string& body) {
    const std::string& url = four_->mcp_url(replica);
    const size_t path = url.find('/', url.find("://") + 3);
    httplib::Client client(url.substr(0, path));
    client.set_read_timeout(20, 0);
    httplib::Headers headers = {{"Authorization", "Bearer " + token},
                                {"Accept", "application/json, text/event-stream"},
                                {"MCP-Protocol-Version", "2025-06-18"}};
    auto answered = client.Post(url.substr(path), headers, body, "application/json");
    HttpAnswer answer;
    if (!answered) {
      ADD_FAILURE() << "no answer from " << url << ": " << httplib::to_string(answered.error());
      return answer;
    }
    answer.status = answered->status;
    answer.body = Json::parse(answered->body, nullptr, false);
    return answer;
  }

  HttpAnswer CallTool(Service replica, const std::string& token, int id, const std::string& tool,
                      const Json& arguments) {
    return Mcp(replica, token,
               Json{{"jsonrpc", "2.0"},
                    {"id", id},
                    {"method", "tools/call"},
                    {"params", {{"name", tool}, {"arguments", arguments}}}});
  }

  std::unique_ptr<ev1::MessageRoutes::Stub> Routes(Service replica) {
    return ev1::MessageRoutes::NewStub(Connect(four_->address(replica)));
  }

  static pb::Address Agent(const std::string& id) {
    pb::Address address;
    address.set_agent_id(id);
    return address;
  }

  // Envelope.SendMessage on the demo turn `execution` (opened with demo::TurnRequest) from its
  // actor to kPeerAgent, through `replica`.
  grpc::Status SendToPeer(Service replica, const std::string& turn_id, const std::string& execution,
                          const std::string& id, ev1::SendMessageResponse* response) {
    const pb::AccessContext context =
        demo::TurnRequest(execution, "trace-" + execution).execution_request().context();
    ev1::SendMessageRequest request;
    request.set_turn_id(turn_id);
    pb::MessageEnvelope* message = request.mutable_message();
    message->set_version("1");
    message->set_id(id);
    *message->mutable_sender() = context.actor();
    *message->mutable_receiver() = Agent(kPeerAgent);
    message->set_purpose(context.purpose());
    message->set_trace_id(context.trace_id());
    message->mutable_payload()->set_string_value("the payload");
    message->mutable_created_at()->set_seconds(demo::kNowSeconds + 1);
    return Envelope(replica)->SendMessage(As(four_->host_token(), absl::Seconds(10)).get(), request,
                                          response);
  }

  grpc::Status ReceivePeer(Service replica, ev1::ReceiveResponse* response) {
    ev1::ReceiveRequest request;
    request.set_namespace_id(demo::kNamespace);
    *request.mutable_receiver() = Agent(kPeerAgent);
    request.set_max(10);
    return Routes(replica)->Receive(As(four_->host_token(), absl::Seconds(10)).get(), request,
                                    response);
  }

  grpc::Status RevokePeerRoute(Service replica, const pb::Address& sender,
                               ev1::RevokeRouteResponse* response) {
    ev1::RevokeRouteRequest request;
    request.set_namespace_id(demo::kNamespace);
    *request.mutable_sender() = sender;
    *request.mutable_receiver() = Agent(kPeerAgent);
    return Routes(replica)->RevokeRoute(As(four_->host_token(), absl::Seconds(10)).get(), request,
                                        response);
  }

  std::unique_ptr<FourProcessDeployment> four_;
};

TEST_F(ReplicasTest, TurnsAreServedThroughEitherReplicaWithinOneBudgetAndOneLatch) {
  ASSERT_FALSE(HasFatalFailure());
  int reads_allowed = 0;
  auto count = [&](bool allowed) { reads_allowed += allowed ? 1 : 0; };

  // A driver turn opened at r1: its id names its owner; its calls alternate r2, r1.
  const ev1::OpenTurnResponse driver = Open(Service::kEnvelope, "exec-replicas-driver");
  ASSERT_THAT(driver.turn_id(), StartsWith("turn-r1."));
  for (int i = 0; i < 2; ++i) {
    const Service via = i % 2 == 0 ? Service::kEnvelopeReplica : Service::kEnvelope;
    ev1::InvokeToolResponse response;
    grpc::Status status =
        Read(via, driver.turn_id(), "exec-replicas-driver", absl::StrCat("call-d", i), &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.result().status(), pb::TOOL_RESULT_STATUS_SUCCEEDED)
        << response.result().DebugString();
    count(response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED);
  }
  ev1::GetTurnResponse got;
  ASSERT_TRUE(Get(Service::kEnvelopeReplica, driver.turn_id(), &got).ok());
  EXPECT_EQ(got.state(), ev1::TURN_STATE_RUNNING);

  // The hop's cost: GetTurn at the owner and through its peer (median of kTimed, printed).
  {
    constexpr int kTimed = 50;
    auto median = [&](Service via) {
      auto stub = Envelope(via);
      std::vector<absl::Duration> took;
      for (int i = 0; i < kTimed; ++i) {
        ev1::GetTurnRequest request;
        request.set_turn_id(driver.turn_id());
        ev1::GetTurnResponse response;
        const absl::Time start = absl::Now();
        EXPECT_TRUE(
            stub->GetTurn(As(four_->host_token(), absl::Seconds(10)).get(), request, &response)
                .ok());
        took.push_back(absl::Now() - start);
      }
      std::sort(took.begin(), took.end());
      return took[kTimed / 2];
    };
    const absl::Duration owner = median(Service::kEnvelope);
    const absl::Duration forwarded = median(Service::kEnvelopeReplica);
    std::printf("GetTurn median of %d: at the owner %.0f us, forwarded by its peer %.0f us\n",
                kTimed, absl::ToDoubleMicroseconds(owner), absl::ToDoubleMicroseconds(forwarded));
  }

  // A call marked forwarded is never forwarded again: r2 does not hold r1's turn.
  {
    auto context = As(four_->host_token(), absl::Seconds(10));
    context->AddMetadata("x-sharedos-forwarded", "r1");
    ev1::GetTurnRequest request;
    request.set_turn_id(driver.turn_id());
    ev1::GetTurnResponse response;
    grpc::Status status =
        Envelope(Service::kEnvelopeReplica)->GetTurn(context.get(), request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << status.error_message();
  }

  // An MCP turn opened at r2, called through r1's front door and its own.
  const ev1::OpenTurnResponse mcp =
      Open(Service::kEnvelopeReplica, "exec-replicas-mcp", ev1::RUNTIME_MCP);
  ASSERT_THAT(mcp.turn_id(), StartsWith("turn-r2."));
  const std::string& token = mcp.mcp().token();
  HttpAnswer listed =
      Mcp(Service::kEnvelope, token, Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}});
  EXPECT_EQ(listed.status, 200) << listed.body.dump();
  EXPECT_THAT(listed.body.dump(), HasSubstr("files.read"));
  const Json path = {{"path", "Workspace/notes.txt"}};
  for (int i = 0; i < 3; ++i) {
    const Service via = i % 2 == 0 ? Service::kEnvelope : Service::kEnvelopeReplica;
    HttpAnswer called = CallTool(via, token, 10 + i, "files.read", path);
    ASSERT_EQ(called.status, 200) << called.body.dump();
    count(!called.body["result"].value("isError", true));
  }
  // And the driver turn again, through both: the budget is spent wherever the call lands.
  for (int i = 0; i < 2; ++i) {
    const Service via = i % 2 == 0 ? Service::kEnvelope : Service::kEnvelopeReplica;
    ev1::InvokeToolResponse response;
    ASSERT_TRUE(
        Read(via, driver.turn_id(), "exec-replicas-driver", absl::StrCat("call-e", i), &response)
            .ok());
    count(response.result().status() == pb::TOOL_RESULT_STATUS_SUCCEEDED);
    if (response.result().status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      EXPECT_EQ(response.result().status(), pb::TOOL_RESULT_STATUS_DENIED);
    }
  }
  EXPECT_EQ(reads_allowed, kReads) << "the bounded grant, across both replicas";

  // The escalation latched through the non-owner's front door; the turn finished through the
  // non-owner over gRPC still ends ESCALATED.
  HttpAnswer asked =
      CallTool(Service::kEnvelope, token, 20, "sharedos.escalate", {{"reason", "Need a person."}});
  ASSERT_EQ(asked.status, 200) << asked.body.dump();
  ev1::FinishTurnResponse finished;
  grpc::Status status = Complete(Service::kEnvelope, mcp.turn_id(), &finished);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(finished.result().status(), pb::EXECUTION_STATUS_ESCALATED)
      << finished.result().DebugString();
  EXPECT_FALSE(finished.escalation_id().empty());
  ASSERT_TRUE(Get(Service::kEnvelope, mcp.turn_id(), &got).ok());
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_ESCALATED);

  ASSERT_TRUE(Complete(Service::kEnvelopeReplica, driver.turn_id(), &finished).ok());
  EXPECT_EQ(finished.result().status(), pb::EXECUTION_STATUS_SUCCEEDED);
}

TEST_F(ReplicasTest, AKilledOwnerIsUnavailableFailClosedAndEndsItsTurnsWhenItReturns) {
  ASSERT_FALSE(HasFatalFailure());
  const ev1::OpenTurnResponse driver = Open(Service::kEnvelope, "exec-replicas-lost");
  const ev1::OpenTurnResponse mcp =
      Open(Service::kEnvelope, "exec-replicas-lost-mcp", ev1::RUNTIME_MCP);
  ASSERT_THAT(driver.turn_id(), StartsWith("turn-r1."));
  ASSERT_TRUE(four_->Kill(Service::kEnvelope).ok());

  ev1::InvokeToolResponse response;
  grpc::Status status =
      Read(Service::kEnvelopeReplica, driver.turn_id(), "exec-replicas-lost", "call-1", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("authority_unavailable"));
  EXPECT_FALSE(response.has_result());
  ev1::GetTurnResponse got;
  EXPECT_EQ(Get(Service::kEnvelopeReplica, driver.turn_id(), &got).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  HttpAnswer called = CallTool(Service::kEnvelopeReplica, mcp.mcp().token(), 1, "files.read",
                               {{"path", "Workspace/notes.txt"}});
  EXPECT_EQ(called.status, 503) << called.body.dump();
  EXPECT_EQ(called.body["error"]["data"].value("code", ""), "authority_unavailable");
  EXPECT_TRUE(called.body["error"]["data"].value("failClosed", false));
  EXPECT_FALSE(called.body.contains("result"));
  // A body nested 100,000 levels deep (well under the body limit) reaches the unreachable-owner
  // answer before the front door's own parse: it is answered 503 too, and the replica lives on.
  const std::string deep = absl::StrCat(
      R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"files.read","arguments":)",
      std::string(100000, '['), std::string(100000, ']'), "}}");
  HttpAnswer deep_called = McpBody(Service::kEnvelopeReplica, mcp.mcp().token(), deep);
  EXPECT_EQ(deep_called.status, 503);
  EXPECT_EQ(deep_called.body["error"]["data"].value("code", ""), "authority_unavailable");

  // The owner back (same ports): it ended its turns before serving; the peer now forwards again.
  absl::Status restarted = four_->Restart(Service::kEnvelope);
  ASSERT_TRUE(restarted.ok()) << restarted;
  status = Get(Service::kEnvelopeReplica, driver.turn_id(), &got);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(got.result().error().code(), "operation_aborted");
  EXPECT_EQ(InterruptedTurnEndedCount(four_->audit_address(), four_->admin_token(),
                                      "exec-replicas-lost", 1),
            1);
  EXPECT_EQ(InterruptedTurnEndedCount(four_->audit_address(), four_->admin_token(),
                                      "exec-replicas-lost-mcp", 1),
            1);
  EXPECT_TRUE(four_->StopAll().ok());
}

// ADR 0013: the world's messaging lives at one replica, its home. A message sent on a turn the
// other replica owns waits in the home's inbox, and Receive and RevokeRoute through either
// replica reach it; with the home killed, a dispatch fails closed (message_delivery_failed, never
// delivered elsewhere) and Receive is UNAVAILABLE; the home back, messaging resumes (empty: the
// built-in transport is memory only).
TEST_F(ReplicasTest, AWorldsMessagesMeetAtItsHomeWhicheverReplicaCarriesThem) {
  ASSERT_FALSE(HasFatalFailure());
  const bool r1_homes = envelope::messaging::WorldHome(demo::kNamespace, {"r1", "r2"}) == "r1";
  const Service home = r1_homes ? Service::kEnvelope : Service::kEnvelopeReplica;
  const Service other = r1_homes ? Service::kEnvelopeReplica : Service::kEnvelope;
  const ev1::OpenTurnResponse turn = Open(other, "exec-replicas-message");
  ASSERT_THAT(turn.turn_id(), StartsWith(r1_homes ? "turn-r2." : "turn-r1."));

  ev1::SendMessageResponse sent;
  for (const auto& [via, id] : {std::pair{other, "msg-1"}, std::pair{home, "msg-2"}}) {
    grpc::Status status = SendToPeer(via, turn.turn_id(), "exec-replicas-message", id, &sent);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(sent.receipt().status(), ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED)
        << sent.receipt().DebugString();
  }
  // Both wait at the home, whichever replica the host asks.
  ev1::ReceiveResponse received;
  grpc::Status status = ReceivePeer(other, &received);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(received.messages_size(), 2);
  EXPECT_EQ(received.messages(0).id(), "msg-1");
  EXPECT_EQ(received.messages(1).id(), "msg-2");
  ASSERT_TRUE(ReceivePeer(home, &received).ok());
  EXPECT_EQ(received.messages_size(), 0) << "taken once";

  // A revocation through the replica that does not home the world reaches the route's lease.
  const pb::Address actor =
      demo::TurnRequest("exec-replicas-message", "trace").execution_request().context().actor();
  ev1::RevokeRouteResponse revoked;
  status = RevokePeerRoute(other, actor, &revoked);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(revoked.was_leased());
  for (const Service via : {other, home}) {
    status = SendToPeer(via, turn.turn_id(), "exec-replicas-message", "msg-3", &sent);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(sent.receipt().status(), ev1::MESSAGE_DELIVERY_STATUS_DENIED);
    EXPECT_EQ(sent.receipt().error().code(), "route_lease_revoked");
  }

  // The home killed: the turn (owned by the other replica) still runs, but its messages cannot
  // reach the home, and nothing lands at the other replica instead.
  ASSERT_TRUE(four_->Kill(home).ok());
  status = SendToPeer(other, turn.turn_id(), "exec-replicas-message", "msg-4", &sent);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(sent.receipt().status(), ev1::MESSAGE_DELIVERY_STATUS_FAILED);
  EXPECT_EQ(sent.receipt().error().code(), "message_delivery_failed");
  status = ReceivePeer(other, &received);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("messaging replica"));
  EXPECT_THAT(four_->output(other), HasSubstr("replica.messaging_home_unreachable"));

  // The home back: it starts empty (msg-4 was never delivered anywhere) and serves again.
  ASSERT_TRUE(four_->Restart(home).ok());
  status = ReceivePeer(other, &received);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(received.messages_size(), 0);
  status = SendToPeer(other, turn.turn_id(), "exec-replicas-message", "msg-5", &sent);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(sent.receipt().status(), ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_TRUE(four_->StopAll().ok());
}

TEST_F(ReplicasTest, SigtermDrainsAReplicaItsOpenTurnServedUntilItEnds) {
  ASSERT_FALSE(HasFatalFailure());
  const ev1::OpenTurnResponse draining = Open(Service::kEnvelopeReplica, "exec-replicas-drain");
  ASSERT_THAT(draining.turn_id(), StartsWith("turn-r2."));
  ASSERT_EQ(kill(four_->pid(Service::kEnvelopeReplica), SIGTERM), 0);

  // NOT_SERVING while it drains; no new turn there.
  auto channel = Connect(four_->address(Service::kEnvelopeReplica));
  common::client::HealthStatus health = common::client::HealthStatus::kServing;
  const absl::Time give_up = absl::Now() + absl::Seconds(10);
  while (health != common::client::HealthStatus::kNotServing && absl::Now() < give_up) {
    absl::SleepFor(absl::Milliseconds(50));
    auto checked = common::client::CheckHealth(channel, "", absl::Seconds(2));
    if (checked.ok()) health = *checked;
  }
  EXPECT_EQ(health, common::client::HealthStatus::kNotServing);
  ev1::OpenTurnResponse refused;
  grpc::Status status =
      Envelope(Service::kEnvelopeReplica)
          ->OpenTurn(As(four_->host_token(), absl::Seconds(10)).get(),
                     demo::TurnRequest("exec-replicas-late", "trace-late"), &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("draining"));

  // Its open turn is still served, through its peer, until it ends; then it exits cleanly.
  ev1::InvokeToolResponse response;
  status = Read(Service::kEnvelope, draining.turn_id(), "exec-replicas-drain", "call-1", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.result().status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  ev1::FinishTurnResponse finished;
  status = Complete(Service::kEnvelope, draining.turn_id(), &finished);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(finished.result().status(), pb::EXECUTION_STATUS_SUCCEEDED);
  const absl::Status stopped = four_->Stop(Service::kEnvelopeReplica);
  EXPECT_TRUE(stopped.ok()) << stopped;
  EXPECT_THAT(four_->output(Service::kEnvelope), ::testing::Not(HasSubstr("Workspace/notes")));
}

}  // namespace
}  // namespace sharedos::crash
