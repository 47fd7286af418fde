// NewChannel over several servers: a target naming two replicas spreads calls over both
// (round_robin), and calls go on through the one left when the other is gone.
#include "common/client/channel.h"

#include <atomic>
#include <future>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/server/probe_server.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"

namespace sharedos::common::client {
namespace {

using server::testing::ProbeServer;

// One unary call of any method on `channel`, waiting for the channel to connect.
grpc::Status CallOnce(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_wait_for_ready(true);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1), response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/probe.Probe/Call", grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status status) { done.set_value(status); });
  return done.get_future().get();
}

std::string Port(const std::string& address) { return address.substr(address.rfind(':') + 1); }

TEST(ChannelTest, AListOfReplicasIsLoopbackOnlyWhenEveryAddressIs) {
  EXPECT_TRUE(IsLoopbackTarget("ipv4:127.0.0.1:1,127.0.0.1:2"));
  EXPECT_TRUE(IsLoopbackTarget("ipv6:[::1]:1,[::1]:2"));
  EXPECT_FALSE(IsLoopbackTarget("ipv4:127.0.0.1:1,10.0.0.1:2"));
  EXPECT_FALSE(IsLoopbackTarget("ipv4:10.0.0.1:1,127.0.0.1:2"));
  EXPECT_FALSE(IsLoopbackTarget("ipv4:127.0.0.1:1,"));
  EXPECT_FALSE(IsLoopbackTarget("ipv4:"));
  EXPECT_FALSE(IsLoopbackTarget("ipv4:127.0.0.1:1,dns:///audit:2"));
}

TEST(ChannelTest, PlaintextToAListWithAnyRemoteAddressIsRefused) {
  auto channel = NewChannel("ipv4:127.0.0.1:1,192.0.2.1:2", ChannelTls{}, "--audit_target");
  ASSERT_FALSE(channel.ok());
  EXPECT_EQ(channel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(channel.status().message()),
              ::testing::HasSubstr("--audit_target: plaintext is allowed only on loopback"));
}

TEST(ChannelTest, CallsAreSpreadOverEveryReplicaAndGoOnWhenOneIsGone) {
  std::atomic<int> first_calls{0}, second_calls{0};
  auto first = std::make_unique<ProbeServer>([&](grpc::GenericCallbackServerContext&) {
    ++first_calls;
    return grpc::Status::OK;
  });
  auto second = std::make_unique<ProbeServer>([&](grpc::GenericCallbackServerContext&) {
    ++second_calls;
    return grpc::Status::OK;
  });
  const std::string target = absl::StrCat("ipv4:127.0.0.1:", Port(first->address()),
                                          ",127.0.0.1:", Port(second->address()));
  auto channel = NewChannel(target, ChannelTls{}, "--grantstore_target");
  ASSERT_TRUE(channel.ok()) << channel.status();

  // round_robin connects to both; once both are READY every second call goes to each.
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(CallOnce(*channel).ok());
  EXPECT_GT(first_calls.load(), 0);
  EXPECT_GT(second_calls.load(), 0);
  EXPECT_EQ(first_calls.load() + second_calls.load(), 40);

  // The first replica gone: after at most a few calls that raced its shutdown, every call is
  // served by the second.
  first.reset();
  int failed = 0;
  for (int i = 0; i < 20; ++i) {
    if (!CallOnce(*channel).ok()) ++failed;
  }
  EXPECT_LE(failed, 2);
  const int before = second_calls.load();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(CallOnce(*channel).ok());
  EXPECT_EQ(second_calls.load(), before + 20);
}

}  // namespace
}  // namespace sharedos::common::client
