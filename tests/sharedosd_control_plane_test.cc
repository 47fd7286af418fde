// sharedosd as a real process: an operator issues and revokes a grant over gRPC with the admin
// token the daemon minted; every mutation is in the one audit log, in order, and the chain
// verifies; a host token cannot touch the control plane, and nothing outside reaches the data
// plane.
#include <sys/stat.h>

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
  std::string admin_, host_;
};

TEST_F(SharedosdControlPlaneTest, GrantMutationsAreAuditedInOneVerifiableLog) {
  grantstore::v1::IssueGrantRequest issue;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        grant {
          id: "grant-read-workspace"
          namespace_id: "world-demo"
          subject { agent_id: "agent-assistant" }
          issuer { human_user_id: "user-alice" }
          capabilities {
            resource { namespace: "files" path: "Workspace" }
            actions: "read"
            scope: SCOPE_DESCENDANTS
          }
          constraints {}
          issued_at { seconds: 1786438800 }
        })pb",
      &issue));
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

// Inside sharedosd the services call each other in process (ADR 0014, T4): no service credential
// is minted, so the data plane — the authorizer, the grant store's reads and spends, the log's
// appends — answers nobody from outside, whatever credential is presented.
TEST_F(SharedosdControlPlaneTest, TheDataPlaneIsNobodysFromOutside) {
  struct stat none;
  EXPECT_NE(stat((data_ + "/service.token").c_str(), &none), 0);

  authorizer::v1::OpenTurnAuthorityRequest open;
  ASSERT_TRUE(
      google::protobuf::TextFormat::ParseFromString(R"pb(
                                                      turn_id: "turn-1"
                                                      context {
                                                        namespace_id: "world-demo"
                                                        actor { agent_id: "agent-assistant" }
                                                        authority { human_user_id: "user-alice" }
                                                        owner { human_user_id: "user-alice" }
                                                        purpose: "demo"
                                                        trace_id: "trace-1"
                                                        now { seconds: 1786438900 }
                                                      })pb",
                                                    &open));
  grantstore::v1::LoadAuthorityRequest load;
  load.set_namespace_id("world-demo");
  *load.mutable_actor() = open.context().actor();
  *load.mutable_authority() = open.context().authority();
  audit::v1::AppendRequest append;
  append.add_events()->set_id("forged");
  for (const std::string& token : {admin_, host_}) {
    authorizer::v1::OpenTurnAuthorityResponse lease;
    EXPECT_EQ(authorizer_->OpenTurnAuthority(As(token).get(), open, &lease).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
    grantstore::v1::LoadAuthorityResponse loaded;
    EXPECT_EQ(grants_->LoadAuthority(As(token).get(), load, &loaded).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
    audit::v1::AppendResponse appended;
    EXPECT_EQ(audit_->Append(As(token).get(), append, &appended).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
}

}  // namespace
}  // namespace sharedos
