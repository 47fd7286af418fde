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

using testing::Message;

absl::Time Soon() { return absl::Now() + absl::Seconds(5); }

TEST(PeerTransportCoreTest, AValidDispatchAndItsReplyMeetInTheLocalTransport) {
  LocalMessageTransport local;
  PeerTransportCore core(local);
  v1::TransportSendRequest send;
  send.set_namespace_id("world-a");
  *send.mutable_message() = Message("m1", "alice", "bob");
  absl::StatusOr<v1::TransportSendResponse> sent = core.Send(send, Soon());
  ASSERT_THAT(sent.status(), IsOk());
  EXPECT_EQ(sent->receipt().status(), v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);

  const pb::MessageEnvelope reply = Message("r1", "bob", "alice", "m1");
  ASSERT_EQ(local.Send("world-a", reply, Soon())->status(), v1::MESSAGE_DELIVERY_STATUS_DELIVERED);
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
  // Nothing half-done: the inbox is empty.
  pb::Address bob;
  bob.set_agent_id("bob");
  EXPECT_TRUE(local.Receive("world-a", bob, 10, absl::Now()).empty());

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

}  // namespace
}  // namespace sharedos::envelope::messaging
