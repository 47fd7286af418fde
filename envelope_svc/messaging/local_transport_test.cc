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
using ::testing::SizeIs;

using testing::Agent;
using testing::Message;

absl::Time Soon() { return absl::Now() + absl::Seconds(5); }

TEST(LocalMessageTransportTest, AcceptsIntoTheReceiversInboxOfItsWorld) {
  LocalMessageTransport transport;
  absl::StatusOr<v1::MessageDeliveryResult> receipt =
      transport.Send("world-a", Message("m1", "alice", "bob"), Soon());
  ASSERT_THAT(receipt.status(), IsOk());
  EXPECT_EQ(receipt->status(), v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_EQ(receipt->message_id(), "m1");
  EXPECT_THAT(transport.Receive("world-b", Agent("bob"), 10, absl::Now()), SizeIs(0));
  std::vector<pb::MessageEnvelope> inbox = transport.Receive("world-a", Agent("bob"), 10, Soon());
  ASSERT_THAT(inbox, SizeIs(1));
  EXPECT_EQ(inbox[0].id(), "m1");
  EXPECT_THAT(transport.Receive("world-a", Agent("bob"), 10, absl::Now()), SizeIs(0));
}

TEST(LocalMessageTransportTest, ARevokedRouteLeaseRefusesTheNextDispatch) {
  LocalMessageTransport transport;
  ASSERT_EQ(transport.Send("w", Message("m1", "alice", "bob"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_TRUE(transport.RevokeRoute("w", Agent("alice"), Agent("bob")));
  absl::StatusOr<v1::MessageDeliveryResult> refused =
      transport.Send("w", Message("m2", "alice", "bob"), Soon());
  ASSERT_THAT(refused.status(), IsOk());
  EXPECT_EQ(refused->status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(refused->error().code(), "route_lease_revoked");
  EXPECT_EQ(refused->message_id(), "m2");
  // Only that route: the reverse direction and other receivers keep their leases.
  EXPECT_EQ(transport.Send("w", Message("m3", "bob", "alice"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  EXPECT_EQ(transport.Send("w", Message("m4", "alice", "carol"), Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
}

TEST(LocalMessageTransportTest, AReplyReachesTheWaitingRequest) {
  LocalMessageTransport transport;
  const pb::MessageEnvelope request = Message("m1", "alice", "bob");
  ASSERT_THAT(transport.Send("w", request, Soon()).status(), IsOk());
  std::thread bob([&] {
    std::vector<pb::MessageEnvelope> inbox = transport.Receive("w", Agent("bob"), 1, Soon());
    ASSERT_THAT(inbox, SizeIs(1));
    EXPECT_EQ(transport.Send("w", Message("r1", "bob", "alice", inbox[0].id()), Soon())->status(),
              v1::MESSAGE_DELIVERY_STATUS_DELIVERED);
  });
  absl::StatusOr<pb::MessageEnvelope> reply = transport.AwaitReply("w", request, Soon());
  bob.join();
  ASSERT_THAT(reply.status(), IsOk());
  EXPECT_EQ(reply->id(), "r1");
  EXPECT_EQ(reply->reply_to(), "m1");
}

TEST(LocalMessageTransportTest, NoReplyInTimeIsDeadlineExceeded) {
  LocalMessageTransport transport;
  const pb::MessageEnvelope request = Message("m1", "alice", "bob");
  ASSERT_THAT(transport.Send("w", request, Soon()).status(), IsOk());
  EXPECT_EQ(
      transport.AwaitReply("w", request, absl::Now() + absl::Milliseconds(20)).status().code(),
      absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(transport.AwaitReply("w", Message("never", "a", "b"), Soon()).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(LocalMessageTransportTest, AFullInboxFailsTheDispatch) {
  LocalMessageTransport transport;
  for (size_t i = 0; i < LocalMessageTransport::kMaxInbox; ++i) {
    ASSERT_EQ(transport.Send("w", Message(absl::StrCat("m", i), "a", "b"), Soon())->status(),
              v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  }
  absl::StatusOr<v1::MessageDeliveryResult> full =
      transport.Send("w", Message("over", "a", "b"), Soon());
  EXPECT_EQ(full->status(), v1::MESSAGE_DELIVERY_STATUS_FAILED);
  EXPECT_EQ(full->error().code(), "route_inbox_full");
}

}  // namespace
}  // namespace sharedos::envelope::messaging
