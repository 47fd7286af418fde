// Issue 33's observations, each reproduced from outside through gRPC against the real processes
// (sharedosd and the four services; the service principals' case on the four only): what a
// hostile tenant did on 733dcd4 is refused now, and what the tenant may do still works
// (docs/adr/0014-tenants-apart.md, docs/security.md). Operator output (observation 7) is
// covered by sharedosctl's own tests.
#include <sys/stat.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/base64url.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/status/v1/status.grpc.pb.h"
#include "tests/e2e/e2e_deployment.h"
#include "tests/testing/demo_world.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace av1 = ::sharedos::audit::v1;
namespace demo = ::sharedos::testing::demo;
using ::testing::HasSubstr;

constexpr char kAlice[] = "human:user-alice";
constexpr char kBob[] = "human:user-bob";

pb::Address Human(const std::string& id) {
  pb::Address address;
  address.set_human_user_id(id);
  return address;
}

// Alice (the demo grant's issuer) lets the demo agent run, ask for a human and write bob's
// Scratch in bob's turns: an admin naming bob explicitly (T1's "a grant an admin of the namespace
// issued naming O").
constexpr char kBobRunsGrant[] = R"pb(
  id: "grant-bob-runs"
  namespace_id: "world-demo"
  subject { agent_id: "agent-assistant" }
  issuer { human_user_id: "user-alice" }
  capabilities {
    resource {
      namespace: "sharedos.execution"
      path: "agent"
      path: "agent-assistant"
      owner { human_user_id: "user-bob" }
    }
    actions: "invoke"
    scope: SCOPE_EXACT
  }
  capabilities {
    resource {
      namespace: "sharedos"
      path: "escalation"
      owner { human_user_id: "user-bob" }
    }
    actions: "request"
    scope: SCOPE_EXACT
  }
  capabilities {
    resource {
      namespace: "files"
      path: "Scratch"
      owner { human_user_id: "user-bob" }
    }
    actions: "create"
    scope: SCOPE_DESCENDANTS
  }
  constraints {}
  issued_at { seconds: 1700000000 }
)pb";

class ObservationsTest : public e2e::DeploymentTest {
 protected:
  ObservationsTest() : DeploymentTest(demo::RegistryText(), /*sharedosd_registry=*/false) {}

  // A credential issued by the operator: its id and secret.
  std::pair<std::string, std::string> Issue(const std::string& request_text) {
    gs::IssueCredentialResponse response;
    grpc::Status status = grants_->IssueCredential(
        As(admin_token_).get(), Parse<gs::IssueCredentialRequest>(request_text), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return {response.credential().credential_id(), response.secret()};
  }

  // A host credential of world-demo serving `owners` (comma-separated address keys).
  std::string Host(const std::string& id, const std::vector<std::string>& owners) {
    std::string scope = R"(namespaces: "world-demo")";
    for (const std::string& owner : owners) absl::StrAppend(&scope, " owners: \"", owner, "\"");
    return Issue(absl::StrCat("credential_id: \"", id, "\" principal { service_id: \"", id,
                              "\" } role: CREDENTIAL_ROLE_HOST scope { ", scope, " }"))
        .second;
  }

  // A reviewer credential for `human_id` in world-demo: its id and secret.
  std::pair<std::string, std::string> Reviewer(const std::string& human_id) {
    return Issue(absl::StrCat(
        "credential_id: \"", human_id, "-reviewer\" principal { human_user_id: \"", human_id,
        "\" } role: CREDENTIAL_ROLE_REVIEWER scope { namespaces: \"world-demo\" }"));
  }

  // The demo turn, owned by `owner` under `authority`'s grants, opened with `token`.
  grpc::Status Open(const std::string& token, const std::string& execution_id,
                    const std::string& owner, const std::string& authority,
                    ev1::OpenTurnResponse* response) {
    ev1::OpenTurnRequest request = demo::TurnRequest(execution_id, "trace-" + execution_id);
    pb::AccessContext* context = request.mutable_execution_request()->mutable_context();
    *context->mutable_owner() = Human(owner);
    *context->mutable_authority() = Human(authority);
    return envelope_stub_->OpenTurn(As(token).get(), request, response);
  }

  pb::ToolResult Create(const std::string& token, const std::string& turn_id,
                        const std::string& execution_id, const std::string& path) {
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(absl::StrCat("call-", execution_id));
    call->set_tool("files.create");
    call->set_trace_id("trace-" + execution_id);
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    absl::StrCat(R"({"path": ")", path, R"(", "content": "milk"})"),
                    call->mutable_arguments())
                    .ok());
    call->mutable_requested_at()->set_seconds(demo::kNowSeconds + 1);
    ev1::InvokeToolResponse response;
    grpc::Status status = envelope_stub_->InvokeTool(As(token).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.result();
  }

