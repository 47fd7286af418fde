#include "envelope_svc/core/messaging.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "capability/address.h"
#include "capability/reason_codes.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "envelope_svc/messaging/local_transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::IsOk;
using ::testing::SizeIs;

pb::Address Agent(const std::string& id) {
  pb::Address address;
  address.set_agent_id(id);
  return address;
}

// A transport answering what it is told.
class ScriptedTransport : public messaging::MessageTransportInterface {
 public:
  absl::StatusOr<v1::MessageDeliveryResult> Send(absl::string_view, const pb::Address& owner,
                                                 const pb::MessageEnvelope& message,
                                                 absl::Time) override {
    sent.push_back(message);
    owners.push_back(owner);
    if (!send_status.ok()) return send_status;
    v1::MessageDeliveryResult receipt = receipt_template;
    if (receipt.message_id().empty()) receipt.set_message_id(message.id());
    return receipt;
  }
  absl::StatusOr<pb::MessageEnvelope> AwaitReply(absl::string_view,
                                                 const pb::MessageEnvelope& request,
                                                 absl::Time) override {
    if (!reply.has_value()) return absl::DeadlineExceededError("none");
    pb::MessageEnvelope answer = *reply;
    if (answer.reply_to() == "$request") answer.set_reply_to(request.id());
    return answer;
  }

  absl::Status send_status;
  v1::MessageDeliveryResult receipt_template = [] {
    v1::MessageDeliveryResult receipt;
    receipt.set_status(v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
    return receipt;
  }();
  std::optional<pb::MessageEnvelope> reply;
  std::vector<pb::MessageEnvelope> sent;
  // The owner each was dispatched for (the sending turn's).
  std::vector<pb::Address> owners;
};

class MessagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    context_.set_namespace_id("world-a");
    *context_.mutable_actor() = Agent("alice");
    context_.mutable_authority()->set_human_user_id("owner");
    context_.mutable_owner()->set_human_user_id("owner");
    context_.set_purpose("plan");
    context_.set_trace_id("trace-1");
    authorizer::v1::OpenTurnAuthorityRequest open;
    *open.mutable_context() = context_;
    scope_.lease_id = authorizer_.OpenTurnAuthority(open, absl::Seconds(1))->lease_id();
    scope_.context = &context_;
  }

  Messenger Make(messaging::MessageTransportInterface* transport) {
    Messenger::Options options;
    options.mint_message_id = [] { return std::string("msg-minted"); };
    return Messenger(authorizer_, audit_, transport, clock_, options);
  }

  pb::MessageEnvelope Message() const {
    pb::MessageEnvelope message;
    message.set_version("1");
    message.set_id("m-1");
    *message.mutable_sender() = Agent("alice");
    *message.mutable_receiver() = Agent("bob");
    message.set_purpose("plan");
    message.set_trace_id("trace-1");
    message.mutable_payload()->set_string_value("the secret payload");
    message.mutable_created_at()->set_seconds(1786438800);
    return message;
  }

  pb::ToolCall Call() const {
    pb::ToolCall call;
    call.set_id("call-7");
    call.set_tool("messages.request");
    call.set_trace_id("trace-1");
    return call;
  }

  static nlohmann::json Arguments() {
    return {{"recipient", {{"kind", "agent"}, {"agentId", "bob"}}}, {"payload", {{"q", "hi?"}}}};
  }

  pb::MessageEnvelope Reply() const {
    pb::MessageEnvelope reply = Message();
    reply.set_id("r-1");
    reply.set_reply_to("$request");
    *reply.mutable_sender() = Agent("bob");
    *reply.mutable_receiver() = Agent("alice");
    reply.mutable_payload()->mutable_struct_value();
    (*reply.mutable_payload()->mutable_struct_value()->mutable_fields())["a"].set_string_value(
        "yes");
    return reply;
  }

  // The one message.sent recorded (post-effect).
  pb::AuditEvent Sent() {
    std::vector<pb::AuditEvent> sent;
    for (const auto& recorded : audit_.recorded(pb::AUDIT_EVENT_TYPE_MESSAGE_SENT)) {
      EXPECT_FALSE(recorded.pre_effect);
      sent.push_back(recorded.event);
    }
    EXPECT_THAT(sent, SizeIs(1));
    return sent.empty() ? pb::AuditEvent() : sent.back();
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  authorizer::client::FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  pb::AccessContext context_;
  MessagingScope scope_;
};

