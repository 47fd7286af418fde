// BuildGrantStoreServer as both composition roots use it: a store on a SQLite file under
// TEST_TMPDIR, served on port 0; a grant issued over the wire is audited through the injected
// writer and read back through a second adapter and through the core.
#include "grantstore_svc/server/grantstore_server.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "audit_svc/client/fake_audit_writer.h"
#include "common/server/server_runner.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::server {
namespace {

using ::sharedos::common::server::Authenticator;
using ::sharedos::common::server::ServerOptions;
using ::sharedos::common::server::ServerRunner;
using ::sharedos::common::server::TokenDigestHex;

v1::IssueGrantRequest Issue() {
  v1::IssueGrantRequest request;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        grant {
          id: "grant-1"
          namespace_id: "world"
          subject { agent_id: "assistant" }
          issuer { human_user_id: "alice" }
          capabilities {
            resource { namespace: "files" path: "docs" }
            actions: "read"
            scope: SCOPE_DESCENDANTS
          }
          constraints {}
          issued_at { seconds: 1700000000 }
        }
      )pb",
      &request));
  return request;
}

class GrantStoreServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = Authenticator::FromJson(
        R"({"credentials": [
          {"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin") + R"("},
          {"name": "authorizer", "role": "service", "token_sha256": ")" +
        TokenDigestHex("svc") + R"("}]})");
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    GrantStoreServerOptions options;
    options.store.path = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    std::remove(options.store.path.c_str());
    options.store.usage_durability = storage::SqliteGrantStore::UsageDurability::kNormal;
    auto audit = std::make_unique<audit::client::FakeAuditWriter>();
    audit_ = audit.get();
    auto built = BuildGrantStoreServer({std::move(audit), *authenticator_, clock_}, options);
    ASSERT_TRUE(built.ok()) << built.status();
    server_ = *std::move(built);
    auto runner = ServerRunner::Start(ServerOptions{}, server_->services());
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    ASSERT_GT(runner_->port(), 0);
    stub_ = v1::GrantStore::NewStub(
        grpc::CreateChannel(runner_->address(), grpc::InsecureChannelCredentials()));
  }

  static std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1700000100)};
  std::unique_ptr<Authenticator> authenticator_;
  audit::client::FakeAuditWriter* audit_ = nullptr;
  std::unique_ptr<GrantStoreServer> server_;
  std::unique_ptr<ServerRunner> runner_;
  std::unique_ptr<v1::GrantStore::Stub> stub_;
};

TEST_F(GrantStoreServerTest, ServesTheStoreOnAFreePortAuditedByTheInjectedWriter) {
  v1::IssueGrantResponse issued;
  grpc::Status status = stub_->IssueGrant(As("admin").get(), Issue(), &issued);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(issued.revision(), 1);
  ASSERT_EQ(audit_->control_plane_events().size(), 1u);
  EXPECT_EQ(audit_->control_plane_events()[0].type(),
            audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);

  v1::GetGrantRequest get;
  get.set_namespace_id("world");
  get.set_grant_id("grant-1");
  auto read = server_->core().GetGrant(get);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->grant().id(), "grant-1");
}

TEST_F(GrantStoreServerTest, AnotherAdapterServesTheSameStore) {
  v1::IssueGrantResponse issued;
  ASSERT_TRUE(stub_->IssueGrant(As("admin").get(), Issue(), &issued).ok());
  std::unique_ptr<grpc::Service> second = server_->NewService();
  auto other = ServerRunner::Start(ServerOptions{}, {second.get()});
  ASSERT_TRUE(other.ok()) << other.status();
  auto stub = v1::GrantStore::NewStub((*other)->InProcessChannel());
  v1::LoadAuthorityRequest load;
  load.set_namespace_id("world");
  load.mutable_actor()->set_agent_id("assistant");
  load.mutable_authority()->set_human_user_id("alice");
  v1::LoadAuthorityResponse loaded;
  grpc::Status status = stub->LoadAuthority(As("svc").get(), load, &loaded);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(loaded.grants_size(), 1);
  EXPECT_EQ(loaded.grants(0).id(), "grant-1");
}

TEST(BuildGrantStoreServerTest, AFileThatCannotBeOpenedIsAnError) {
  auto authenticator = Authenticator::FromJson(R"({"credentials": []})");
  ASSERT_TRUE(authenticator.ok());
  GrantStoreServerOptions options;
  options.store.path = "/nonexistent/dir/grants.db";
  EXPECT_FALSE(BuildGrantStoreServer({std::make_unique<audit::client::FakeAuditWriter>(),
                                      **authenticator, common::RealClock()},
                                     options)
                   .ok());
}

}  // namespace
}  // namespace sharedos::grantstore::server
