// NewChannel over several servers: a target naming two replicas spreads calls over both
// (round_robin), or sends them all to the first that is up (pick_first, Replicas::kFirstUp), and
// calls go on through the one left when the other is gone.
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

// Replicas::kFirstUp (the audit writers' channel): every call goes to the first replica of the
// list while it is up, none to the second; with the first gone, every call goes to the second,
// and a second channel listing the same replicas in the same order makes the same choice.
TEST(ChannelTest, FirstUpSendsEveryCallToTheFirstReplicaUntilItIsGone) {
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
  auto channel =
      NewChannel(target, ChannelTls{}, "--audit_target", absl::ZeroDuration(), Replicas::kFirstUp);
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto other =
      NewChannel(target, ChannelTls{}, "--audit_target", absl::ZeroDuration(), Replicas::kFirstUp);
  ASSERT_TRUE(other.ok()) << other.status();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(CallOnce(*channel).ok());
    ASSERT_TRUE(CallOnce(*other).ok());
  }
  EXPECT_EQ(first_calls.load(), 40);
  EXPECT_EQ(second_calls.load(), 0);

  first.reset();
  int failed = 0;
  for (int i = 0; i < 20; ++i) {
    if (!CallOnce(*channel).ok()) ++failed;
  }
  EXPECT_LE(failed, 2);
  const int before = second_calls.load();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(CallOnce(*channel).ok());
    ASSERT_TRUE(CallOnce(*other).ok());
  }
  EXPECT_EQ(second_calls.load(), before + 40);
  EXPECT_EQ(first_calls.load(), 40);
}

// A server that was down for long is found again within the channel's bound, not after gRPC's
// own backoff (which reaches ~17 s between attempts after 30 s down, and 120 s at most): a service
// calling a restarted grant store answers again within seconds. With gRPC's bound this fails:
// the attempt after ~30 s of outage comes ~10-20 s after the server is back.
TEST(ChannelTest, AServerBackAfterALongOutageIsFoundWithinTheReconnectBound) {
  const auto ok = [](grpc::GenericCallbackServerContext&) { return grpc::Status::OK; };
  auto server = std::make_unique<ProbeServer>(ok);
  const int port = std::stoi(Port(server->address()));
  auto channel = NewChannel(server->address(), ChannelTls{}, "--grantstore_target");
  ASSERT_TRUE(channel.ok()) << channel.status();
  ASSERT_TRUE(CallOnce(*channel).ok());

  server.reset();
  // 30 s down, the channel trying to reconnect all along (round_robin reconnects on its own).
  const absl::Time back_at = absl::Now() + absl::Seconds(30);
  while (absl::Now() < back_at) {
    (void)(*channel)->WaitForConnected(std::chrono::system_clock::now() +
                                       std::chrono::milliseconds(500));
  }
  server = std::make_unique<ProbeServer>(ok, port);
  ASSERT_EQ(server->address(), absl::StrCat("127.0.0.1:", port));
  const absl::Time restarted = absl::Now();
  // The bound plus its 20 % jitter and a connect, with room for a loaded machine.
  EXPECT_TRUE(
      (*channel)->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)))
      << "not connected " << absl::Now() - restarted << " after the server came back";
  EXPECT_TRUE(CallOnce(*channel).ok());
}

}  // namespace
}  // namespace sharedos::common::client