TEST_F(MessagingTest, SendAuthorizesTheReceiversPathConsumingAndAnswersTheReceipt) {
  ScriptedTransport transport;
  v1::MessageDeliveryResult receipt = Make(&transport).Send(scope_, Message(), clock_.Now());
  EXPECT_EQ(receipt.status(), v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  // Dispatched as the turn's owner's (ADR 0014, T5).
  ASSERT_THAT(transport.owners, SizeIs(1));
  EXPECT_TRUE(capability::AddressEquals(transport.owners[0], context_.owner()));
  ASSERT_THAT(authorizer_.authorize_requests(), SizeIs(1));
  const authorizer::v1::AuthorizeRequest asked = authorizer_.authorize_requests()[0];
  EXPECT_EQ(asked.requirement().resource().namespace_(), "sharedos.messaging");
  EXPECT_THAT(asked.requirement().resource().path(), ::testing::ElementsAre("agent", "bob"));
  EXPECT_EQ(asked.requirement().action(), "send");
  EXPECT_TRUE(asked.consume());
  EXPECT_FALSE(asked.requirement().resource().has_owner());
  pb::AuditEvent sent = Sent();
  EXPECT_EQ(sent.outcome(), pb::AUDIT_OUTCOME_SUCCEEDED);
  EXPECT_EQ(sent.message_id(), "m-1");
  EXPECT_EQ(sent.receiver().agent_id(), "bob");
  EXPECT_EQ(sent.grant_id(), "grant-files");
  EXPECT_EQ(sent.source(), pb::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(sent.DebugString().find("the secret payload"), std::string::npos);
}

TEST_F(MessagingTest, AForgedSenderIsMessageContextMismatchBeforeAnyDecision) {
  ScriptedTransport transport;
  pb::MessageEnvelope forged = Message();
  *forged.mutable_sender() = Agent("orchestrator");
  v1::MessageDeliveryResult receipt = Make(&transport).Send(scope_, forged, clock_.Now());
  EXPECT_EQ(receipt.status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(receipt.error().code(), capability::kMessageContextMismatch);
  EXPECT_THAT(authorizer_.authorize_requests(), SizeIs(0));
  EXPECT_THAT(transport.sent, SizeIs(0));
  EXPECT_EQ(Sent().reason(), capability::kMessageContextMismatch);
}

TEST_F(MessagingTest, AnotherPurposeOrTraceIsMessageContextMismatch) {
  ScriptedTransport transport;
  Messenger messenger = Make(&transport);
  pb::MessageEnvelope purpose = Message();
  purpose.set_purpose("other");
  EXPECT_EQ(messenger.Send(scope_, purpose, clock_.Now()).error().code(),
            capability::kMessageContextMismatch);
  pb::MessageEnvelope trace = Message();
  trace.set_trace_id("trace-2");
  EXPECT_EQ(messenger.Send(scope_, trace, clock_.Now()).error().code(),
            capability::kMessageContextMismatch);
  EXPECT_THAT(transport.sent, SizeIs(0));
}

TEST_F(MessagingTest, AReceiverWithoutAGrantIsNoMatchingGrant) {
  ScriptedTransport transport;
  authorizer_.DenyAuthorize("sharedos.messaging", "agent/bob", "send", "no_matching_grant");
  v1::MessageDeliveryResult receipt = Make(&transport).Send(scope_, Message(), clock_.Now());
  EXPECT_EQ(receipt.status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(receipt.error().code(), capability::kNoMatchingGrant);
  EXPECT_FALSE(receipt.error().retryable());
  EXPECT_THAT(transport.sent, SizeIs(0));
  pb::AuditEvent sent = Sent();
  EXPECT_EQ(sent.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(sent.reason(), capability::kNoMatchingGrant);
}

TEST_F(MessagingTest, AnUnansweredAuthorizerIsAuthorityUnavailableFailClosed) {
  ScriptedTransport transport;
  authorizer_.FailMethod(authorizer::client::FakeAuthorizerClient::Method::kAuthorize,
                         absl::UnavailableError("down"));
  v1::MessageDeliveryResult receipt = Make(&transport).Send(scope_, Message(), clock_.Now());
  EXPECT_EQ(receipt.status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(receipt.error().code(), capability::kAuthorityUnavailable);
  EXPECT_TRUE(Sent().fail_closed());
  EXPECT_THAT(transport.sent, SizeIs(0));
}

TEST_F(MessagingTest, NoTransportIsMessageTransportNotConfiguredAfterTheDecision) {
  v1::MessageDeliveryResult receipt = Make(nullptr).Send(scope_, Message(), clock_.Now());
  EXPECT_EQ(receipt.status(), v1::MESSAGE_DELIVERY_STATUS_FAILED);
  EXPECT_EQ(receipt.error().code(), capability::kMessageTransportNotConfigured);
  EXPECT_THAT(authorizer_.authorize_requests(), SizeIs(1));
  EXPECT_EQ(Sent().outcome(), pb::AUDIT_OUTCOME_FAILED);
}

TEST_F(MessagingTest, ATransportErrorIsMessageDeliveryFailed) {
  ScriptedTransport transport;
  transport.send_status = absl::UnavailableError("transport text never shown");
  v1::MessageDeliveryResult receipt = Make(&transport).Send(scope_, Message(), clock_.Now());
  EXPECT_EQ(receipt.status(), v1::MESSAGE_DELIVERY_STATUS_FAILED);
  EXPECT_EQ(receipt.error().code(), capability::kMessageDeliveryFailed);
  EXPECT_EQ(receipt.error().message().find("never shown"), std::string::npos);
}

TEST_F(MessagingTest, AMalformedReceiptIsInvalidMessageReceipt) {
  ScriptedTransport transport;
  Messenger messenger = Make(&transport);
  transport.receipt_template.set_message_id("another-id");
  EXPECT_EQ(messenger.Send(scope_, Message(), clock_.Now()).error().code(),
            capability::kInvalidMessageReceipt);
  transport.receipt_template.clear_message_id();
  transport.receipt_template.set_status(v1::MESSAGE_DELIVERY_STATUS_UNSPECIFIED);
  EXPECT_EQ(messenger.Send(scope_, Message(), clock_.Now()).error().code(),
            capability::kInvalidMessageReceipt);
  transport.receipt_template.set_status(v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(messenger.Send(scope_, Message(), clock_.Now()).error().code(),
            capability::kInvalidMessageReceipt);
}

TEST_F(MessagingTest, ARevokedRouteLeaseIsReturnedVerbatimNeverUpgraded) {
  messaging::LocalMessageTransport transport(clock_);
  Messenger messenger = Make(&transport);
  ASSERT_EQ(messenger.Send(scope_, Message(), clock_.Now()).status(),
            v1::MESSAGE_DELIVERY_STATUS_ACCEPTED);
  ASSERT_TRUE(transport.RevokeRoute("world-a", "human:owner", Agent("alice"), Agent("bob")).ok());
  audit_.Clear();
  pb::MessageEnvelope second = Message();
  second.set_id("m-2");
  v1::MessageDeliveryResult receipt = messenger.Send(scope_, second, clock_.Now());
  EXPECT_EQ(receipt.status(), v1::MESSAGE_DELIVERY_STATUS_DENIED);
  EXPECT_EQ(receipt.error().code(), messaging::kRouteLeaseRevoked);
  // The kernel allowed it: the decision was taken, the lease refused it.
  EXPECT_THAT(authorizer_.authorize_requests(), SizeIs(2));
  pb::AuditEvent sent = Sent();
  EXPECT_EQ(sent.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(sent.reason(), "route_lease_revoked");
  EXPECT_EQ(sent.grant_id(), "grant-files");
}

TEST_F(MessagingTest, RequestBuildsTheEnvelopeFromTheTrustedContextAndAnswersTheReply) {
  ScriptedTransport transport;
  transport.reply = Reply();
  Messenger::RequestResult requested =
      Make(&transport).Request(scope_, Call(), Arguments(), "grant-m", clock_.Now());
  ASSERT_EQ(requested.result.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED)
      << requested.result.DebugString();
  EXPECT_EQ(requested.result.output().struct_value().fields().at("a").string_value(), "yes");
  ASSERT_THAT(transport.sent, SizeIs(1));
  const pb::MessageEnvelope& sent = transport.sent[0];
  EXPECT_EQ(sent.id(), "msg-minted");
  EXPECT_EQ(sent.sender().agent_id(), "alice");
  EXPECT_EQ(sent.receiver().agent_id(), "bob");
  EXPECT_EQ(sent.purpose(), "plan");
  EXPECT_EQ(sent.trace_id(), "trace-1");
  EXPECT_TRUE(sent.has_created_at());
  pb::AuditEvent record = Sent();
  EXPECT_EQ(record.operation_id(), "call-7");
  EXPECT_EQ(record.message_id(), "msg-minted");
  EXPECT_EQ(record.grant_id(), "grant-m");
  // Requests never decide again: mediation did.
  EXPECT_THAT(authorizer_.authorize_requests(), SizeIs(0));
}

TEST_F(MessagingTest, ARequestOnARevokedRouteIsNotAcceptedWithTheLeaseAsCause) {
  messaging::LocalMessageTransport transport(clock_);
  ASSERT_TRUE(transport.RevokeRoute("world-a", "human:owner", Agent("alice"), Agent("bob")).ok());
  Messenger::RequestResult requested =
      Make(&transport).Request(scope_, Call(), Arguments(), "grant-m", clock_.Now());
  EXPECT_EQ(requested.result.status(), pb::TOOL_RESULT_STATUS_FAILED);
  EXPECT_EQ(requested.result.error().code(), capability::kMessageRequestNotAccepted);
  EXPECT_EQ(requested.cause, "route_lease_revoked");
  pb::AuditEvent record = Sent();
  EXPECT_EQ(record.outcome(), pb::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(record.reason(), "route_lease_revoked");
  EXPECT_EQ(record.operation_id(), "call-7");
}

TEST_F(MessagingTest, NoReplyIsMessageReplyResolutionFailed) {
  ScriptedTransport transport;
  Messenger::RequestResult requested =
      Make(&transport).Request(scope_, Call(), Arguments(), "grant-m", clock_.Now());
  EXPECT_EQ(requested.result.error().code(), capability::kMessageReplyResolutionFailed);
}

TEST_F(MessagingTest, AReplyThatDoesNotAnswerIsInvalidMessageReply) {
  struct Bend {
    const char* name;
    std::function<void(pb::MessageEnvelope&)> apply;
  };
  const std::vector<Bend> bends = {
      {"swapped trace", [](pb::MessageEnvelope& r) { r.set_trace_id("trace-other"); }},
      {"other purpose", [](pb::MessageEnvelope& r) { r.set_purpose("other"); }},
      {"other reply_to", [](pb::MessageEnvelope& r) { r.set_reply_to("m-unrelated"); }},
      {"sender not the receiver",
       [](pb::MessageEnvelope& r) { *r.mutable_sender() = Agent("eve"); }},
      {"receiver not the sender",
       [](pb::MessageEnvelope& r) { *r.mutable_receiver() = Agent("eve"); }},
      {"payload not an object",
       [](pb::MessageEnvelope& r) { r.mutable_payload()->set_number_value(1); }},
      {"malformed", [](pb::MessageEnvelope& r) { r.set_version("2"); }},
  };
  for (const Bend& bend : bends) {
    ScriptedTransport transport;
    pb::MessageEnvelope reply = Reply();
    bend.apply(reply);
    transport.reply = reply;
    Messenger::RequestResult requested =
        Make(&transport).Request(scope_, Call(), Arguments(), "grant-m", clock_.Now());
    EXPECT_EQ(requested.result.status(), pb::TOOL_RESULT_STATUS_FAILED) << bend.name;
    EXPECT_EQ(requested.result.error().code(), capability::kInvalidMessageReply) << bend.name;
  }
}

TEST_F(MessagingTest, ARequestThatCannotBeBuiltIsNotPrepared) {
  ScriptedTransport transport;
  Messenger::RequestResult requested =
      Make(&transport)
          .Request(scope_, Call(), {{"recipient", {{"kind", "agent"}, {"agentId", "bob"}}}}, "g",
                   clock_.Now());
  EXPECT_EQ(requested.result.error().code(), capability::kMessageRequestNotPrepared);
  EXPECT_THAT(transport.sent, SizeIs(0));
}

TEST_F(MessagingTest, TwoAgentsTalkThroughTheLocalTransport) {
  messaging::LocalMessageTransport transport(clock_);
  Messenger messenger = Make(&transport);
  // Bob's side: his turn's context (the same trace and purpose: the inbound message's).
  pb::AccessContext bob_context = context_;
  *bob_context.mutable_actor() = Agent("bob");
  authorizer::v1::OpenTurnAuthorityRequest open;
  *open.mutable_context() = bob_context;
  MessagingScope bob;
  bob.context = &bob_context;
  bob.lease_id = authorizer_.OpenTurnAuthority(open, absl::Seconds(1))->lease_id();
  std::thread answer([&] {
    std::vector<messaging::LocalMessageTransport::Received> inbox =
        transport.Receive("world-a", Agent("bob"), {"*"}, 1, absl::Now() + absl::Seconds(10));
    ASSERT_THAT(inbox, SizeIs(1));
    pb::MessageEnvelope reply = Reply();
    reply.set_reply_to(inbox[0].message.id());
    EXPECT_EQ(messenger.Send(bob, reply, clock_.Now()).status(),
              v1::MESSAGE_DELIVERY_STATUS_DELIVERED);
  });
  Messenger::RequestResult requested =
      messenger.Request(scope_, Call(), Arguments(), "grant-m", clock_.Now());
  answer.join();
  ASSERT_EQ(requested.result.status(), pb::TOOL_RESULT_STATUS_SUCCEEDED)
      << requested.result.DebugString();
  EXPECT_EQ(requested.result.output().struct_value().fields().at("a").string_value(), "yes");
}

}  // namespace
}  // namespace sharedos::envelope::core
