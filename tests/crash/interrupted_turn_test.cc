// Turns open at a crash (issue 22, ADR 0009): a turn running when its envelope is killed with
// SIGKILL is, once the envelope is started again, ended failed operation_aborted (fail closed):
// GetTurn answers that result, and the audit log holds exactly one turn.ended for its execution
// (outcome interrupted) — also after the envelope is killed and restarted again. Run against the
// four services as processes (the envelope killed alone) and against one sharedosd (killed,
// started again on the same data directory).
#include <signal.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "tests/crash/campaign.h"
#include "tests/testing/demo_world.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos::crash {
namespace {

namespace demo = ::sharedos::testing::demo;
namespace pb = ::sharedos::protocol::v1;
using ::sharedos::testing::FourProcessDeployment;
using ::sharedos::testing::SharedosdDeployment;
using Service = FourProcessDeployment::Service;

// Opens the demo turn `execution` as `host` and answers its id (running).
std::string OpenRunningTurn(const std::string& envelope, const std::string& host,
                            const std::string& execution) {
  auto stub = envelope::v1::Envelope::NewStub(Connect(envelope));
  envelope::v1::OpenTurnResponse opened;
  grpc::Status status = stub->OpenTurn(As(host, absl::Seconds(20)).get(),
                                       demo::TurnRequest(execution, "trace-crash"), &opened);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_FALSE(opened.has_result()) << opened.result().DebugString();
  return opened.turn_id();
}

// GetTurn of `turn_id` after the restart: ended failed operation_aborted, fail closed.
void ExpectInterrupted(const std::string& envelope, const std::string& host,
                       const std::string& turn_id, const std::string& execution) {
  auto stub = envelope::v1::Envelope::NewStub(Connect(envelope));
  envelope::v1::GetTurnRequest get;
  get.set_turn_id(turn_id);
  envelope::v1::GetTurnResponse got;
  grpc::Status status = stub->GetTurn(As(host, absl::Seconds(10)).get(), get, &got);
  ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  EXPECT_EQ(got.result().execution_id(), execution);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(got.result().error().code(), "operation_aborted");
  EXPECT_FALSE(got.result().error().retryable());
  const auto& details = got.result().error().details().fields();
  ASSERT_TRUE(details.contains("failClosed"));
  EXPECT_TRUE(details.at("failClosed").bool_value());
  EXPECT_TRUE(got.result().has_completed_at());
}

TEST(InterruptedTurnTest, AnEnvelopeKilledWithATurnRunningEndsItOnRestartOnce) {
  const std::string dir = MakeDir("four");
  const std::string files = dir + "/files";
  ASSERT_TRUE(demo::WriteWorkspace(files).ok());
  ASSERT_TRUE(sharedos::testing::WriteFile(dir + "/registry.textproto", demo::RegistryText()).ok());
  FourProcessDeployment::Options options;
  options.dir = dir;
  options.registry = dir + "/registry.textproto";
  options.files_root = files;
  auto started = FourProcessDeployment::Start(std::move(options));
  ASSERT_TRUE(started.ok()) << started.status();
  FourProcessDeployment& four = **started;
  IssueBoundedGrant(four.grantstore_address(), four.admin_token());
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  const std::string execution = "exec-crash-four";
  const std::string turn_id =
      OpenRunningTurn(four.envelope_address(), four.host_token(), execution);
  ASSERT_FALSE(turn_id.empty());
  ASSERT_TRUE(four.Kill(Service::kEnvelope).ok());
  absl::Status restarted = four.Restart(Service::kEnvelope);
  ASSERT_TRUE(restarted.ok()) << restarted;
  ExpectInterrupted(four.envelope_address(), four.host_token(), turn_id, execution);
  EXPECT_EQ(InterruptedTurnEndedCount(four.audit_address(), four.admin_token(), execution, 1), 1);

  // Killed again and restarted: nothing is ended twice.
  ASSERT_TRUE(four.Kill(Service::kEnvelope).ok());
  restarted = four.Restart(Service::kEnvelope);
  ASSERT_TRUE(restarted.ok()) << restarted;
  absl::SleepFor(absl::Seconds(3));  // time for a second record to be delivered, were there one
  EXPECT_EQ(InterruptedTurnEndedCount(four.audit_address(), four.admin_token(), execution, 1), 1);
  EXPECT_TRUE(four.StopAll().ok());
}

TEST(InterruptedTurnTest, SharedosdKilledWithATurnRunningEndsItOnRestartOnce) {
  const std::string dir = MakeDir("sharedosd");
  SharedosdDeployment::Options options;
  options.data_dir = dir + "/data";
  options.files_root = dir + "/files";
  ASSERT_TRUE(demo::WriteWorkspace(options.files_root).ok());
  auto start = [&]() -> std::unique_ptr<SharedosdDeployment> {
    auto started = SharedosdDeployment::Start(options);
    EXPECT_TRUE(started.ok()) << started.status();
    return started.ok() ? *std::move(started) : nullptr;
  };
  std::unique_ptr<SharedosdDeployment> sharedosd = start();
  ASSERT_NE(sharedosd, nullptr);
  const std::string admin = sharedosd->admin_token();
  const std::string host = sharedosd->host_token();
  IssueBoundedGrant(sharedosd->address(), admin);
  ASSERT_FALSE(::testing::Test::HasFatalFailure());

  const std::string execution = "exec-crash-sharedosd";
  const std::string turn_id = OpenRunningTurn(sharedosd->address(), host, execution);
  ASSERT_FALSE(turn_id.empty());
  ASSERT_EQ(kill(sharedosd->pid(), SIGKILL), 0);
  sharedosd.reset();  // reaps the killed process
  sharedosd = start();
  ASSERT_NE(sharedosd, nullptr);
  ExpectInterrupted(sharedosd->address(), host, turn_id, execution);
  EXPECT_EQ(InterruptedTurnEndedCount(sharedosd->address(), admin, execution, 1), 1);

  ASSERT_EQ(kill(sharedosd->pid(), SIGKILL), 0);
  sharedosd.reset();
  sharedosd = start();
  ASSERT_NE(sharedosd, nullptr);
  absl::SleepFor(absl::Seconds(3));
  EXPECT_EQ(InterruptedTurnEndedCount(sharedosd->address(), admin, execution, 1), 1);
  EXPECT_TRUE(sharedosd->Stop().ok());
}

}  // namespace
}  // namespace sharedos::crash
