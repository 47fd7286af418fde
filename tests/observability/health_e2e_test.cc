// Health that means ready, and one trace across the four services, with real processes
// (tests/testing/deployment.h: audit_svc, grantstore_svc, authorizer_svc, envelope_svc; remote
// audit writers):
//   - a service reports NOT_SERVING while a dependency it needs is down (authorizer_svc without
//     grantstore_svc, and envelope_svc behind it; every writer without audit_svc), SERVING again
//     when it is back;
//   - grantstore_svc started while audit_svc is down (the order compose and Kubernetes may take)
//     starts, is NOT_SERVING with the anchor's reason (it has not compared its revision with the
//     log, docs/adr/0021) and serves once audit_svc is up, without a restart;
//   - a host's traceparent reaches every service: each one's JSON log names its trace id.
#include <sys/stat.h>

#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/client/health_check.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"
#include "sharedos/status/v1/status.grpc.pb.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"

namespace sharedos {
namespace {

using Service = testing::FourProcessDeployment::Service;
using common::client::HealthStatus;

constexpr char kTraceparent[] = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
constexpr char kTraceId[] = "0af7651916cd43dd8448eb211c80319c";

class HealthE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    testing::FourProcessDeployment::Options options;
    options.dir = dir_;
    options.registry = dir_ + "/registry.textproto";
    std::ofstream(options.registry) << testing::demo::RegistryText();
    options.files_root = dir_ + "/files";
    ASSERT_TRUE(testing::demo::WriteWorkspace(options.files_root).ok());
    auto started = testing::FourProcessDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    four_ = *std::move(started);
  }

  HealthStatus Health(Service service) {
    auto channel = grpc::CreateChannel(four_->address(service), grpc::InsecureChannelCredentials());
    absl::StatusOr<HealthStatus> health =
        common::client::CheckHealth(channel, "", absl::Seconds(2));
    return health.ok() ? *health : HealthStatus::kUnknown;
  }

  // Polls `service`'s health until it is `expected` or `bound` passes.
  bool Becomes(Service service, HealthStatus expected, absl::Duration bound) {
    const absl::Time deadline = absl::Now() + bound;
    while (absl::Now() < deadline) {
      if (Health(service) == expected) return true;
      absl::SleepFor(absl::Milliseconds(100));
    }
    return false;
  }

  // `service`'s output once it holds `needle` (its output is drained by a thread: a line written
  // before an answer may arrive after it), or as it is after 10 s.
  std::string OutputWith(Service service, const std::string& needle) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    std::string output = four_->output(service);
    while (output.find(needle) == std::string::npos && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(50));
      output = four_->output(service);
    }
    return output;
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return context;
  }

  std::string dir_;
  std::unique_ptr<testing::FourProcessDeployment> four_;
};

// --health_interval is 2 s: a change shows within one interval and one probe (1 s); the bounds
// leave room for a loaded machine and for gRPC's reconnection backoff.
constexpr absl::Duration kDownBound = absl::Seconds(15);
constexpr absl::Duration kBackBound = absl::Seconds(30);

TEST_F(HealthE2eTest, TheAuthorizerAndTheEnvelopeAreNotServingWhileTheGrantStoreIsDown) {
  for (Service service :
       {Service::kAudit, Service::kGrantstore, Service::kAuthorizer, Service::kEnvelope}) {
    EXPECT_TRUE(Becomes(service, HealthStatus::kServing, kDownBound));
  }
  ASSERT_TRUE(four_->Stop(Service::kGrantstore).ok());
  EXPECT_TRUE(Becomes(Service::kAuthorizer, HealthStatus::kNotServing, kDownBound));
  // The envelope decides through the authorizer: not ready either.
  EXPECT_TRUE(Becomes(Service::kEnvelope, HealthStatus::kNotServing, kDownBound));
  EXPECT_EQ(Health(Service::kAudit), HealthStatus::kServing);  // needs nothing of the grant store

  ASSERT_TRUE(four_->Restart(Service::kGrantstore).ok());
  EXPECT_TRUE(Becomes(Service::kAuthorizer, HealthStatus::kServing, kBackBound));
  EXPECT_TRUE(Becomes(Service::kEnvelope, HealthStatus::kServing, kBackBound));
}

TEST_F(HealthE2eTest, RemoteAuditWritersAreNotServingWhileAuditSvcIsDown) {
  ASSERT_TRUE(Becomes(Service::kGrantstore, HealthStatus::kServing, kDownBound));
  ASSERT_TRUE(four_->Stop(Service::kAudit).ok());
  for (Service writer : {Service::kGrantstore, Service::kAuthorizer, Service::kEnvelope}) {
    EXPECT_TRUE(Becomes(writer, HealthStatus::kNotServing, kDownBound));
  }
  ASSERT_TRUE(four_->Restart(Service::kAudit).ok());
  for (Service writer : {Service::kGrantstore, Service::kAuthorizer, Service::kEnvelope}) {
    EXPECT_TRUE(Becomes(writer, HealthStatus::kServing, kBackBound));
  }
}