  // Ends the turn escalated with the denial's required authority; answers the escalation id.
  std::string Escalate(const std::string& token, const std::string& turn_id,
                       const pb::ToolResult& denial) {
    ev1::FinishTurnRequest finish;
    finish.set_turn_id(turn_id);
    finish.mutable_escalate()->set_reason("needs to write the summary");
    std::string json;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(
                    denial.error().details().fields().at("requiredAuthority").struct_value(), &json)
                    .ok());
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    json, finish.mutable_escalate()->mutable_requested_authority())
                    .ok());
    ev1::FinishTurnResponse finished;
    grpc::Status status = envelope_stub_->FinishTurn(As(token).get(), finish, &finished);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(finished.result().status(), pb::EXECUTION_STATUS_ESCALATED);
    return finished.escalation_id();
  }

  // The demo agent's turn for alice: its write to Workspace/<execution_id>.txt refused, then
  // escalated.
  std::string AliceEscalation(const std::string& execution_id) {
    ev1::OpenTurnResponse turn;
    EXPECT_TRUE(Open(host_token_, execution_id, "user-alice", "user-alice", &turn).ok());
    pb::ToolResult write =
        Create(host_token_, turn.turn_id(), execution_id, "Workspace/" + execution_id + ".txt");
    EXPECT_EQ(write.error().code(), "no_matching_grant") << write.DebugString();
    return Escalate(host_token_, turn.turn_id(), write);
  }

  grpc::Status Approve(const std::string& token, const std::string& escalation_id,
                       gs::ResolveEscalationResponse* response) {
    gs::ResolveEscalationRequest request;
    request.set_escalation_id(escalation_id);
    request.set_decision(gs::ESCALATION_DECISION_APPROVE);
    return grants_->ResolveEscalation(As(token).get(), request, response);
  }

  // The control-plane escalation.resolved record of `escalation_id` (operator's read).
  av1::ControlPlaneEvent Resolved(const std::string& escalation_id) {
    av1::QueryRequest query;
    query.mutable_filter()->set_namespace_id("world-demo");
    query.mutable_filter()->set_control_plane_type(
        av1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED);
    query.set_limit(1000);
    av1::QueryResponse records;
    EXPECT_TRUE(audit_stub_->Query(As(admin_token_).get(), query, &records).ok());
    for (const av1::AuditRecord& record : records.records()) {
      const auto& fields = record.control_plane().metadata().fields();
      if (fields.count("escalationId") &&
          fields.at("escalationId").string_value() == escalation_id) {
        return record.control_plane();
      }
    }
    ADD_FAILURE() << "no escalation.resolved record for " << escalation_id;
    return av1::ControlPlaneEvent();
  }

  void MakeWorkspace(const std::string& owner_id) {
    std::string dir = files_root_;
    for (const std::string part : {"human", owner_id.c_str(), "workspace", "Workspace"}) {
      dir = absl::StrCat(dir, "/", part);
      mkdir(dir.c_str(), 0700);
    }
  }
};

