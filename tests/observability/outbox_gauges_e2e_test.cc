// The audit outbox gauges move with a real outbox: the four services as processes, writers in
// local mode (every record through the outbox), envelope_svc with --metrics_port. With audit_svc
// stopped a turn's records wait: sharedos_audit_outbox_depth{writer="envelope"} and
// sharedos.status.v1 show them; with audit_svc back they are delivered and the depth is 0 again.
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/status/v1/status.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"

namespace sharedos {
namespace {

using Service = testing::FourProcessDeployment::Service;

constexpr char kDepth[] = "sharedos_audit_outbox_depth{writer=\"envelope\"} ";

std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

class OutboxGaugesE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A directory of this test's own (each test starts its own deployment).
    const std::string dir =
        absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
    testing::FourProcessDeployment::Options options;
    options.dir = dir;
    options.registry = dir + "/registry.textproto";
    std::ofstream(options.registry) << testing::demo::RegistryText();
    options.files_root = dir + "/files";
    ASSERT_TRUE(testing::demo::WriteWorkspace(options.files_root).ok());
    options.audit_mode = "local";
    options.envelope_args = {"--metrics_port=0"};
    auto started = testing::FourProcessDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    four_ = *std::move(started);
    const std::string output = four_->output(Service::kEnvelope);
    const std::string line = "envelope_svc metrics on http://127.0.0.1:";
    const size_t at = output.find(line);
    ASSERT_NE(at, std::string::npos) << output;
    ASSERT_TRUE(absl::SimpleAtoi(
        output.substr(at + line.size(), output.find('/', at + line.size()) - at - line.size()),
        &metrics_port_));
  }

  // The envelope's outbox depth as /metrics answers it (-1: not found).
  double Depth() {
    httplib::Client client("127.0.0.1", metrics_port_);
    httplib::Result result = client.Get("/metrics");
    if (!result || result->status != 200) return -1;
    const size_t at = result->body.find(kDepth);
    if (at == std::string::npos) return -1;
    const size_t from = at + sizeof(kDepth) - 1;
    double depth = -1;
    if (!absl::SimpleAtod(result->body.substr(from, result->body.find('\n', from) - from),
                          &depth)) {
      return -1;
    }
    return depth;
  }

  // Polls Depth() until `done` holds or 30 s pass; returns the last value.
  template <typename Done>
  double DepthUntil(Done done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    double depth = Depth();
    while (!done(depth) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(100));
      depth = Depth();
    }
    return depth;
  }

  int metrics_port_ = 0;
  std::unique_ptr<testing::FourProcessDeployment> four_;
};

TEST_F(OutboxGaugesE2eTest, RecordsWaitingForAuditSvcShowAndLeave) {
  auto grants = grantstore::v1::GrantStore::NewStub(
      grpc::CreateChannel(four_->grantstore_address(), grpc::InsecureChannelCredentials()));
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = testing::demo::Grant();
  grantstore::v1::IssueGrantResponse issued;
  grpc::Status status = grants->IssueGrant(As(four_->admin_token()).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(DepthUntil([](double d) { return d == 0; }), 0);

  ASSERT_TRUE(four_->Stop(Service::kAudit).ok());
  auto envelope = envelope::v1::Envelope::NewStub(
      grpc::CreateChannel(four_->envelope_address(), grpc::InsecureChannelCredentials()));
  envelope::v1::OpenTurnResponse opened;
  status = envelope->OpenTurn(As(four_->host_token()).get(),
                              testing::demo::TurnRequest("exec-outbox-1", "trace-outbox"), &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const double waiting = DepthUntil([](double d) { return d >= 1; });
  EXPECT_GE(waiting, 1);

  auto status_stub = status::v1::Status::NewStub(
      grpc::CreateChannel(four_->envelope_address(), grpc::InsecureChannelCredentials()));
  status::v1::GetStatusResponse report;
  status = status_stub->GetStatus(As(four_->admin_token()).get(), status::v1::GetStatusRequest(),
                                  &report);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(report.outboxes_size(), 1);
  EXPECT_EQ(report.outboxes(0).writer(), "envelope");
  EXPECT_GE(report.outboxes(0).depth(), 1);

  ASSERT_TRUE(four_->Restart(Service::kAudit).ok());
  EXPECT_EQ(DepthUntil([](double d) { return d == 0; }), 0);
}

// The envelope's calls to its dependencies are timed by the method called
// (sharedos_rpc_client_seconds, common/client/rpc_client_metrics.h): opening a turn calls the
// authorizer.
TEST_F(OutboxGaugesE2eTest, CallsToDependenciesAreTimedByMethod) {
  auto grants = grantstore::v1::GrantStore::NewStub(
      grpc::CreateChannel(four_->grantstore_address(), grpc::InsecureChannelCredentials()));
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = testing::demo::Grant();
  grantstore::v1::IssueGrantResponse issued;
  grpc::Status status = grants->IssueGrant(As(four_->admin_token()).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message();
  auto envelope = envelope::v1::Envelope::NewStub(
      grpc::CreateChannel(four_->envelope_address(), grpc::InsecureChannelCredentials()));
  envelope::v1::OpenTurnResponse opened;
  status = envelope->OpenTurn(As(four_->host_token()).get(),
                              testing::demo::TurnRequest("exec-client-1", "trace-client"), &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();

  httplib::Client client("127.0.0.1", metrics_port_);
  httplib::Result result = client.Get("/metrics");
  ASSERT_TRUE(result && result->status == 200);
  EXPECT_THAT(
      result->body,
      ::testing::HasSubstr(
          "sharedos_rpc_client_seconds_count{method=\"/sharedos.authorizer.v1.Authorizer/"));
  // Bounded labels: a method, never the turn's ids.
  EXPECT_THAT(result->body, ::testing::Not(::testing::HasSubstr("exec-client-1")));
}

}  // namespace
}  // namespace sharedos