TEST_F(HealthE2eTest, AGrantStoreStartedBeforeTheAuditLogWaitsForItVisiblyAndThenServes) {
  ASSERT_TRUE(Becomes(Service::kGrantstore, HealthStatus::kServing, kDownBound));
  ASSERT_TRUE(four_->Stop(Service::kGrantstore).ok());
  ASSERT_TRUE(four_->Stop(Service::kAudit).ok());
  // Starts (the first comparison is bounded) and listens, but serves nothing yet.
  ASSERT_TRUE(four_->Restart(Service::kGrantstore).ok());
  EXPECT_TRUE(Becomes(Service::kGrantstore, HealthStatus::kNotServing, kDownBound));
  auto status = status::v1::Status::NewStub(grpc::CreateChannel(
      four_->address(Service::kGrantstore), grpc::InsecureChannelCredentials()));
  status::v1::GetStatusResponse response;
  grpc::Status called =
      status->GetStatus(As(four_->admin_token()).get(), status::v1::GetStatusRequest(), &response);
  ASSERT_TRUE(called.ok()) << called.error_message();
  bool anchor_named = false;
  for (const status::v1::ServiceStatus& service : response.services()) {
    for (const status::v1::DependencyStatus& dependency : service.dependencies()) {
      if (dependency.name() != "anchor") continue;
      anchor_named = true;
      EXPECT_FALSE(dependency.up());
      EXPECT_NE(dependency.detail().find("audit log cannot be read"), std::string::npos)
          << dependency.detail();
    }
  }
  EXPECT_TRUE(anchor_named) << response.DebugString();
  // A call it would answer is refused while it has not compared itself with the log.
  auto grants = grantstore::v1::GrantStore::NewStub(
      grpc::CreateChannel(four_->grantstore_address(), grpc::InsecureChannelCredentials()));
  grantstore::v1::ListGrantsRequest list;
  list.mutable_filter()->set_namespace_id(testing::demo::Grant().namespace_id());
  grantstore::v1::ListGrantsResponse listed;
  EXPECT_EQ(grants->ListGrants(As(four_->admin_token()).get(), list, &listed).error_code(),
            grpc::StatusCode::UNAVAILABLE);

  // audit_svc back: the next probe compares and the grant store serves, no restart needed.
  ASSERT_TRUE(four_->Restart(Service::kAudit).ok());
  EXPECT_TRUE(Becomes(Service::kGrantstore, HealthStatus::kServing, kBackBound));
  grpc::Status answered = grants->ListGrants(As(four_->admin_token()).get(), list, &listed);
  EXPECT_TRUE(answered.ok()) << answered.error_message();
}

TEST_F(HealthE2eTest, AHostsTraceparentIsInTheLogOfEveryService) {
  auto grants = grantstore::v1::GrantStore::NewStub(
      grpc::CreateChannel(four_->grantstore_address(), grpc::InsecureChannelCredentials()));
  grantstore::v1::IssueGrantRequest issue;
  *issue.mutable_grant() = testing::demo::Grant();
  grantstore::v1::IssueGrantResponse issued;
  grpc::Status status = grants->IssueGrant(As(four_->admin_token()).get(), issue, &issued);
  ASSERT_TRUE(status.ok()) << status.error_message();

  auto envelope = envelope::v1::Envelope::NewStub(
      grpc::CreateChannel(four_->envelope_address(), grpc::InsecureChannelCredentials()));
  auto context = As(four_->host_token());
  context->AddMetadata("traceparent", kTraceparent);
  envelope::v1::OpenTurnResponse opened;
  status = envelope->OpenTurn(
      context.get(), testing::demo::TurnRequest("exec-trace-1", "trace-health-e2e"), &opened);
  ASSERT_TRUE(status.ok()) << status.error_message();

  const std::string field = absl::StrCat("\"w3c_trace_id\":\"", kTraceId, "\"");
  for (Service service :
       {Service::kEnvelope, Service::kAuthorizer, Service::kGrantstore, Service::kAudit}) {
    const std::string output = OutputWith(service, field);
    EXPECT_NE(output.find(field), std::string::npos)
        << "service " << static_cast<int>(service) << " never logged the trace:\n"
        << output;
  }
  // The envelope's turn line carries both: the SharedOS traceId and the W3C trace id.
  const std::string envelope_log = OutputWith(Service::kEnvelope, "\"event\":\"turn.opened\"");
  const size_t turn = envelope_log.find("\"event\":\"turn.opened\"");
  ASSERT_NE(turn, std::string::npos) << envelope_log;
  const std::string line = envelope_log.substr(turn, envelope_log.find('\n', turn) - turn);
  EXPECT_NE(line.find("\"trace_id\":\"trace-health-e2e\""), std::string::npos) << line;
  EXPECT_NE(line.find(field), std::string::npos) << line;
}

TEST_F(HealthE2eTest, AMalformedTraceparentIsNeverEchoedIntoALog) {
  auto envelope = envelope::v1::Envelope::NewStub(
      grpc::CreateChannel(four_->envelope_address(), grpc::InsecureChannelCredentials()));
  const std::string malformed = "00-" + std::string(200, 'f') + "-evil";
  auto context = As(four_->host_token());
  context->AddMetadata("traceparent", malformed);
  envelope::v1::OpenTurnResponse opened;
  // The turn's outcome does not matter (no grant was issued): only what was logged.
  envelope->OpenTurn(context.get(), testing::demo::TurnRequest("exec-trace-2", "trace-bad"),
                     &opened);
  const std::string output = OutputWith(Service::kEnvelope, "\"traceparent\":\"replaced\"");
  EXPECT_NE(output.find("\"traceparent\":\"replaced\""), std::string::npos) << output;
  EXPECT_EQ(output.find(std::string(200, 'f')), std::string::npos);
}

}  // namespace
}  // namespace sharedos
