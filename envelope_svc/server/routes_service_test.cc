// The peers' MessageTransport service (ADR 0013) checks what a peer sends before it reaches the
// built-in transport, and the host's MessageRoutes checks are the same wherever they are served.
#include "envelope_svc/server/routes_service.h"

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

using testing::Human;
using testing::Message;

absl::Time Soon() { return absl::Now() + absl::Seconds(5); }

TEST(PeerTransportCoreTest, AValidDispatchAndItsReplyMeetInTheLocalTransport) {
  LocalMessageTransport local;
  PeerTransportCore core(local);
  v1::TransportSendRequest send;
  send.set_namespace_id("world-a");
  *send.mutable_owner() = Human("user-alice");
  *send.mutable_message() = Message("m1", "alice", "bob");
  absl::StatusOr<v1::TransportSendResponse> sent = core.Send(send, Soon());
  ASSERT_THAT(sent.status(), IsOk());
  EXPECT_EQ(sent->receipt().status(), v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);

  const pb::MessageEnvelope reply = Message("r1", "bob", "alice", "m1");
  ASSERT_EQ(local.Send("world-a", Human("user-bob"), reply, Soon())->status(),
            v1::MESSAGE_DELIVERY_STATUS_DELIVERED);
  v1::AwaitReplyRequest await;
  await.set_namespace_id("world-a");
  *await.mutable_request() = Message("m1", "alice", "bob");
  absl::StatusOr<v1::AwaitReplyResponse> answered = core.AwaitReply(await, Soon());
  ASSERT_THAT(answered.status(), IsOk());
  EXPECT_EQ(answered->reply().id(), "r1");
}

TEST(PeerTransportCoreTest, RefusesWhatIsNotAValidRequestNamingTheField) {
  LocalMessageTransport local;
  PeerTransportCore core(local);
  v1::TransportSendRequest send;
  *send.mutable_message() = Message("m1", "alice", "bob");
  *send.mutable_owner() = Human("user-alice");
  EXPECT_THAT(core.Send(send, Soon()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("namespace_id")));
  send.set_namespace_id(std::string(300, 'w'));
  EXPECT_THAT(core.Send(send, Soon()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("namespace_id")));
  send.set_namespace_id("world-a");
  send.mutable_message()->set_version("2");
  EXPECT_THAT(core.Send(send, Soon()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("message.version")));
  send.clear_message();
  EXPECT_THAT(core.Send(send, Soon()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("message")));
  // The sending turn's owner is required: a route and its messages are an owner's.
  *send.mutable_message() = Message("m1", "alice", "bob");
  send.clear_owner();
  EXPECT_THAT(core.Send(send, Soon()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("owner")));
  // Nothing half-done: the inbox is empty.
  pb::Address bob;
  bob.set_agent_id("bob");
  EXPECT_TRUE(local.Receive("world-a", bob, {"*"}, 10, absl::Now()).empty());

  v1::AwaitReplyRequest await;
  await.set_namespace_id("world-a");
  EXPECT_THAT(core.AwaitReply(await, Soon()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("request")));
  // A request this transport never accepted.
  *await.mutable_request() = Message("never-sent", "alice", "bob");
  EXPECT_THAT(core.AwaitReply(await, Soon()).status(), StatusIs(absl::StatusCode::kNotFound));
}

TEST(MessageRoutesCoreTest, ChecksAreTheSameWhereverTheCallIsServed) {
  common::server::Scope scope;
  scope.namespaces = {"world-a"};
  v1::ReceiveRequest receive;
  receive.set_namespace_id("world-b");
  receive.mutable_receiver()->set_agent_id("bob");
  receive.set_max(1);
  EXPECT_THAT(MessageRoutesCore::CheckReceive(receive, scope),
              StatusIs(absl::StatusCode::kPermissionDenied));
  receive.set_namespace_id("world-a");
  EXPECT_THAT(MessageRoutesCore::CheckReceive(receive, scope), IsOk());
  receive.set_max(65);
  EXPECT_THAT(MessageRoutesCore::CheckReceive(receive, scope),
              StatusIs(absl::StatusCode::kInvalidArgument, "max: must be 1..64"));
  v1::RevokeRouteRequest revoke;
  revoke.set_namespace_id("world-a");
  revoke.mutable_sender()->set_agent_id("alice");
  EXPECT_THAT(MessageRoutesCore::CheckRevokeRoute(revoke, scope),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("receiver")));
}

TEST(MessageRoutesCoreTest, AHostReachesOnlyTheMessagesAndRoutesOfItsOwners) {
  LocalMessageTransport local;
  MessageRoutesCore routes(local);
  ASSERT_THAT(
      local.Send("world-a", Human("user-alice"), Message("m1", "helper", "bob"), Soon()).status(),
      IsOk());
  common::server::Scope bob_host;
  bob_host.namespaces = {"world-a"};
  bob_host.owners = {"human:user-bob"};
  v1::ReceiveRequest receive;
  receive.set_namespace_id("world-a");
  receive.mutable_receiver()->set_agent_id("bob");
  receive.set_max(10);
  // Bob's host gets nothing of alice's, and cannot ask for it by name.
  absl::StatusOr<v1::ReceiveResponse> received = routes.Receive(receive, bob_host);
  ASSERT_THAT(received.status(), IsOk());
  EXPECT_EQ(received->messages_size(), 0);
  *receive.mutable_owner() = Human("user-alice");
  EXPECT_THAT(routes.Receive(receive, bob_host).status(),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("owner")));
  // Alice's message is still there for her host, with its owner.
  common::server::Scope alice_host = bob_host;
  alice_host.owners = {"human:user-alice"};
  received = routes.Receive(receive, alice_host);
  ASSERT_THAT(received.status(), IsOk());
  ASSERT_EQ(received->messages_size(), 1);
  EXPECT_EQ(received->owners(0).human_user_id(), "user-alice");

  // Bob's host revokes bob's route only: alice's lease stands.
  v1::RevokeRouteRequest revoke;
  revoke.set_namespace_id("world-a");
  revoke.mutable_sender()->set_agent_id("helper");
  revoke.mutable_receiver()->set_agent_id("bob");
  absl::StatusOr<v1::RevokeRouteResponse> revoked = routes.RevokeRoute(revoke, bob_host);
  ASSERT_THAT(revoked.status(), IsOk());
  EXPECT_FALSE(revoked->was_leased());
  EXPECT_EQ(
      local.Send("world-a", Human("user-alice"), Message("m2", "helper", "bob"), Soon())->status(),
      v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  *revoke.mutable_owner() = Human("user-alice");
  EXPECT_THAT(routes.RevokeRoute(revoke, bob_host).status(),
              StatusIs(absl::StatusCode::kPermissionDenied));
  // A host of several owners names whose route.
  common::server::Scope both = bob_host;
  both.owners = {"human:user-bob", "human:user-alice"};
  revoke.clear_owner();
  EXPECT_THAT(routes.RevokeRoute(revoke, both).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("owner: required")));
}

}  // namespace
}  // namespace sharedos::envelope::messaging
