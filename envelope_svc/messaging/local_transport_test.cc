#include "envelope_svc/messaging/local_transport.h"

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
using ::testing::HasSubstr;
using ::testing::SizeIs;

using testing::Agent;
using testing::Human;
using testing::Message;

absl::Time Soon() { return absl::Now() + absl::Seconds(5); }

const LocalMessageTransport::Owners kEveryOwner = {"*"};
const pb::Address kAlice = Human("user-alice");
const pb::Address kBob = Human("user-bob");

TEST(LocalMessageTransportTest, AcceptsIntoTheReceiversInboxOfItsWorld) {
  LocalMessageTransport transport;
  absl::StatusOr<v1::MessageDeliveryResult> receipt =
      transport.Send("world-a", kAlice, Message("m1", "alice", "bob"), Soon());
  ASSERT_THAT(receipt.status(), IsOk());
  EXPECT_EQ(receipt->status(), v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_EQ(receipt->message_id(), "m1");
  EXPECT_THAT(transport.Receive("world-b", Agent("bob"), kEveryOwner, 10, absl::Now()), SizeIs(0));
  std::vector<LocalMessageTransport::Received> inbox =
      transport.Receive("world-a", Agent("bob"), kEveryOwner, 10, Soon());
  ASSERT_THAT(inbox, SizeIs(1));
  EXPECT_EQ(inbox[0].message.id(), "m1");
  EXPECT_EQ(inbox[0].owner, "human:user-alice");
  EXPECT_THAT(transport.Receive("world-a", Agent("bob"), kEveryOwner, 10, absl::Now()), SizeIs(0));
}

TEST(LocalMessageTransportTest, AHostTakesOnlyTheMessagesOfTheOwnersItServes) {
  LocalMessageTransport transport;
  ASSERT_THAT(transport.Send("w", kAlice, Message("alices", "helper", "bob"), Soon()).status(),
              IsOk());
  ASSERT_THAT(transport.Send("w", kBob, Message("bobs", "helper", "bob"), Soon()).status(), IsOk());
  // Bob's host sees bob's message only; alice's stays in the inbox for her host.
  std::vector<LocalMessageTransport::Received> bobs =
      transport.Receive("w", Agent("bob"), {"human:user-bob"}, 10, absl::Now());
  ASSERT_THAT(bobs, SizeIs(1));
  EXPECT_EQ(bobs[0].message.id(), "bobs");
  EXPECT_THAT(transport.Receive("w", Agent("bob"), {"human:user-bob"}, 10, absl::Now()), SizeIs(0));
  std::vector<LocalMessageTransport::Received> alices =
      transport.Receive("w", Agent("bob"), {"human:user-alice"}, 10, absl::Now());
  ASSERT_THAT(alices, SizeIs(1));
  EXPECT_EQ(alices[0].message.id(), "alices");
}

TEST(LocalMessageTransportTest, ARevokedRouteLeaseRefusesTheNextDispatch) {
  LocalMessageTransport transport;
  ASSERT_EQ(transport.Send("w", kAlice, Message("m1", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_THAT(transport.RevokeRoute("w", "human:user-alice", Agent("alice"), Agent("bob")),
              ::sharedos::common::IsOkAndHolds(true));
  absl::StatusOr<v1::MessageDeliveryResult> refused =
      transport.Send("w", kAlice, Message("m2", "alice", "bob"), Soon());
  ASSERT_THAT(refused.status(), IsOk());
  EXPECT_EQ(refused->status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(refused->error().code(), "route_lease_revoked");
  EXPECT_EQ(refused->message_id(), "m2");
  // Only that route: the reverse direction and other receivers keep their leases.
  EXPECT_EQ(transport.Send("w", kAlice, Message("m3", "bob", "alice"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_EQ(transport.Send("w", kAlice, Message("m4", "alice", "carol"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
}

TEST(LocalMessageTransportTest, ARevocationIsOneOwnersOrEveryOwnersAsAsked) {
  LocalMessageTransport transport;
  ASSERT_THAT(transport.Send("w", kAlice, Message("m1", "alice", "bob"), Soon()).status(), IsOk());
  // Bob's host revokes bob's route: alice's lease on the same agents stands.
  EXPECT_THAT(transport.RevokeRoute("w", "human:user-bob", Agent("alice"), Agent("bob")),
              ::sharedos::common::IsOkAndHolds(false));
  EXPECT_EQ(transport.Send("w", kAlice, Message("m2", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_EQ(transport.Send("w", kBob, Message("m3", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_DENIED);
  // A host of every owner ends every owner's lease on the route.
  EXPECT_THAT(transport.RevokeRoute("w", "*", Agent("alice"), Agent("bob")),
              ::sharedos::common::IsOkAndHolds(true));
  EXPECT_EQ(transport.Send("w", kAlice, Message("m4", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_DENIED);
}

TEST(LocalMessageTransportTest, RevocationsAreBoundedPerOwnerAndNeverDropped) {
  LocalMessageTransport transport;
  for (size_t i = 0; i < LocalMessageTransport::kMaxRevokedPerOwner; ++i) {
    ASSERT_THAT(
        transport.RevokeRoute("w", "human:user-bob", Agent(absl::StrCat("s", i)), Agent("bob")),
        IsOk());
  }
  // The bound is bob's: the next is refused naming it, alice's host still revokes hers.
  EXPECT_THAT(transport.RevokeRoute("w", "human:user-bob", Agent("one-more"), Agent("bob")),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("at most 4096")));
  EXPECT_THAT(transport.RevokeRoute("w", "human:user-alice", Agent("alice"), Agent("bob")), IsOk());
  // Repeating a revocation it holds costs nothing and still answers.
  EXPECT_THAT(transport.RevokeRoute("w", "human:user-bob", Agent("s0"), Agent("bob")), IsOk());
  // Every revocation it took still holds.
  EXPECT_EQ(transport.Send("w", kBob, Message("m", "s0", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_DENIED);
}

TEST(LocalMessageTransportTest, AReplyReachesTheWaitingRequest) {
  LocalMessageTransport transport;
  const pb::MessageEnvelope request = Message("m1", "alice", "bob");
  ASSERT_THAT(transport.Send("w", kAlice, request, Soon()).status(), IsOk());
  std::thread bob([&] {
    std::vector<LocalMessageTransport::Received> inbox =
        transport.Receive("w", Agent("bob"), kEveryOwner, 1, Soon());
    ASSERT_THAT(inbox, SizeIs(1));
    EXPECT_EQ(
        transport.Send("w", kBob, Message("r1", "bob", "alice", inbox[0].message.id()), Soon())
            ->status(),
        v1::MESSAGE_DELIVERY_STATUS_DELIVERED);
  });
  absl::StatusOr<pb::MessageEnvelope> reply = transport.AwaitReply("w", request, Soon());
  bob.join();
  ASSERT_THAT(reply.status(), IsOk());
  EXPECT_EQ(reply->id(), "r1");
  EXPECT_EQ(reply->reply_to(), "m1");
}

TEST(LocalMessageTransportTest, OnlyTheRequestsReceiverRepliesToItsSender) {
  LocalMessageTransport transport;
  const pb::MessageEnvelope request = Message("m1", "alice", "bob");
  ASSERT_THAT(transport.Send("w", kAlice, request, Soon()).status(), IsOk());
  // Mallory knows the request id: hers is an ordinary message to alice, not the reply.
  EXPECT_EQ(
      transport.Send("w", kBob, Message("forged", "mallory", "alice", "m1"), Soon())->status(),
      v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  // Nor does bob's answer addressed to someone else count.
  EXPECT_EQ(transport.Send("w", kBob, Message("astray", "bob", "carol", "m1"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_EQ(transport.Send("w", kBob, Message("r1", "bob", "alice", "m1"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_DELIVERED);
  absl::StatusOr<pb::MessageEnvelope> reply = transport.AwaitReply("w", request, Soon());
  ASSERT_THAT(reply.status(), IsOk());
  EXPECT_EQ(reply->id(), "r1");
}

TEST(LocalMessageTransportTest, NoReplyInTimeIsDeadlineExceeded) {
  LocalMessageTransport transport;
  const pb::MessageEnvelope request = Message("m1", "alice", "bob");
  ASSERT_THAT(transport.Send("w", kAlice, request, Soon()).status(), IsOk());
  EXPECT_EQ(
      transport.AwaitReply("w", request, absl::Now() + absl::Milliseconds(20)).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(transport.AwaitReply("w", Message("never", "a", "b"), Soon()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(LocalMessageTransportTest, AFullInboxFailsTheDispatch) {
  LocalMessageTransport transport;
  for (size_t i = 0; i < LocalMessageTransport::kMaxInbox; ++i) {
    ASSERT_EQ(
        transport.Send("w", kAlice, Message(absl::StrCat("m", i), "a", "b"), Soon())->status(),
        v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  }
  absl::StatusOr<v1::MessageDeliveryResult> full =
      transport.Send("w", kAlice, Message("over", "a", "b"), Soon());
  EXPECT_EQ(full->status(), v1::MESSAGE_DELIVERY_STATUS_FAILED);
  EXPECT_EQ(full->error().code(), "route_inbox_full");
}

TEST(LocalMessageTransportTest, OneOwnersMessagesCannotFillEveryInbox) {
  LocalMessageTransport transport;
  for (size_t i = 0; i < LocalMessageTransport::kMaxHeldPerOwner; ++i) {
    ASSERT_EQ(
        transport
            .Send("w", kBob, Message(absl::StrCat("m", i), "a", absl::StrCat("r", i % 16)), Soon())
            ->status(),
        v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  }
  EXPECT_EQ(transport.Send("w", kBob, Message("over", "a", "fresh"), Soon())->error().code(),
            "route_inbox_full");
  // Another owner's messages still go through.
  EXPECT_EQ(transport.Send("w", kAlice, Message("hers", "a", "fresh"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
}

}  // namespace
}  // namespace sharedos::envelope::messaging