// 1. An owner's approval wrote into another owner's workspace: bob approved an escalation of a
// turn owned by bob under alice's authority, and alice's own turn then wrote the file in alice's
// workspace. The approved grant now names bob on every capability.
TEST_P(ObservationsTest, ABobApprovalDoesNotWriteIntoAlicesWorkspace) {
  IssueGrant(demo::Grant());
  IssueGrant(kBobRunsGrant);
  const std::string host = Host("host-both", {kAlice, kBob});
  const std::string bob = Reviewer("user-bob").second;
  ASSERT_FALSE(HasFatalFailure());
  MakeWorkspace("user-bob");

  ev1::OpenTurnResponse bobs;
  ASSERT_TRUE(Open(host, "exec-o1-bob", "user-bob", "user-alice", &bobs).ok());
  ASSERT_FALSE(bobs.has_result()) << bobs.result().DebugString();
  pb::ToolResult denied = Create(host, bobs.turn_id(), "exec-o1-bob", "Workspace/summary.txt");
  ASSERT_EQ(denied.error().code(), "no_matching_grant");
  const std::string escalation = Escalate(host, bobs.turn_id(), denied);
  gs::ResolveEscalationResponse approved;
  grpc::Status status = Approve(bob, escalation, &approved);
  ASSERT_TRUE(status.ok()) << status.error_message();
  for (const pb::Capability& capability : approved.grant().capabilities()) {
    EXPECT_EQ(capability.resource().owner().human_user_id(), "user-bob");
  }
  EXPECT_EQ(approved.grant().issuer().human_user_id(), "user-alice");

  // Alice's own turn: the same write is refused, and nothing lands in her workspace.
  ev1::OpenTurnResponse alices;
  ASSERT_TRUE(Open(host, "exec-o1-alice", "user-alice", "user-alice", &alices).ok());
  pb::ToolResult refused = Create(host, alices.turn_id(), "exec-o1-alice", "Workspace/summary.txt");
  EXPECT_EQ(refused.status(), pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(refused.error().code(), "no_matching_grant");
  EXPECT_EQ(e2e::ReadFile(demo::WorkspaceRoot(files_root_) + "/Workspace/summary.txt"), "");

  // Bob's next turn may do exactly what bob approved, on bob's data.
  ev1::OpenTurnResponse again;
  ASSERT_TRUE(Open(host, "exec-o1-bob-2", "user-bob", "user-alice", &again).ok());
  pb::ToolResult written = Create(host, again.turn_id(), "exec-o1-bob-2", "Workspace/summary.txt");
  EXPECT_EQ(written.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << written.DebugString();
}

// 2. A grant issued without an owner acted on whichever owner the host named, and a host scoped
// to bob could name alice as the authority. Now the owner is pinned when the grant is issued, and
// the host's scope bounds the authority.
TEST_P(ObservationsTest, AnOwnerlessGrantActsOnlyForItsIssuerAndAHostNamesOnlyItsAuthorities) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  gs::GetGrantRequest get;
  get.set_namespace_id("world-demo");
  get.set_grant_id(demo::Grant().id());
  gs::GetGrantResponse stored;
  ASSERT_TRUE(grants_->GetGrant(As(admin_token_).get(), get, &stored).ok());
  for (const pb::Capability& capability : stored.grant().capabilities()) {
    EXPECT_EQ(capability.resource().owner().human_user_id(), "user-alice");
  }

  const std::string bob_host = Host("host-bob", {kBob});
  ev1::OpenTurnResponse refused;
  grpc::Status status = Open(bob_host, "exec-o2-a", "user-bob", "user-alice", &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("authority"));

  // A host of both owners may name alice's authority in bob's turn — but alice's grant does not
  // reach bob: the turn is not even admitted (its execution capability is alice's).
  const std::string host = Host("host-both", {kAlice, kBob});
  ev1::OpenTurnResponse turn;
  ASSERT_TRUE(Open(host, "exec-o2-b", "user-bob", "user-alice", &turn).ok());
  ASSERT_TRUE(turn.has_result());
  EXPECT_EQ(turn.result().status(), pb::EXECUTION_STATUS_DENIED);
  EXPECT_EQ(turn.result().error().code(), "no_matching_grant");

  // An ownerless capability under a non-human issuer is refused naming the field, unless the admin
  // says "any owner" explicitly, which the grant then carries.
  const std::string ownerless = R"pb(
    id: "grant-agent-issued"
    namespace_id: "world-demo"
    subject { agent_id: "agent-helper" }
    issuer { agent_id: "agent-assistant" }
    capabilities {
      resource { namespace: "files" path: "Workspace" }
      actions: "read"
      scope: SCOPE_DESCENDANTS
    }
    constraints {}
    issued_at { seconds: 1700000000 })pb";
  gs::IssueGrantRequest issue;
  *issue.mutable_grant() = Parse<pb::CapabilityGrant>(ownerless);
  gs::IssueGrantResponse issued;
  status = grants_->IssueGrant(As(admin_token_).get(), issue, &issued);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("grant.capabilities[0].resource.owner"));
  issue.set_any_owner(true);
  status = grants_->IssueGrant(As(admin_token_).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(issued.grant().metadata().fields().at("anyOwner").bool_value());
  EXPECT_FALSE(issued.grant().capabilities(0).resource().has_owner());
}

