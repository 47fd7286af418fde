#include "common/server/service_main.h"

#include <pthread.h>
#include <signal.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

using ::sharedos::common::IsOkAndHolds;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

TEST(ServiceMainTest, FailPrintsTheBinaryAndTheErrorAndExitsTwo) {
  ::testing::internal::CaptureStderr();
  const int code = Fail("grantstore_svc", absl::InvalidArgumentError("--credentials: required"));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "grantstore_svc: --credentials: required\n");
  EXPECT_EQ(code, 2);
}

TEST(ServiceMainTest, DurabilityFlagsAreFullOrNormal) {
  EXPECT_THAT(IsFullDurability("durability", "full"), IsOkAndHolds(true));
  EXPECT_THAT(IsFullDurability("durability", "normal"), IsOkAndHolds(false));
  EXPECT_THAT(
      IsFullDurability("usage_durability", "fsync"),
      StatusIs(absl::StatusCode::kInvalidArgument, "--usage_durability: must be full or normal"));
}

TEST(ServiceMainTest, ABinaryReplacesTheHelpOfASharedFlag) {
  char name[] = "probe_svc";
  char* argv[] = {name};
  ParseServiceCommandLine(1, argv, {"probe_svc", "probe_svc: a probe.", {{"port", "Its port."}}});
  EXPECT_EQ(SharedFlagHelp("port", "The default."), "Its port.");
  EXPECT_EQ(SharedFlagHelp("host", "The default."), "The default.");
}

TEST(ServiceMainTest, AnUpstreamIsItsTargetAndItsToken) {
  EXPECT_THAT(ReadUpstream("grantstore", "", "/tokens/grantstore", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, "--grantstore_target: required"));
  EXPECT_THAT(ReadUpstream("grantstore", "127.0.0.1:1", "", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, "--grantstore_token_file: required"));
  EXPECT_THAT(
      ReadUpstream("grantstore", "127.0.0.1:1", "/nonexistent/token", {}),
      StatusIs(absl::StatusCode::kFailedPrecondition, "--grantstore_token_file: cannot be read"));
  const std::string token = std::string(std::getenv("TEST_TMPDIR")) + "/grantstore.token";
  std::ofstream(token) << "service-token\n";
  absl::StatusOr<Upstream> upstream = ReadUpstream("grantstore", "127.0.0.1:1", token, {});
  ASSERT_TRUE(upstream.ok()) << upstream.status();
  EXPECT_EQ(upstream->token, "service-token");
  EXPECT_NE(upstream->channel, nullptr);
}

TEST(ServiceMainTest, AnUpstreamOffLoopbackNeedsTls) {
  const std::string token = std::string(std::getenv("TEST_TMPDIR")) + "/grantstore2.token";
  std::ofstream(token) << "service-token\n";
  EXPECT_THAT(ReadUpstream("grantstore", "grantstore.internal:50052", token, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--grantstore_target: plaintext is allowed only on loopback; give "
                       "--tls_ca to reach grantstore.internal:50052"));
}

// Serves nothing over gRPC; one side listener; records that it was drained (and whether its side
// listener was still up then) and stopped.
class FakeServable : public Servable {
 public:
  std::vector<grpc::Service*> services() override {
    started.Notify();
    return {};
  }
  std::vector<std::pair<std::string, std::string>> side_listeners() const override {
    return {{"side", "http://127.0.0.1:9/side"}};
  }
  void StopSideListeners() override { stopped = true; }
  void Drain() override { drained_before_stop = !stopped; }

  absl::Notification started;
  bool stopped = false;
  bool drained_before_stop = false;
};

TEST(ServiceMainTest, ServesReportsAndStopsOnATerminationSignal) {
  TerminationSignals::Block();
  FakeServable servable;
  ::testing::internal::CaptureStdout();
  int code = -1;
  std::thread serving([&] { code = ServeUntilTerminated("probe_svc", ServerOptions{}, servable); });
  servable.started.WaitForNotification();
  // Directed at the serving thread, which waits for it (pending until it does).
  pthread_kill(serving.native_handle(), SIGTERM);
  serving.join();
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(servable.stopped);
  EXPECT_TRUE(servable.drained_before_stop) << "Drain runs first, while the listeners serve";
  EXPECT_THAT(out, HasSubstr("probe_svc listening on 127.0.0.1:"));
  EXPECT_THAT(out, HasSubstr("probe_svc side listening on http://127.0.0.1:9/side\n"));
}

TEST(ServiceMainTest, AServerThatCannotStartIsARefusedStartUp) {
  FakeServable servable;
  ServerOptions options;
  options.host = "10.1.2.3";  // plaintext off loopback
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(ServeUntilTerminated("probe_svc", options, servable), 2);
  EXPECT_THAT(
      ::testing::internal::GetCapturedStderr(),
      HasSubstr("probe_svc: --host: plaintext is allowed only on loopback; give --tls_cert"));
}

}  // namespace
}  // namespace sharedos::common::server
