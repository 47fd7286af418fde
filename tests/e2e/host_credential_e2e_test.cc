// A host credential issued through the control plane runs turns at the envelope of both
// deployments — in the four-process one envelope_svc is its own process and looks the credential
// up at grantstore_svc (GrantStore.AuthenticateCredential) on every call. Its scope bounds the
// turns it may open; after RevokeCredential its next call is UNAUTHENTICATED without a restart.
// A host reads the status (only) of the escalations of its scope; another scope's are refused.
#include <string>

#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/e2e/e2e_deployment.h"
#include "tests/testing/demo_world.h"

namespace sharedos {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace demo = ::sharedos::testing::demo;

class HostCredentialTest : public e2e::DeploymentTest {
 protected:
  HostCredentialTest() : DeploymentTest(demo::RegistryText(), /*sharedosd_registry=*/false) {}

  // Issues a credential as the operator; answers its secret.
  std::string IssueCredential(const std::string& request_text) {
    gs::IssueCredentialResponse response;
    grpc::Status status = grants_->IssueCredential(
        As(admin_token_).get(), Parse<gs::IssueCredentialRequest>(request_text), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.secret().empty());
    return response.secret();
  }

  // Opens the demo turn as `token` and ends it escalated with the refused write's authority;
  // answers the escalation id.
  std::string Escalate(const std::string& token, const std::string& execution_id) {
    envelope::v1::OpenTurnResponse opened;
    grpc::Status status = OpenTurn(token, execution_id, &opened);
    EXPECT_TRUE(status.ok()) << status.error_message();
    envelope::v1::InvokeToolRequest invoke;
    invoke.set_turn_id(opened.turn_id());
    protocol::v1::ToolCall* call = invoke.mutable_call();
    call->set_id("call-write");
    call->set_tool("files.create");
    call->set_trace_id("trace-host");
    EXPECT_TRUE(
        google::protobuf::util::JsonStringToMessage(
            R"({"path": "Workspace/summary.txt", "content": "milk"})", call->mutable_arguments())
            .ok());
    call->mutable_requested_at()->set_seconds(1786438801);
    envelope::v1::InvokeToolResponse invoked;
    EXPECT_TRUE(envelope_stub_->InvokeTool(As(token).get(), invoke, &invoked).ok());
    const protocol::v1::ProtocolError& error = invoked.result().error();
    EXPECT_EQ(error.code(), "no_matching_grant") << invoked.DebugString();
    std::string json;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(
                    error.details().fields().at("requiredAuthority").struct_value(), &json)
                    .ok());
    envelope::v1::FinishTurnRequest finish;
    finish.set_turn_id(opened.turn_id());
    finish.mutable_escalate()->set_reason("The assistant needs to write its summary.");
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    json, finish.mutable_escalate()->mutable_requested_authority())
                    .ok());
    envelope::v1::FinishTurnResponse finished;
    status = envelope_stub_->FinishTurn(As(token).get(), finish, &finished);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(finished.escalation_id().empty());
    return finished.escalation_id();
  }

  grpc::Status OpenTurn(const std::string& token, const std::string& execution_id,
                        envelope::v1::OpenTurnResponse* response) {
    return envelope_stub_->OpenTurn(As(token).get(), demo::TurnRequest(execution_id, "trace-host"),
                                    response);
  }
};

