// A host credential issued through the control plane runs turns at the envelope of both
// deployments — in the four-process one envelope_svc is its own process and looks the credential
// up at grantstore_svc (GrantStore.AuthenticateCredential) on every call. Its scope bounds the
// turns it may open; after RevokeCredential its next call is UNAUTHENTICATED without a restart.
#include <string>

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

INSTANTIATE_TEST_SUITE_P(Deployments, HostCredentialTest, ::testing::Bool(), e2e::DeploymentName);

}  // namespace
}  // namespace sharedos
