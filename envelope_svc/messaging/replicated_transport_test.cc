#include "envelope_svc/messaging/replicated_transport.h"

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/messaging/test_messages.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::messaging {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::AnyOf;
using ::testing::Eq;
using ::testing::SizeIs;

using testing::Agent;
using testing::Message;

absl::Time Soon() { return absl::Now() + absl::Seconds(5); }

// The sending turns' owner.
pb::Address Owner() { return testing::Human("user-alice"); }

// What a peer's MessageTransport service does for its caller: the peer's own built-in
// transport, or UNAVAILABLE while the peer is down.
class PeerLink final : public MessageTransportInterface {
 public:
  explicit PeerLink(LocalMessageTransport& peer) : peer_(peer) {}
  absl::StatusOr<v1::MessageDeliveryResult> Send(absl::string_view namespace_id,
                                                 const pb::Address& owner,
                                                 const pb::MessageEnvelope& message,
                                                 absl::Time deadline) override {
    ++calls;
    if (down) return absl::UnavailableError("MessageTransport.Send failed: UNAVAILABLE");
    return peer_.Send(namespace_id, owner, message, deadline);
  }
  absl::StatusOr<pb::MessageEnvelope> AwaitReply(absl::string_view namespace_id,
                                                 const pb::MessageEnvelope& request,
                                                 absl::Time deadline) override {
    ++calls;
    if (down) return absl::UnavailableError("MessageTransport.AwaitReply failed: UNAVAILABLE");
    return peer_.AwaitReply(namespace_id, request, deadline);
  }
  std::atomic<bool> down{false};
  std::atomic<int> calls{0};

 private:
  LocalMessageTransport& peer_;
};

// Two replicas, r1 and r2, each with its built-in transport and a link to the other's.
class TwoReplicasTest : public ::testing::Test {
 protected:
  TwoReplicasTest() {
    auto to_r2 = std::make_unique<PeerLink>(local_r2_);
    auto to_r1 = std::make_unique<PeerLink>(local_r1_);
    link_to_r2_ = to_r2.get();
    link_to_r1_ = to_r1.get();
    std::map<std::string, std::unique_ptr<MessageTransportInterface>> peers_of_r1;
    peers_of_r1["r2"] = std::move(to_r2);
    std::map<std::string, std::unique_ptr<MessageTransportInterface>> peers_of_r2;
    peers_of_r2["r1"] = std::move(to_r1);
    r1_ = std::make_unique<ReplicatedMessageTransport>("r1", local_r1_, std::move(peers_of_r1));
    r2_ = std::make_unique<ReplicatedMessageTransport>("r2", local_r2_, std::move(peers_of_r2));
  }

  // A world whose home is `home`.
  std::string WorldHomedAt(const std::string& home) const {
    for (int i = 0;; ++i) {
      std::string world = absl::StrCat("world-", i);
      if (r1_->HomeOf(world) == home) return world;
    }
  }

  LocalMessageTransport local_r1_;
  LocalMessageTransport local_r2_;
  PeerLink* link_to_r2_ = nullptr;
  PeerLink* link_to_r1_ = nullptr;
  std::unique_ptr<ReplicatedMessageTransport> r1_;
  std::unique_ptr<ReplicatedMessageTransport> r2_;
};

TEST(WorldHomeTest, IsOneOfTheReplicasTheSameWhateverTheOrderAndSpreadsWorlds) {
  const std::vector<std::string> forward = {"envelope-0", "envelope-1", "envelope-2"};
  const std::vector<std::string> backward = {"envelope-2", "envelope-1", "envelope-0"};
  std::map<std::string, int> homed;
  for (int i = 0; i < 300; ++i) {
    const std::string world = absl::StrCat("tenant-", i);
    const std::string home = WorldHome(world, forward);
    EXPECT_THAT(home, AnyOf(Eq("envelope-0"), Eq("envelope-1"), Eq("envelope-2")));
    EXPECT_EQ(WorldHome(world, backward), home) << world;
    ++homed[home];
  }
  ASSERT_THAT(homed, SizeIs(3));
  for (const auto& [replica, worlds] : homed) EXPECT_GT(worlds, 70) << replica;
}

TEST(WorldHomeTest, OnlyTheWorldsOfAReplicaThatLeavesMove) {
  const std::vector<std::string> three = {"a", "b", "c"};
  const std::vector<std::string> two = {"a", "b"};
  for (int i = 0; i < 200; ++i) {
    const std::string world = absl::StrCat("w", i);
    const std::string before = WorldHome(world, three);
    if (before != "c") {
      EXPECT_EQ(WorldHome(world, two), before) << world;
    }
  }
}

TEST(WorldHomeTest, IsAFixedFunctionOfItsInputs) {
  // The same on every replica and every build: a changed hash would split a deployment whose
  // replicas run two versions. Pinned on values computed once.
  EXPECT_EQ(WorldHome("acme", {"r1", "r2"}), "r2");
  EXPECT_EQ(WorldHome("conformance", {"r1", "r2"}), "r2");
  EXPECT_EQ(WorldHome("tenant-1", {"envelope-0", "envelope-1"}), "envelope-1");
  EXPECT_EQ(WorldHome("world-a", {"r1", "r2"}), "r2");
  EXPECT_EQ(WorldHome("world-a", {"envelope-0", "envelope-1"}), "envelope-0");
  EXPECT_EQ(WorldHome("anything", {"only"}), "only");
}

TEST_F(TwoReplicasTest, BothReplicasAgreeOnEveryWorldsHome) {
  for (int i = 0; i < 50; ++i) {
    const std::string world = absl::StrCat("world-", i);
    EXPECT_EQ(r1_->HomeOf(world), r2_->HomeOf(world));
  }
}

TEST_F(TwoReplicasTest, AMessageSentThroughEitherReplicaWaitsInTheHomesInbox) {
  const std::string world = WorldHomedAt("r2");
  ASSERT_EQ(r1_->Send(world, Owner(), Message("m1", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  ASSERT_EQ(r2_->Send(world, Owner(), Message("m2", "carol", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_EQ(link_to_r2_->calls, 1);
  EXPECT_EQ(link_to_r1_->calls, 0);
  EXPECT_THAT(local_r1_.Receive(world, Agent("bob"), {"*"}, 10, absl::Now()), SizeIs(0));
  EXPECT_THAT(local_r2_.Receive(world, Agent("bob"), {"*"}, 10, absl::Now()), SizeIs(2));
}

TEST_F(TwoReplicasTest, AReplySentThroughTheOtherReplicaReachesTheWaitingRequest) {
  for (const std::string home : {"r1", "r2"}) {
    const std::string world = WorldHomedAt(home);
    const pb::MessageEnvelope request = Message(absl::StrCat("req-", home), "alice", "bob");
    // The requesting turn's replica is r1, the answering turn's r2, whichever homes the world.
    ASSERT_EQ(r1_->Send(world, Owner(), request, Soon())->status(),
              v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
    std::thread answerer([&] {
      LocalMessageTransport& at_home = home == "r1" ? local_r1_ : local_r2_;
      std::vector<LocalMessageTransport::Received> inbox =
          at_home.Receive(world, Agent("bob"), {"*"}, 1, Soon());
      ASSERT_THAT(inbox, SizeIs(1));
      absl::StatusOr<v1::MessageDeliveryResult> receipt = r2_->Send(
          world, Owner(), Message("reply", "bob", "alice", inbox[0].message.id()), Soon());
      ASSERT_THAT(receipt.status(), IsOk());
      EXPECT_EQ(receipt->status(), v1::MESSAGE_DELIVERY_STATUS_DELIVERED);
    });
    absl::StatusOr<pb::MessageEnvelope> reply = r1_->AwaitReply(world, request, Soon());
    answerer.join();
    ASSERT_THAT(reply.status(), IsOk()) << home;
    EXPECT_EQ(reply->reply_to(), request.id());
  }
}

TEST_F(TwoReplicasTest, ARevocationAtTheHomeRefusesTheNextDispatchThroughEitherReplica) {
  const std::string world = WorldHomedAt("r1");
  ASSERT_EQ(r2_->Send(world, Owner(), Message("m1", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  ASSERT_TRUE(*local_r1_.RevokeRoute(world, "human:user-alice", Agent("alice"), Agent("bob")));
  for (ReplicatedMessageTransport* through : {r1_.get(), r2_.get()}) {
    absl::StatusOr<v1::MessageDeliveryResult> refused =
        through->Send(world, Owner(), Message("m2", "alice", "bob"), Soon());
    ASSERT_THAT(refused.status(), IsOk());
    EXPECT_EQ(refused->status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
    EXPECT_EQ(refused->error().code(), kRouteLeaseRevoked);
  }
}

TEST_F(TwoReplicasTest, AHomeThatCannotBeReachedFailsAndNothingLandsElsewhere) {
  const std::string world = WorldHomedAt("r2");
  link_to_r2_->down = true;
  EXPECT_THAT(r1_->Send(world, Owner(), Message("m1", "alice", "bob"), Soon()).status(),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(r1_->AwaitReply(world, Message("m1", "alice", "bob"), Soon()).status(),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(local_r1_.Receive(world, Agent("bob"), {"*"}, 10, absl::Now()), SizeIs(0));
  EXPECT_THAT(local_r2_.Receive(world, Agent("bob"), {"*"}, 10, absl::Now()), SizeIs(0));
  // A world r1 homes is not affected.
  EXPECT_EQ(r1_->Send(WorldHomedAt("r1"), Owner(), Message("m2", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
}

}  // namespace
}  // namespace sharedos::envelope::messaging
