// sharedosd as a real process: an operator issues and revokes a grant over gRPC with the admin
// token the daemon minted; every mutation is in the one audit log, in order, and the chain
// verifies; a host token cannot touch the control plane.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

using ::sharedos::testing::SharedosdDeployment;
using ::testing::ElementsAre;

class SharedosdControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = sharedos::testing::TempPath(
        std::string("sharedosd-") +
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    SharedosdDeployment::Options options;
    options.data_dir = data_;
    options.durability = "";  // sharedosd's default
    auto started = SharedosdDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    sharedosd_ = *std::move(started);
    auto channel = grpc::CreateChannel(sharedosd_->address(), grpc::InsecureChannelCredentials());
    grants_ = grantstore::v1::GrantStore::NewStub(channel);
    audit_ = audit::v1::AuditLog::NewStub(channel);
    authorizer_ = authorizer::v1::Authorizer::NewStub(channel);
    service_ = sharedosd_->service_token();
    admin_ = sharedosd_->admin_token();
    host_ = sharedosd_->host_token();
    ASSERT_FALSE(admin_.empty());
  }

  void TearDown() override {
    // Close our connections first: an idle client channel does not process the server's
    // GOAWAY, and the daemon would wait out its shutdown grace for it.
    grants_.reset();
    audit_.reset();
    authorizer_.reset();
    if (sharedosd_) {
      absl::Status stopped = sharedosd_->Stop();
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  std::string data_;
  std::unique_ptr<sharedos::testing::SharedosdDeployment> sharedosd_;
  std::unique_ptr<grantstore::v1::GrantStore::Stub> grants_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_;
  std::unique_ptr<authorizer::v1::Authorizer::Stub> authorizer_;
  std::string admin_, host_, service_;
};

TEST_F(SharedosdControlPlaneTest, GrantMutationsAreAuditedInOneVerifiableLog) {
  grantstore::v1::IssueGrantRequest issue;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    grant {
      id: "grant-read-workspace" namespace_id: "world-demo"
      subject { agent_id: "agent-assistant" } issuer { human_user_id: "user-alice" }
      capabilities { resource { namespace: "files" path: "Workspace" } actions: "read"
                     scope: SCOPE_DESCENDANTS }
      constraints {} issued_at { seconds: 1786438800 }
    })pb", &issue));
  grantstore::v1::IssueGrantResponse issued;
  grpc::Status status = grants_->IssueGrant(As(admin_).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(issued.revision(), 0);

  // A host may not issue authority.
  grantstore::v1::IssueGrantResponse refused;
  issue.mutable_grant()->set_id("grant-by-host");
  EXPECT_EQ(grants_->IssueGrant(As(host_).get(), issue, &refused).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  grantstore::v1::RevokeGrantRequest revoke;
  revoke.set_namespace_id("world-demo");
  revoke.set_grant_id("grant-read-workspace");
  grantstore::v1::RevokeGrantResponse revoked;
  status = grants_->RevokeGrant(As(admin_).get(), revoke, &revoked);
  ASSERT_TRUE(status.ok()) << status.error_message();

  audit::v1::QueryRequest query;
  query.mutable_filter()->set_namespace_id("world-demo");
  audit::v1::QueryResponse records;
  status = audit_->Query(As(admin_).get(), query, &records);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // Control-plane records, in the one chain, never as protocol "1" events (docs/adr/0008).
  std::vector<audit::v1::ControlPlaneEventType> types;
  for (const auto& record : records.records()) {
    EXPECT_FALSE(record.has_event());
    types.push_back(record.control_plane().type());
    EXPECT_EQ(record.control_plane().grant_id(), "grant-read-workspace");
  }
  EXPECT_THAT(types, ElementsAre(audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED,
                                 audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED));

  audit::v1::VerifyResponse verify;
  status = audit_->Verify(As(admin_).get(), audit::v1::VerifyRequest(), &verify);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(verify.ok()) << verify.detail();
  EXPECT_EQ(verify.checked(), 2);
}

TEST_F(SharedosdControlPlaneTest, TheAuthorizerDecidesFromTheStoreAndRecordsEveryDecision) {
  grantstore::v1::IssueGrantRequest issue;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    grant {
      id: "grant-read-workspace" namespace_id: "world-demo"
      subject { agent_id: "agent-assistant" } issuer { human_user_id: "user-alice" }
      capabilities { resource { namespace: "files" path: "Workspace" } actions: "read"
                     scope: SCOPE_DESCENDANTS }
      constraints {} issued_at { seconds: 1786438800 }
    })pb", &issue));
  grantstore::v1::IssueGrantResponse issued;
  ASSERT_TRUE(grants_->IssueGrant(As(admin_).get(), issue, &issued).ok());

  authorizer::v1::OpenTurnAuthorityRequest open;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    turn_id: "turn-1"
    context {
      namespace_id: "world-demo" actor { agent_id: "agent-assistant" }
      authority { human_user_id: "user-alice" } owner { human_user_id: "user-alice" }
      purpose: "demo" trace_id: "trace-1" now { seconds: 1786438900 }
    })pb", &open));
  authorizer::v1::OpenTurnAuthorityResponse lease;
  grpc::Status status = authorizer_->OpenTurnAuthority(As(service_).get(), open, &lease);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(lease.status(), authorizer::v1::LEASE_STATUS_RESOLVED);

  // A host may not call the authorizer directly.
  authorizer::v1::OpenTurnAuthorityResponse refused;
  EXPECT_EQ(authorizer_->OpenTurnAuthority(As(host_).get(), open, &refused).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);

  authorizer::v1::AuthorizeRequest read;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
    requirement { resource { namespace: "files" path: "Workspace" path: "notes.md" }
                  action: "read" }
    consume: true operation_id: "call-1" tool: "files.read")pb", &read));
  read.set_lease_id(lease.lease_id());
  authorizer::v1::AuthorizeResponse allowed;
  ASSERT_TRUE(authorizer_->Authorize(As(service_).get(), read, &allowed).ok());
  EXPECT_TRUE(allowed.decision().allowed());
  EXPECT_EQ(allowed.decision().matched_grant_id(), "grant-read-workspace");

  authorizer::v1::AuthorizeRequest write = read;
  write.mutable_requirement()->set_action("replace");
  write.set_operation_id("call-2");
  authorizer::v1::AuthorizeResponse denied;
  ASSERT_TRUE(authorizer_->Authorize(As(service_).get(), write, &denied).ok());
  EXPECT_FALSE(denied.decision().allowed());
  EXPECT_EQ(denied.decision().reason_code(), "no_matching_grant");
  EXPECT_EQ(denied.decision().required_authority().id().rfind("capreq-", 0), 0u);

  audit::v1::QueryRequest query;
  query.mutable_filter()->set_trace_id("trace-1");
  audit::v1::QueryResponse records;
  ASSERT_TRUE(audit_->Query(As(admin_).get(), query, &records).ok());
  std::vector<std::string> seen;
  for (const auto& record : records.records()) {
    const auto& event = record.event();
    seen.push_back(protocol::v1::AuditEventType_Name(event.type()) + "/" +
                   protocol::v1::AuditOutcome_Name(event.outcome()) + "/" + event.reason());
    EXPECT_EQ(event.authority_hash(), lease.authority_hash());
  }
  // Semantics §5.2: a decision record carries a reason on denials only.
  EXPECT_THAT(seen,
              ElementsAre("AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED/AUDIT_OUTCOME_SUCCEEDED/",
                          "AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED/AUDIT_OUTCOME_ALLOWED/",
                          "AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED/AUDIT_OUTCOME_DENIED/"
                          "no_matching_grant"));
}

}  // namespace
}  // namespace sharedos
