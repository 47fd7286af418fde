#include "envelope_svc/server/turn_forwarder.h"

#include <map>
#include <string>
#include <vector>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::server {
namespace {

using ::testing::HasSubstr;

TEST(TurnForwarderTest, ReplicaNamesAreLowercaseDigitsAndDashesUpTo32) {
  EXPECT_TRUE(CheckReplicaName("r1", "--replica_name").ok());
  EXPECT_TRUE(CheckReplicaName("envelope-0", "--replica_name").ok());
  EXPECT_TRUE(CheckReplicaName(std::string(32, 'a'), "--replica_name").ok());
  for (const std::string& bad :
       std::vector<std::string>{"", "R1", "r.1", "r_1", "r 1", std::string(33, 'a')}) {
    absl::Status status = CheckReplicaName(bad, "--replica_name");
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(status.message()), HasSubstr("--replica_name")) << bad;
  }
}

TEST(TurnForwarderTest, TheOwnerIsTheNameBetweenTheTurnPrefixAndTheFirstDot) {
  EXPECT_EQ(TurnOwner("turn-r2.0b8f2c1e-1111-4222-8333-444455556666"), "r2");
  EXPECT_EQ(TurnOwner("turn-envelope-0.x"), "envelope-0");
  // One replica's turn ids name no owner.
  EXPECT_EQ(TurnOwner("turn-0b8f2c1e-1111-4222-8333-444455556666"), "");
  EXPECT_EQ(TurnOwner("r2.abc"), "");
  EXPECT_EQ(TurnOwner(""), "");
}

TEST(TurnForwarderTest, PeersAreNameEqualsAddressEachNameOnce) {
  auto peers = ParseReplicaPeers({"r1=127.0.0.1:1", "r2=127.0.0.1:2"}, "--replica_peers");
  ASSERT_TRUE(peers.ok()) << peers.status();
  EXPECT_EQ(peers->at("r2"), "127.0.0.1:2");
  for (const auto& bad :
       std::vector<std::vector<std::string>>{{"r1"}, {"r1="}, {"R1=x:1"}, {"r1=x:1", "r1=y:2"}}) {
    absl::StatusOr<std::map<std::string, std::string>> parsed =
        ParseReplicaPeers(bad, "--replica_peers");
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("--replica_peers"));
  }
}

TEST(TurnForwarderTest, RoutesOwnTurnsHereOthersOnceAndUnknownOwnersNowhere) {
  ReplicaOptions options;
  options.name = "r1";
  options.peers = {{"r1", "127.0.0.1:1"}, {"r2", "127.0.0.1:2"}};  // itself is ignored
  auto forwarder = TurnForwarder::Create(options);
  ASSERT_TRUE(forwarder.ok()) << forwarder.status();
  using Route = TurnForwarder::Route;
  EXPECT_EQ((*forwarder)->RouteOf("turn-r1.abc", false), Route::kLocal);
  EXPECT_EQ((*forwarder)->RouteOf("turn-abc", false), Route::kLocal);
  EXPECT_EQ((*forwarder)->RouteOf("turn-r2.abc", false), Route::kForward);
  // Already forwarded: never again (no loops).
  EXPECT_EQ((*forwarder)->RouteOf("turn-r2.abc", true), Route::kNotFound);
  EXPECT_EQ((*forwarder)->RouteOf("turn-r1.abc", true), Route::kLocal);
  EXPECT_EQ((*forwarder)->RouteOf("turn-r9.abc", false), Route::kNotFound);
}

TEST(TurnForwarderTest, CreateRefusesABadNameOrMcpUrl) {
  ReplicaOptions options;
  options.name = "Bad";
  EXPECT_EQ(TurnForwarder::Create(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.name = "r1";
  options.mcp_peers = {{"r2", "ftp://x/mcp"}};
  absl::Status status = TurnForwarder::Create(options).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("--replica_mcp_peers"));
}

}  // namespace
}  // namespace sharedos::envelope::server