// 3. An admin of one namespace read every namespace's audit (Query with it or without a filter,
// Tail, Verify, Checkpoint). Now it reads only its namespaces, and the chain is the operator's.
TEST_P(ObservationsTest, ANamespaceAdminReadsOnlyItsNamespacesRecord) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  // sharedosd looks every credential up in its store; the four processes' audit_svc knows its
  // static file, which holds an admin of world-b.
  const std::string admin_b = sharedosd() ? Issue(R"pb(
                                              credential_id: "ops-b"
                                              principal { human_user_id: "op-b" }
                                              role: CREDENTIAL_ROLE_ADMIN
                                              scope { namespaces: "world-b" })pb")
                                                .second
                                          : four_->credentials().namespace_admin_token;
  ASSERT_FALSE(admin_b.empty());
  av1::QueryRequest query;
  av1::QueryResponse records;
  query.mutable_filter()->set_namespace_id("world-demo");
  EXPECT_EQ(audit_stub_->Query(As(admin_b).get(), query, &records).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  query.mutable_filter()->clear_namespace_id();
  grpc::Status unfiltered = audit_stub_->Query(As(admin_b).get(), query, &records);
  EXPECT_EQ(unfiltered.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(unfiltered.error_message(), HasSubstr("namespace_id: required"));
  query.mutable_filter()->set_namespace_id("world-b");
  EXPECT_TRUE(audit_stub_->Query(As(admin_b).get(), query, &records).ok());
  for (const av1::AuditRecord& record : records.records()) {
    EXPECT_EQ(
        record.has_event() ? record.event().namespace_id() : record.control_plane().namespace_id(),
        "world-b");
  }

  av1::TailRequest tail;
  tail.mutable_filter()->set_namespace_id("world-demo");
  tail.set_from_sequence(1);
  auto context = As(admin_b);
  auto stream = audit_stub_->Tail(context.get(), tail);
  av1::TailResponse first;
  EXPECT_FALSE(stream->Read(&first));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);

  av1::VerifyResponse verified;
  EXPECT_EQ(audit_stub_->Verify(As(admin_b).get(), av1::VerifyRequest(), &verified).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  av1::CheckpointResponse checkpoint;
  EXPECT_EQ(audit_stub_->Checkpoint(As(admin_b).get(), av1::CheckpointRequest(), &checkpoint)
                .error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(audit_stub_->Verify(As(admin_token_).get(), av1::VerifyRequest(), &verified).ok());
}

// 4. An admin approved in a reviewer's name (with a reviewer credential it issued, or rotated in
// place) and the record said the reviewer decided. Now the record names the credential and who
// set its secret, an admin cannot rotate a human's credential, and a reviewer who rotates its own
// decides with a secret only it knows.
TEST_P(ObservationsTest, ADecisionNamesItsCredentialAndWhoSetItsSecret) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  const auto [alice_id, alice_secret] = Reviewer("user-alice");

  const std::string first = AliceEscalation("exec-o4-1");
  gs::ResolveEscalationResponse approved;
  ASSERT_TRUE(Approve(alice_secret, first, &approved).ok());
  const gs::DecisionCredential& with = approved.escalation().decided_with();
  EXPECT_EQ(with.credential_id(), alice_id);
  EXPECT_FALSE(with.held_by_decider_alone());
  EXPECT_NE(with.secret_set_by().human_user_id(), "user-alice");
  av1::ControlPlaneEvent record = Resolved(first);
  EXPECT_EQ(record.metadata().fields().at("credentialId").string_value(), alice_id);
  EXPECT_FALSE(record.metadata().fields().at("credentialHeldByDeciderAlone").bool_value());

  // The operator may not set alice's secret in place (and lock her out).
  gs::RotateCredentialRequest rotate;
  rotate.set_credential_id(alice_id);
  gs::RotateCredentialResponse rotated;
  grpc::Status status = grants_->RotateCredential(As(admin_token_).get(), rotate, &rotated);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("revoke it and issue a new one"));

  // Alice rotates her own: the old secret is refused, and her next decision is hers alone.
  status = grants_->RotateCredential(As(alice_secret).get(), rotate, &rotated);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::string second = AliceEscalation("exec-o4-2");
  gs::ResolveEscalationResponse refused;
  EXPECT_EQ(Approve(alice_secret, second, &refused).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  ASSERT_TRUE(Approve(rotated.secret(), second, &approved).ok());
  EXPECT_TRUE(approved.escalation().decided_with().held_by_decider_alone());
  EXPECT_TRUE(Resolved(second).metadata().fields().at("credentialHeldByDeciderAlone").bool_value());
}

// 5. A host of one owner took another owner's messages and revoked its routes, and revocations
// grew without bound. Now messages and routes are their owner's, and revocations are bounded.
TEST_P(ObservationsTest, AHostReachesOnlyItsOwnersMessagesAndRoutes) {
  pb::CapabilityGrant grant = demo::Grant();
  pb::Capability* send = grant.add_capabilities();
  send->mutable_resource()->set_namespace_("sharedos.messaging");
  send->mutable_resource()->add_path("agent");
  send->mutable_resource()->add_path("agent-helper");
  send->add_actions("send");
  send->set_scope(pb::SCOPE_EXACT);
  IssueGrant(grant);
  const std::string alice_host = Host("host-alice", {kAlice});
  const std::string bob_host = Host("host-bob", {kBob});
  ASSERT_FALSE(HasFatalFailure());

  ev1::OpenTurnResponse turn;
  ASSERT_TRUE(Open(alice_host, "exec-o5", "user-alice", "user-alice", &turn).ok());
  auto send_message = [&](const std::string& id) {
    ev1::SendMessageRequest request;
    request.set_turn_id(turn.turn_id());
    pb::MessageEnvelope* message = request.mutable_message();
    message->set_version("1");
    message->set_id(id);
    message->mutable_sender()->set_agent_id("agent-assistant");
    message->mutable_receiver()->set_agent_id("agent-helper");
    message->set_purpose("keep notes");
    message->set_trace_id("trace-exec-o5");
    message->mutable_payload()->set_string_value("alice's secret plan");
    message->mutable_created_at()->set_seconds(demo::kNowSeconds + 1);
    ev1::SendMessageResponse response;
    grpc::Status status = envelope_stub_->SendMessage(As(alice_host).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.receipt();
  };
  ASSERT_EQ(send_message("m-1").status(), ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED);

  auto routes = ev1::MessageRoutes::NewStub(
      grpc::CreateChannel(envelope_address_, grpc::InsecureChannelCredentials()));
  ev1::ReceiveRequest receive;
  receive.set_namespace_id("world-demo");
  receive.mutable_receiver()->set_agent_id("agent-helper");
  receive.set_max(10);
  ev1::ReceiveResponse received;
  ASSERT_TRUE(routes->Receive(As(bob_host).get(), receive, &received).ok());
  EXPECT_EQ(received.messages_size(), 0);
  *receive.mutable_owner() = Human("user-alice");
  EXPECT_EQ(routes->Receive(As(bob_host).get(), receive, &received).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  ev1::RevokeRouteRequest revoke;
  revoke.set_namespace_id("world-demo");
  revoke.mutable_sender()->set_agent_id("agent-assistant");
  revoke.mutable_receiver()->set_agent_id("agent-helper");
  ev1::RevokeRouteResponse revoked;
  ASSERT_TRUE(routes->RevokeRoute(As(bob_host).get(), revoke, &revoked).ok());
  EXPECT_FALSE(revoked.was_leased());
  *revoke.mutable_owner() = Human("user-alice");
  EXPECT_EQ(routes->RevokeRoute(As(bob_host).get(), revoke, &revoked).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Alice's route is untouched, and her host receives her messages, saying whose they are.
  ASSERT_EQ(send_message("m-2").status(), ev1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  receive.clear_owner();
  ASSERT_TRUE(routes->Receive(As(alice_host).get(), receive, &received).ok());
  ASSERT_EQ(received.messages_size(), 2);
  EXPECT_EQ(received.owners(0).human_user_id(), "user-alice");

  // Revocations are bounded per owner: bob's host reaches its bound, named, never past it.
  revoke.clear_owner();
  grpc::Status status;
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    revoke.mutable_sender()->set_agent_id(absl::StrCat("agent-", i));
    status = routes->RevokeRoute(As(bob_host).get(), revoke, &revoked);
    if (!status.ok()) break;
    ++accepted;
  }
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("at most 4096"));
  EXPECT_EQ(accepted, 4096 - 1);  // the first revocation above counted too
}

// 8. Smaller: page tokens named credentials the caller could not see; a scoped admin managed
// credentials of no namespace; an approval with nothing narrowed never expired.
TEST_P(ObservationsTest, PageTokensCredentialsOfNoNamespaceAndApprovalsThatEnd) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  std::set<std::string> foreign;
  for (const std::string id : {"a-foreign-b", "b-foreign-b", "c-foreign-b"}) {
    foreign.insert(Issue(absl::StrCat("credential_id: \"", id, "\" principal { service_id: \"", id,
                                      "\" } role: CREDENTIAL_ROLE_HOST scope { namespaces: "
                                      "\"world-b\" owners: \"*\" }"))
                       .first);
  }
  const std::string nowhere = Issue(R"pb(
                                credential_id: "d-no-namespace"
                                principal { service_id: "nowhere" }
                                role: CREDENTIAL_ROLE_HOST)pb")
                                  .first;
  Issue(R"pb(credential_id: "e-demo-host"
             principal { service_id: "e" }
             role: CREDENTIAL_ROLE_HOST
             scope { namespaces: "world-demo" owners: "*" })pb");
  const std::string demo_admin = Issue(R"pb(
                                   credential_id: "z-ops-demo"
                                   principal { human_user_id: "op-demo" }
                                   role: CREDENTIAL_ROLE_ADMIN
                                   scope { namespaces: "world-demo" })pb")
                                     .second;
  ASSERT_FALSE(HasFatalFailure());

  gs::ListCredentialsRequest list;
  list.set_page_size(1);
  std::vector<std::string> seen;
  for (int page = 0; page < 20; ++page) {
    gs::ListCredentialsResponse answered;
    ASSERT_TRUE(grants_->ListCredentials(As(demo_admin).get(), list, &answered).ok());
    for (const gs::Credential& credential : answered.credentials()) {
      seen.push_back(credential.credential_id());
    }
    if (answered.next_page_token().empty()) break;
    absl::StatusOr<std::string> token = common::Base64UrlDecode(answered.next_page_token());
    ASSERT_TRUE(token.ok());
    for (const std::string& id : foreign) EXPECT_FALSE(absl::StrContains(*token, id)) << id;
    EXPECT_FALSE(absl::StrContains(*token, nowhere));
    list.set_page_token(answered.next_page_token());
  }
  EXPECT_THAT(seen, ::testing::Contains("e-demo-host"));
  for (const std::string& id : seen) {
    EXPECT_EQ(foreign.count(id), 0u) << id;
    EXPECT_NE(id, nowhere);
  }
  gs::RevokeCredentialRequest revoke;
  revoke.set_credential_id(nowhere);
  gs::RevokeCredentialResponse revoked;
  EXPECT_EQ(grants_->RevokeCredential(As(demo_admin).get(), revoke, &revoked).error_code(),
            grpc::StatusCode::NOT_FOUND);

  const std::string escalation = AliceEscalation("exec-o8");
  const std::string alice = Reviewer("user-alice").second;
  gs::ResolveEscalationResponse approved;
  ASSERT_TRUE(Approve(alice, escalation, &approved).ok());
  const pb::CapabilityGrant& issued = approved.grant();
  ASSERT_TRUE(issued.constraints().has_expires_at());
  EXPECT_EQ(issued.constraints().expires_at().seconds() - issued.issued_at().seconds(), 24 * 3600);
}

INSTANTIATE_TEST_SUITE_P(Deployments, ObservationsTest, ::testing::Bool(), e2e::DeploymentName);

// 6. The service role could do anything on the data plane, and the services shared one token.
// Now each service is its own principal, reaching only what its job needs, and the log stamps
// every record with its writer. (Four processes: sharedosd has no service credential at all.)
class ServicePrincipalsTest : public ObservationsTest {};

TEST_P(ServicePrincipalsTest, EachServiceCallsOnlyWhatItsJobNeeds) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  const testing::DeploymentCredentials& credentials = four_->credentials();
  auto grants = gs::GrantStore::NewStub(
      grpc::CreateChannel(four_->grantstore_address(), grpc::InsecureChannelCredentials()));
  auto authorizer = ::sharedos::authorizer::v1::Authorizer::NewStub(
      grpc::CreateChannel(four_->authorizer_address(), grpc::InsecureChannelCredentials()));

  gs::TryConsumeRequest consume;
  consume.set_namespace_id("world-demo");
  consume.set_grant_id(demo::Grant().id());
  consume.set_max_uses(1);
  gs::TryConsumeResponse consumed;
  EXPECT_EQ(
      grants->TryConsume(As(credentials.envelope_token).get(), consume, &consumed).error_code(),
      grpc::StatusCode::PERMISSION_DENIED);
  gs::LoadAuthorityRequest load;
  load.set_namespace_id("world-demo");
  *load.mutable_actor() = demo::Grant().subject();
  *load.mutable_authority() = demo::Grant().issuer();
  gs::LoadAuthorityResponse loaded;
  EXPECT_EQ(
      grants->LoadAuthority(As(credentials.grantstore_token).get(), load, &loaded).error_code(),
      grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_TRUE(grants->LoadAuthority(As(credentials.authorizer_token).get(), load, &loaded).ok());
  gs::ListGrantsRequest list;
  list.mutable_filter()->set_namespace_id("world-demo");
  gs::ListGrantsResponse listed;
  EXPECT_EQ(grants->ListGrants(As(credentials.authorizer_token).get(), list, &listed).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ::sharedos::authorizer::v1::ReachRequest reach;
  ::sharedos::authorizer::v1::ReachResponse reached;
  EXPECT_EQ(authorizer->Reach(As(credentials.authorizer_token).get(), reach, &reached).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  // The grant store cannot put a tool call in the record, the envelope cannot record a grant.
  av1::AppendRequest forged;
  pb::AuditEvent* event = forged.add_events();
  event->set_version("1");
  event->set_id("forged-tool-call");
  event->set_type(pb::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event->set_outcome(pb::AUDIT_OUTCOME_SUCCEEDED);
  event->mutable_at()->set_seconds(demo::kNowSeconds);
  event->set_trace_id("trace-forged");
  event->set_namespace_id("world-demo");
  event->mutable_actor()->set_agent_id("agent-assistant");
  *event->mutable_authority() = Human("user-alice");
  *event->mutable_owner() = Human("user-alice");
  event->set_purpose("keep notes");
  av1::AppendResponse appended;
  grpc::Status status =
      audit_stub_->Append(As(credentials.grantstore_token).get(), forged, &appended);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("service:grantstore"));

  // What the envelope did write carries its writer.
  const std::string escalation = AliceEscalation("exec-o6");
  EXPECT_FALSE(escalation.empty());
  std::vector<pb::AuditEvent> events = AuditUntil([](const std::vector<pb::AuditEvent>& so_far) {
    for (const pb::AuditEvent& e : so_far) {
      if (e.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) return true;
    }
    return false;
  });
  std::set<std::string> writers;
  for (const pb::AuditEvent& e : events) {
    ASSERT_TRUE(e.metadata().fields().count("writer")) << e.DebugString();
    writers.insert(e.metadata().fields().at("writer").string_value());
    if (e.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) {
      EXPECT_EQ(e.metadata().fields().at("writer").string_value(), "service:envelope");
    }
    if (e.type() == pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED) {
      EXPECT_EQ(e.metadata().fields().at("writer").string_value(), "service:authorizer");
    }
  }
  EXPECT_EQ(writers, (std::set<std::string>{"service:authorizer", "service:envelope"}));
  for (const av1::AuditRecord& record : audit_records_) {
    if (record.has_control_plane()) {
      EXPECT_EQ(record.control_plane().writer().service_id(), "grantstore");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FourProcesses, ServicePrincipalsTest, ::testing::Values(false),
                         e2e::DeploymentName);

}  // namespace
}  // namespace sharedos
