#include "common/client/rpc_client_metrics.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/client/channel.h"
#include "common/client/health_check.h"
#include "common/metrics/metrics.h"
#include "common/server/probe_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common::client {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A server that answers every call UNAVAILABLE: the client's latency is counted whatever the
// status.
server::testing::ProbeServer UnavailableServer() {
  return server::testing::ProbeServer([](grpc::GenericCallbackServerContext&) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "down");
  });
}

constexpr char kHealthCount[] =
    "sharedos_rpc_client_seconds_count{method=\"/grpc.health.v1.Health/Check\"}";

TEST(RpcClientMetricsTest, EveryCallOfAChannelIsTimedByItsMethod) {
  metrics::Metrics metrics;
  InstallClientMetrics(&metrics);
  server::testing::ProbeServer server = UnavailableServer();
  auto channel = NewChannel(server.address(), ChannelTls(), "--target");
  ASSERT_TRUE(channel.ok()) << channel.status();
  EXPECT_FALSE(CheckHealth(*channel, "", absl::Seconds(10)).ok());
  EXPECT_FALSE(CheckHealth(*channel, "", absl::Seconds(10)).ok());
  InstallClientMetrics(nullptr);
  EXPECT_THAT(metrics.Serialize(), HasSubstr(absl::StrCat(kHealthCount, " 2")));
}

TEST(RpcClientMetricsTest, AChannelMadeWithNoneInstalledRecordsNothing) {
  InstallClientMetrics(nullptr);
  server::testing::ProbeServer server = UnavailableServer();
  auto channel = NewChannel(server.address(), ChannelTls(), "--target");
  ASSERT_TRUE(channel.ok()) << channel.status();
  metrics::Metrics metrics;
  InstallClientMetrics(&metrics);  // After the channel was made: it keeps recording nothing.
  EXPECT_FALSE(CheckHealth(*channel, "", absl::Seconds(10)).ok());
  InstallClientMetrics(nullptr);
  EXPECT_THAT(metrics.Serialize(), Not(HasSubstr("/grpc.health.v1.Health/Check")));
}

TEST(RpcClientMetricsTest, MethodsPastTheBoundShareTheOtherSeries) {
  metrics::Metrics metrics;
  ClientLatencySeries series(metrics);
  for (size_t i = 0; i < ClientLatencySeries::kMaxMethods; ++i) {
    ASSERT_NE(series.For(absl::StrCat("/s/m", i)), nullptr);
  }
  prometheus::Histogram* first = series.For("/s/m0");
  prometheus::Histogram* past = series.For("/s/past-the-bound");
  EXPECT_EQ(series.For("/s/m0"), first);
  EXPECT_NE(past, first);
  EXPECT_EQ(series.For("/s/another-past-the-bound"), past);
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("method=\"other\""));
  EXPECT_THAT(text, Not(HasSubstr("past-the-bound")));
}

}  // namespace
}  // namespace sharedos::common::client
