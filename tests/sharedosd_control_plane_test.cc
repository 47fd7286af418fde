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
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

using ::sharedos::testing::Process;
using ::testing::ElementsAre;

class SharedosdControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = sharedos::testing::TempPath("sharedosd-data");
    auto process = Process::Start("sharedosd/sharedosd", {"--port=0", "--data_dir=" + data_});
    ASSERT_TRUE(process.ok()) << process.status();
    process_ = std::make_unique<Process>(*std::move(process));
    auto address = process_->WaitForLine("sharedosd listening on ", absl::Seconds(30));
    ASSERT_TRUE(address.ok()) << address.status();
    auto channel = grpc::CreateChannel(*address, grpc::InsecureChannelCredentials());
    grants_ = grantstore::v1::GrantStore::NewStub(channel);
    audit_ = audit::v1::AuditLog::NewStub(channel);
    admin_ = sharedos::testing::ReadFirstLine(data_ + "/admin.token");
    host_ = sharedos::testing::ReadFirstLine(data_ + "/host.token");
    ASSERT_FALSE(admin_.empty());
  }

  void TearDown() override {
    // Close our connections first: an idle client channel does not process the server's
    // GOAWAY, and the daemon would wait out its shutdown grace for it.
    grants_.reset();
    audit_.reset();
    if (process_) {
      EXPECT_EQ(process_->Terminate(), 0) << process_->output();
    }
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  std::string data_;
  std::unique_ptr<Process> process_;
  std::unique_ptr<grantstore::v1::GrantStore::Stub> grants_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_;
  std::string admin_, host_;
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
            grpc::StatusCode::UNAUTHENTICATED);

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
  std::vector<protocol::v1::AuditEventType> types;
  for (const auto& record : records.records()) {
    types.push_back(record.event().type());
    EXPECT_EQ(record.event().grant_id(), "grant-read-workspace");
  }
  EXPECT_THAT(types, ElementsAre(protocol::v1::AUDIT_EVENT_TYPE_GRANT_ISSUED,
                                 protocol::v1::AUDIT_EVENT_TYPE_GRANT_REVOKED));

  audit::v1::VerifyResponse verify;
  status = audit_->Verify(As(admin_).get(), audit::v1::VerifyRequest(), &verify);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(verify.ok()) << verify.detail();
  EXPECT_EQ(verify.checked(), 2);
}

}  // namespace
}  // namespace sharedos