TEST_P(HostCredentialTest, AnIssuedHostCredentialOpensTurnsUntilRevoked) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  const std::string host = IssueCredential(R"pb(
    credential_id: "host-issued"
    principal { service_id: "host-issued" }
    role: CREDENTIAL_ROLE_HOST
    scope { namespaces: "world-demo" owners: "human:user-alice" })pb");
  const std::string elsewhere = IssueCredential(R"pb(
    credential_id: "host-elsewhere"
    principal { service_id: "host-elsewhere" }
    role: CREDENTIAL_ROLE_HOST
    scope { namespaces: "world-other" owners: "*" })pb");
  ASSERT_FALSE(HasFatalFailure());

  envelope::v1::OpenTurnResponse opened;
  grpc::Status status = OpenTurn(host, "exec-host-1", &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(opened.turn_id().empty());
  envelope::v1::GetTurnRequest get;
  get.set_turn_id(opened.turn_id());
  envelope::v1::GetTurnResponse got;
  status = envelope_stub_->GetTurn(As(host).get(), get, &got);
  EXPECT_TRUE(status.ok()) << status.error_message();

  // Its scope is honoured: a host of another namespace may not open the demo turn.
  envelope::v1::OpenTurnResponse refused;
  EXPECT_EQ(OpenTurn(elsewhere, "exec-host-2", &refused).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A token nobody issued is unauthenticated.
  EXPECT_EQ(OpenTurn("sos_" + std::string(64, '0'), "exec-host-3", &refused).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);

  // Revocation holds on the very next call, without a restart.
  gs::RevokeCredentialRequest revoke;
  revoke.set_credential_id("host-issued");
  gs::RevokeCredentialResponse revoked;
  ASSERT_TRUE(grants_->RevokeCredential(As(admin_token_).get(), revoke, &revoked).ok());
  EXPECT_EQ(OpenTurn(host, "exec-host-4", &refused).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST_P(HostCredentialTest, AHostReadsTheStatusOfItsScopesEscalationsOnly) {
  IssueGrant(demo::Grant());
  ASSERT_FALSE(HasFatalFailure());
  const std::string host = IssueCredential(R"pb(
    credential_id: "host-issued"
    principal { service_id: "host-issued" }
    role: CREDENTIAL_ROLE_HOST
    scope { namespaces: "world-demo" owners: "human:user-alice" })pb");
  const std::string other_owner = IssueCredential(R"pb(
    credential_id: "host-other-owner"
    principal { service_id: "host-other-owner" }
    role: CREDENTIAL_ROLE_HOST
    scope { namespaces: "world-demo" owners: "human:user-bob" })pb");
  const std::string elsewhere = IssueCredential(R"pb(
    credential_id: "host-elsewhere"
    principal { service_id: "host-elsewhere" }
    role: CREDENTIAL_ROLE_HOST
    scope { namespaces: "world-other" owners: "*" })pb");
  ASSERT_FALSE(HasFatalFailure());
  const std::string id = Escalate(host, "exec-host-esc");
  ASSERT_FALSE(HasFatalFailure());

  // Its own escalation: id, status, execution and namespace, nothing more.
  gs::GetEscalationRequest get;
  get.set_escalation_id(id);
  gs::GetEscalationResponse got;
  grpc::Status status = grants_->GetEscalation(As(host).get(), get, &got);
  ASSERT_TRUE(status.ok()) << status.error_message();
  gs::EscalationRecord expected;
  expected.set_escalation_id(id);
  expected.set_namespace_id("world-demo");
  expected.set_execution_id("exec-host-esc");
  expected.set_status(gs::ESCALATION_RECORD_STATUS_PENDING);
  EXPECT_EQ(got.escalation().SerializeAsString(), expected.SerializeAsString())
      << got.escalation().DebugString();
  gs::ListEscalationsRequest list;
  list.set_namespace_id("world-demo");
  gs::ListEscalationsResponse listed;
  status = grants_->ListEscalations(As(host).get(), list, &listed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(listed.escalations_size(), 1);
  EXPECT_EQ(listed.escalations(0).SerializeAsString(), expected.SerializeAsString());

  // A host of another owner sees nothing of it; one of another namespace is refused.
  EXPECT_EQ(grants_->GetEscalation(As(other_owner).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
  gs::ListEscalationsResponse none;
  ASSERT_TRUE(grants_->ListEscalations(As(other_owner).get(), list, &none).ok());
  EXPECT_EQ(none.escalations_size(), 0);
  EXPECT_EQ(grants_->GetEscalation(As(elsewhere).get(), get, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(grants_->ListEscalations(As(elsewhere).get(), list, &none).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // A host still may not resolve it.
  gs::ResolveEscalationRequest resolve;
  resolve.set_escalation_id(id);
  resolve.set_decision(gs::ESCALATION_DECISION_APPROVE);
  gs::ResolveEscalationResponse resolved;
  EXPECT_EQ(grants_->ResolveEscalation(As(host).get(), resolve, &resolved).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
}

INSTANTIATE_TEST_SUITE_P(Deployments, HostCredentialTest, ::testing::Bool(), e2e::DeploymentName);

}  // namespace
}  // namespace sharedos
