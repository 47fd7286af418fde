// Health that means ready: a server whose dependency goes down reports NOT_SERVING within a
// bound, SERVING again when it is back; the probes of a store and of a called service.
#include "common/server/readiness.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "common/client/health_check.h"
#include "common/metrics/metrics.h"
#include "common/server/dependency_probes.h"
#include "common/server/server_runner.h"
#include "common/sqlite/database.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

using ::testing::HasSubstr;

client::HealthStatus Health(const std::string& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  absl::StatusOr<client::HealthStatus> health = client::CheckHealth(channel, "", absl::Seconds(2));
  return health.ok() ? *health : client::HealthStatus::kUnknown;
}

// Lets one probing round run: waits until the loop waits on `clock`, moves the clock by the
// interval, and waits until the loop waits again (the round is done).
void OneRound(SimulatedClock& clock, absl::Duration interval) {
  clock.AwaitWaiters(1);
  clock.AdvanceTime(interval);
  clock.AwaitWaiters(1);
}

class FakeDependency {
 public:
  DependencyCheck Check(std::string name) {
    return {std::move(name), [this](absl::Duration) {
              return up_.load() ? absl::OkStatus() : absl::UnavailableError("down");
            }};
  }
  void Set(bool up) { up_.store(up); }

 private:
  std::atomic<bool> up_{true};
};

TEST(ReadinessTest, NotServingWhileADependencyIsDownAndServingWhenItIsBack) {
  FakeDependency store;
  metrics::Metrics metrics;
  ServerOptions options;
  options.dependencies = {store.Check("store")};
  options.health_interval = absl::Seconds(2);
  options.metrics = &metrics;
  SimulatedClock clock;
  options.clock = &clock;
  auto runner = ServerRunner::Start(options, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  const std::string address = (*runner)->address();
  EXPECT_EQ(Health(address), client::HealthStatus::kServing);
  EXPECT_THAT(metrics.Serialize(), HasSubstr("sharedos_dependency_up{dependency=\"store\"} 1"));

  store.Set(false);
  EXPECT_EQ(Health(address), client::HealthStatus::kServing);  // until the next round
  OneRound(clock, options.health_interval);
  EXPECT_EQ(Health(address), client::HealthStatus::kNotServing);
  EXPECT_THAT(metrics.Serialize(), HasSubstr("sharedos_dependency_up{dependency=\"store\"} 0"));
  EXPECT_EQ((*runner)->dependencies(),
            (std::vector<std::pair<std::string, bool>>{{"store", false}}));

  store.Set(true);
  OneRound(clock, options.health_interval);
  EXPECT_EQ(Health(address), client::HealthStatus::kServing);
  EXPECT_THAT(metrics.Serialize(), HasSubstr("sharedos_dependency_up{dependency=\"store\"} 1"));
}

TEST(ReadinessTest, ADependencyDownAtStartIsNotServingFromTheFirstAnswer) {
  FakeDependency up, down;
  down.Set(false);
  ServerOptions options;
  options.dependencies = {up.Check("grantstore"), down.Check("audit")};
  options.health_interval = absl::Seconds(30);  // only the synchronous first round counts
  auto runner = ServerRunner::Start(options, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  EXPECT_EQ(Health((*runner)->address()), client::HealthStatus::kNotServing);
  EXPECT_EQ((*runner)->dependencies(),
            (std::vector<std::pair<std::string, bool>>{{"grantstore", true}, {"audit", false}}));
}

TEST(DependencyProbesTest, AServiceIsUpOnlyWhileItAnswersServing) {
  auto upstream = ServerRunner::Start(ServerOptions{}, {});
  ASSERT_TRUE(upstream.ok()) << upstream.status();
  DependencyCheck check = ServiceDependency(
      "grantstore",
      grpc::CreateChannel((*upstream)->address(), grpc::InsecureChannelCredentials()));
  EXPECT_EQ(check.name, "grantstore");
  EXPECT_TRUE(check.probe(absl::Seconds(1)).ok());

  // An upstream that is itself not ready.
  FakeDependency down;
  down.Set(false);
  ServerOptions not_ready;
  not_ready.dependencies = {down.Check("store")};
  auto unready = ServerRunner::Start(not_ready, {});
  ASSERT_TRUE(unready.ok()) << unready.status();
  EXPECT_EQ(ServiceDependency("authorizer", grpc::CreateChannel((*unready)->address(),
                                                                grpc::InsecureChannelCredentials()))
                .probe(absl::Seconds(1))
                .code(),
            absl::StatusCode::kUnavailable);

  (*upstream)->Shutdown();
  (*upstream)->Wait();
  const absl::Time start = absl::Now();
  EXPECT_FALSE(check.probe(absl::Milliseconds(300)).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));  // bounded by the timeout
}

TEST(DependencyProbesTest, ASqliteStoreIsUpWhileItsFileIsThereAndReadable) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/probe.db";
  DependencyCheck check = StoreDependency(path);
  EXPECT_EQ(check.name, "store");
  EXPECT_FALSE(check.probe(absl::Seconds(1)).ok());  // not created yet: never created by a probe
  {
    auto db = sqlite::Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Exec("CREATE TABLE t (x INTEGER)").ok());
  }
  EXPECT_TRUE(check.probe(absl::Seconds(1)).ok());
  ASSERT_EQ(std::rename(path.c_str(), (path + ".moved").c_str()), 0);
  EXPECT_FALSE(check.probe(absl::Seconds(1)).ok());
  ASSERT_EQ(std::rename((path + ".moved").c_str(), path.c_str()), 0);
  EXPECT_TRUE(check.probe(absl::Seconds(1)).ok());
}

TEST(DependencyProbesTest, AnUnreachablePostgresStoreIsDownWithinItsTimeout) {
  // Port 1 on loopback: nothing listens; the connection is refused at once.
  DependencyCheck check = StoreDependency("postgresql://sharedos@127.0.0.1:1/sharedos");
  const absl::Time start = absl::Now();
  EXPECT_EQ(check.probe(absl::Seconds(1)).code(), absl::StatusCode::kUnavailable);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

}  // namespace
}  // namespace sharedos::common::server
