#include "common/server/rpc_metrics.h"

#include <future>
#include <memory>
#include <string>

#include "common/metrics/metrics.h"
#include "common/server/server_runner.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"

namespace sharedos::common::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

grpc::Status Call(grpc::Channel& channel, const std::string& method) {
  grpc::GenericStub stub(std::shared_ptr<grpc::Channel>(&channel, [](grpc::Channel*) {}));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  return done.get_future().get();
}

TEST(RpcMetricsTest, CountsEachMethodByCodeAndUnknownMethodsAsOther) {
  metrics::Metrics metrics;
  ServerOptions options;
  options.metrics = &metrics;
  auto runner = ServerRunner::Start(options, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel((*runner)->address(), grpc::InsecureChannelCredentials());
  ASSERT_TRUE(Call(*channel, "/grpc.health.v1.Health/Check").ok());
  ASSERT_TRUE(Call(*channel, "/grpc.health.v1.Health/Check").ok());
  EXPECT_EQ(Call(*channel, "/made.up.Service/secret-turn-id-123").error_code(),
            grpc::StatusCode::UNIMPLEMENTED);

  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("sharedos_rpc_server_handled_total{code=\"OK\",method=\"/"
                              "grpc.health.v1.Health/Check\"} 2"));
  EXPECT_THAT(text, HasSubstr("sharedos_rpc_server_seconds_count{method=\"/grpc.health.v1.Health/"
                              "Check\"} 2"));
  EXPECT_THAT(text, Not(HasSubstr("secret-turn-id-123")));
  (*runner)->Shutdown();
}

TEST(RpcMetricsTest, MethodsBeyondTheCapShareOther) {
  metrics::Metrics metrics;
  RpcMetricsInterceptorFactory factory(metrics);
  const auto* other = factory.SeriesFor("/x/other-by-code", /*unimplemented=*/true);
  for (size_t i = 0; i <= RpcMetricsInterceptorFactory::kMaxMethods; ++i) {
    factory.SeriesFor("/svc/m" + std::to_string(i), false);
  }
  EXPECT_EQ(factory.SeriesFor("/svc/one-too-many", false), other);
  EXPECT_NE(factory.SeriesFor("/svc/m0", false), other);
}

}  // namespace
}  // namespace sharedos::common::server
