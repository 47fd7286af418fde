// Who may approve an escalation, through the real processes (both deployments): credentials are
// issued through the control plane (IssueCredential, secret shown once); the host credential and
// an admin not acting on the reviewer's behalf are refused PERMISSION_DENIED, another reviewer and
// an admin of another namespace are answered NOT_FOUND as for an unknown id (the escalation is
// out of their reach, ADR 0014 T2), and the escalation stays pending; the reviewer's
// own credential approves, the record and grant name it, and the next turn may do exactly the
// escalated write and nothing wider. A revoked credential is refused on its next call without a
// restart, and no secret reaches the audit log or a process's output.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/e2e/e2e_deployment.h"
#include "tests/testing/demo_world.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace gs = ::sharedos::grantstore::v1;
namespace demo = ::sharedos::testing::demo;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;

class ReviewerApprovalTest : public e2e::DeploymentTest {
 protected:
  ReviewerApprovalTest() : DeploymentTest(demo::RegistryText(), /*sharedosd_registry=*/false) {}

  envelope::v1::OpenTurnResponse OpenTurn(const std::string& execution_id) {
    envelope::v1::OpenTurnResponse response;
    grpc::Status status = envelope_stub_->OpenTurn(
        As(host_token_).get(), demo::TurnRequest(execution_id, "trace-review"), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  pb::ToolResult Create(const std::string& turn_id, const std::string& call_id,
                        const std::string& path) {
    envelope::v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    pb::ToolCall* call = request.mutable_call();
    call->set_id(call_id);
    call->set_tool("files.create");
    call->set_trace_id("trace-review");
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    absl::StrCat(R"({"path": ")", path, R"(", "content": "milk"})"),
                    call->mutable_arguments())
                    .ok());
    call->mutable_requested_at()->set_seconds(1786438801);
    envelope::v1::InvokeToolResponse response;
    grpc::Status status = envelope_stub_->InvokeTool(As(host_token_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.result();
  }

  // Issues a credential as the operator; answers its secret.
  std::string IssueCredential(const std::string& request_text) {
    gs::IssueCredentialResponse response;
    grpc::Status status = grants_->IssueCredential(
        As(admin_token_).get(), Parse<gs::IssueCredentialRequest>(request_text), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.secret().empty());
    return response.secret();
  }

  grpc::Status Resolve(const std::string& token, const std::string& escalation_id, bool on_behalf,
                       gs::ResolveEscalationResponse* response) {
    gs::ResolveEscalationRequest request;
    request.set_escalation_id(escalation_id);
    request.set_decision(gs::ESCALATION_DECISION_APPROVE);
    request.set_on_behalf_of_reviewer(on_behalf);
    return grants_->ResolveEscalation(As(token).get(), request, response);
  }

  gs::EscalationRecord Stored(const std::string& token, const std::string& escalation_id) {
    gs::GetEscalationRequest request;
    request.set_escalation_id(escalation_id);
    gs::GetEscalationResponse response;
    grpc::Status status = grants_->GetEscalation(As(token).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.escalation();
  }
};

TEST_P(ReviewerApprovalTest, OnlyTheReviewerApprovesAndARevokedCredentialIsRefusedAtOnce) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  const std::string alice = IssueCredential(R"pb(
    credential_id: "alice-reviewer"
    principal { human_user_id: "user-alice" }
    role: CREDENTIAL_ROLE_REVIEWER
    scope { namespaces: "world-demo" })pb");
  const std::string bob = IssueCredential(R"pb(
    credential_id: "bob-reviewer"
    principal { human_user_id: "user-bob" }
    role: CREDENTIAL_ROLE_REVIEWER
    scope { namespaces: "world-demo" })pb");
  const std::string other_admin = IssueCredential(R"pb(
    credential_id: "ops-elsewhere"
    principal { human_user_id: "op-2" }
    role: CREDENTIAL_ROLE_ADMIN
    scope { namespaces: "world-other" })pb");
  ASSERT_FALSE(HasFatalFailure());

  // Turn 1: the write outside Scratch is refused with its required authority; escalate it.
  envelope::v1::OpenTurnResponse first = OpenTurn("exec-review-1");
  pb::ToolResult write = Create(first.turn_id(), "call-write", "Workspace/summary.txt");
  ASSERT_EQ(write.error().code(), "no_matching_grant") << write.DebugString();
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(
                  write.error().details().fields().at("requiredAuthority").struct_value(), &json)
                  .ok());
  envelope::v1::FinishTurnRequest finish;
  finish.set_turn_id(first.turn_id());
  finish.mutable_escalate()->set_reason("The assistant needs to write its summary.");
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  json, finish.mutable_escalate()->mutable_requested_authority())
                  .ok());
  envelope::v1::FinishTurnResponse escalated;
  ASSERT_TRUE(envelope_stub_->FinishTurn(As(host_token_).get(), finish, &escalated).ok());
  ASSERT_EQ(escalated.result().status(), pb::EXECUTION_STATUS_ESCALATED);

  // The reviewer sees its queue with its own credential.
  gs::ListEscalationsRequest list;
  list.set_namespace_id("world-demo");
  list.set_status(gs::ESCALATION_RECORD_STATUS_PENDING);
  gs::ListEscalationsResponse queue;
  ASSERT_TRUE(grants_->ListEscalations(As(alice).get(), list, &queue).ok());
  ASSERT_THAT(queue.escalations(), SizeIs(1));
  const std::string id = queue.escalations(0).escalation_id();

  // Everyone else is refused, and nothing moves.
  struct Refused {
    const char* who;
    std::string token;
    bool on_behalf;
    grpc::StatusCode code;
  } refused[] = {{"another reviewer", bob, false, grpc::StatusCode::NOT_FOUND},
                 {"the host credential", host_token_, false, grpc::StatusCode::PERMISSION_DENIED},
                 {"an admin not acting on the reviewer's behalf", admin_token_, false,
                  grpc::StatusCode::PERMISSION_DENIED},
                 {"an admin of another namespace", other_admin, true, grpc::StatusCode::NOT_FOUND}};
  for (const Refused& r : refused) {
    gs::ResolveEscalationResponse response;
    grpc::Status status = Resolve(r.token, id, r.on_behalf, &response);
    EXPECT_EQ(status.error_code(), r.code) << r.who;
    if (r.code == grpc::StatusCode::NOT_FOUND) {
      // Word for word what an unknown id answers: nothing says the escalation exists.
      gs::ResolveEscalationResponse unknown_response;
      EXPECT_EQ(status.error_message(),
                absl::StrReplaceAll(
                    Resolve(r.token, "esc-unknown", r.on_behalf, &unknown_response).error_message(),
                    {{"esc-unknown", id}}))
          << r.who;
    }
    EXPECT_EQ(Stored(admin_token_, id).status(), gs::ESCALATION_RECORD_STATUS_PENDING) << r.who;
  }
  // The request may not name another decider than the credential's principal either.
  gs::ResolveEscalationRequest named;
  named.set_escalation_id(id);
  named.set_decision(gs::ESCALATION_DECISION_APPROVE);
  named.mutable_reviewer()->set_human_user_id("user-bob");
  gs::ResolveEscalationResponse named_response;
  grpc::Status named_status = grants_->ResolveEscalation(As(alice).get(), named, &named_response);
  EXPECT_EQ(named_status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(named_status.error_message(), HasSubstr("reviewer"));

  // Alice approves as herself: the record and the grant name her.
  gs::ResolveEscalationResponse approved;
  grpc::Status status = Resolve(alice, id, false, &approved);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(approved.escalation().status(), gs::ESCALATION_RECORD_STATUS_APPROVED);
  EXPECT_EQ(approved.escalation().decided_by().human_user_id(), "user-alice");
  EXPECT_FALSE(approved.escalation().on_behalf_of_reviewer());
  EXPECT_EQ(approved.grant().metadata().fields().at("approvedBy").string_value(),
            "human:user-alice");
  pb::CapabilityRequest asked;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &asked).ok());
  ASSERT_EQ(approved.grant().capabilities_size(), asked.capabilities_size());
  // Exactly what was asked, on alice's own resources, named as such (ADR 0014, T1).
  for (int i = 0; i < asked.capabilities_size(); ++i) {
    pb::Capability expected = asked.capabilities(i);
    *expected.mutable_resource()->mutable_owner() = asked.owner();
    EXPECT_EQ(approved.grant().capabilities(i).SerializeAsString(), expected.SerializeAsString());
  }

  // The next turn: exactly the escalated write, nothing wider.
  envelope::v1::OpenTurnResponse second = OpenTurn("exec-review-2");
  pb::ToolResult again = Create(second.turn_id(), "call-write-2", "Workspace/summary.txt");
  EXPECT_EQ(again.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED) << again.DebugString();
  pb::ToolResult wider = Create(second.turn_id(), "call-write-3", "Workspace/other.txt");
  EXPECT_EQ(wider.status(), pb::TOOL_RESULT_STATUS_DENIED) << wider.DebugString();
  EXPECT_EQ(wider.error().code(), "no_matching_grant");

  // Revocation holds on the very next call, without a restart.
  gs::RevokeCredentialRequest revoke;
  revoke.set_credential_id("alice-reviewer");
  gs::RevokeCredentialResponse revoked;
  ASSERT_TRUE(grants_->RevokeCredential(As(admin_token_).get(), revoke, &revoked).ok());
  gs::ListEscalationsResponse after;
  EXPECT_EQ(grants_->ListEscalations(As(alice).get(), list, &after).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // Every credential change is audited with the operator as actor, and no secret is anywhere.
  // Control-plane records are audit.v1.ControlPlaneEvents (ADR 0008), kept in audit_records_.
  auto changes = [this]() {
    int changed = 0;
    for (const audit::v1::AuditRecord& record : audit_records_) {
      changed +=
          record.control_plane().type() == audit::v1::CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED;
    }
    return changed;
  };
  // alice and bob issued, alice revoked (world-demo's).
  AuditUntil([&](const auto&) { return changes() >= 3; });
  int changed = 0;
  bool resolved_by_alice = false;
  for (const audit::v1::AuditRecord& record : audit_records_) {
    const std::string text = record.DebugString();
    for (const std::string& secret : {alice, bob, other_admin}) {
      EXPECT_THAT(text, Not(HasSubstr(secret.substr(4)))) << "a secret in " << text;
    }
    if (!record.has_control_plane()) continue;
    const audit::v1::ControlPlaneEvent& event = record.control_plane();
    if (event.type() == audit::v1::CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED) {
      ++changed;
      EXPECT_FALSE(event.actor().service_id().empty()) << text;
    }
    if (event.type() == audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED) {
      resolved_by_alice = event.actor().human_user_id() == "user-alice";
    }
  }
  EXPECT_GE(changed, 3);
  EXPECT_TRUE(resolved_by_alice) << "escalation.resolved names the authenticated reviewer";
  if (sharedosd_ != nullptr) {
    for (const std::string& secret : {alice, bob, other_admin}) {
      EXPECT_THAT(sharedosd_->output(), Not(HasSubstr(secret.substr(4))));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Deployments, ReviewerApprovalTest, ::testing::Bool(), e2e::DeploymentName);

}  // namespace
}  // namespace sharedos
