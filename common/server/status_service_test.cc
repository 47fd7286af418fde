#include "common/server/status_service.h"

#include <atomic>
#include <memory>
#include <string>

#include "common/server/auth.h"
#include "common/server/outbox_registry.h"
#include "common/server/server_runner.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/status/v1/status.grpc.pb.h"

namespace sharedos::common::server {
namespace {

namespace v1 = ::sharedos::status::v1;

TEST(DescribeStoreTest, APostgresPasswordNeverShows) {
  EXPECT_EQ(DescribeStore("/var/lib/sharedos/grants.db"),
            (std::pair<std::string, std::string>{"sqlite", "/var/lib/sharedos/grants.db"}));
  EXPECT_EQ(DescribeStore("postgresql://sharedos:hunter2@db:5432/grants").second,
            "postgresql://sharedos:****@db:5432/grants");
  EXPECT_EQ(DescribeStore("postgres://db/grants?sslmode=require&password=hunter2&x=1").second,
            "postgres://db/grants?sslmode=require&password=****&x=1");
  EXPECT_EQ(DescribeStore("postgresql://u:p%40ss@db/g?PASSWORD=hunter2").second,
            "postgresql://u:****@db/g?PASSWORD=****");
  EXPECT_EQ(DescribeStore("postgresql://sharedos@db/grants").second,
            "postgresql://sharedos@db/grants");
  EXPECT_EQ(DescribeStore("postgresql://sharedos@db/grants").first, "postgresql");
}

class StatusServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto authenticator = Authenticator::FromJson(
        R"({"credentials": [{"name": "ops", "role": "admin", "token_sha256": ")" +
        TokenDigestHex("admin-token") + R"("}, {"name": "svc", "role": "service",
        "token_sha256": ")" +
        TokenDigestHex("svc-token") + R"("}]})");
    ASSERT_TRUE(authenticator.ok()) << authenticator.status();
    authenticator_ = *std::move(authenticator);
    StatusInfo audit{"audit_svc", "postgresql://audit:hunter2@db/audit", [] {
                       return absl::StatusOr<std::pair<int64_t, std::string>>(
                           std::pair<int64_t, std::string>{42, std::string(64, 'a')});
                     }};
    status_ = std::make_unique<StatusService>(*authenticator_, std::vector<StatusInfo>{audit});
    ServerOptions options;
    options.dependencies = {{"store", [this](absl::Duration) {
                               return up_.load() ? absl::OkStatus()
                                                 : absl::UnavailableError("down");
                             }}};
    options.health_interval = absl::Seconds(2);
    options.clock = &clock_;
    auto runner = ServerRunner::Start(options, {status_.get()});
    ASSERT_TRUE(runner.ok()) << runner.status();
    runner_ = *std::move(runner);
    status_->Attach(runner_.get());
    stub_ = v1::Status::NewStub(
        grpc::CreateChannel(runner_->address(), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override { status_->Attach(nullptr); }

  grpc::Status Get(const std::string& token, v1::GetStatusResponse* response) {
    grpc::ClientContext context;
    if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
    return stub_->GetStatus(&context, v1::GetStatusRequest(), response);
  }

  std::atomic<bool> up_{true};
  // Drives the readiness rounds: one runs when the test moves it by the interval.
  SimulatedClock clock_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<StatusService> status_;
  std::unique_ptr<ServerRunner> runner_;
  std::unique_ptr<v1::Status::Stub> stub_;
};

TEST_F(StatusServiceTest, ShowsHealthDependenciesStoreAuditHeadAndOutboxes) {
  OutboxRegistration outbox("envelope", [] { return int64_t{7}; });
  v1::GetStatusResponse response;
  grpc::Status status = Get("admin-token", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.version(), kSharedosVersion);
  ASSERT_EQ(response.services_size(), 1);
  const v1::ServiceStatus& audit = response.services(0);
  EXPECT_EQ(audit.service(), "audit_svc");
  EXPECT_EQ(audit.health(), "SERVING");
  ASSERT_EQ(audit.dependencies_size(), 1);
  EXPECT_EQ(audit.dependencies(0).name(), "store");
  EXPECT_TRUE(audit.dependencies(0).up());
  EXPECT_EQ(audit.store().kind(), "postgresql");
  EXPECT_EQ(audit.store().location(), "postgresql://audit:****@db/audit");
  EXPECT_EQ(audit.audit_head().sequence(), 42);
  EXPECT_EQ(audit.audit_head().hash_prefix(), std::string(16, 'a'));
  ASSERT_EQ(response.outboxes_size(), 1);
  EXPECT_EQ(response.outboxes(0).writer(), "envelope");
  EXPECT_EQ(response.outboxes(0).depth(), 7);
  EXPECT_EQ(response.DebugString().find("hunter2"), std::string::npos);
}

TEST_F(StatusServiceTest, ADependencyDownShowsNotServingAndWhichOne) {
  up_.store(false);
  // One probing round: the loop is waiting, the interval passes, the loop waits again.
  clock_.AwaitWaiters(1);
  clock_.AdvanceTime(absl::Seconds(2));
  clock_.AwaitWaiters(1);
  v1::GetStatusResponse response;
  ASSERT_TRUE(Get("admin-token", &response).ok());
  EXPECT_EQ(response.services(0).health(), "NOT_SERVING");
  EXPECT_FALSE(response.services(0).dependencies(0).up());
  EXPECT_EQ(response.outboxes_size(), 0);  // the registration of the other test is gone
}

TEST_F(StatusServiceTest, OperatorsOnly) {
  v1::GetStatusResponse response;
  EXPECT_EQ(Get("svc-token", &response).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Get("", &response).error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace sharedos::common::server
