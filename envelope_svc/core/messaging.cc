#include "envelope_svc/core/messaging.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "capability/address.h"
#include "capability/reason_codes.h"
#include "common/crypto/random.h"
#include "common/json/proto_json.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"
#include "envelope_svc/core/values.h"
#include "envelope_svc/messaging/messages_tool.h"
#include "envelope_svc/tools/requirement.h"

namespace sharedos::envelope::core {
namespace {

namespace az = ::sharedos::authorizer::v1;
namespace pb = ::sharedos::protocol::v1;
using values::TimestampOf;

pb::AuditOutcome OutcomeOf(v1::MessageDeliveryStatus status) {
  switch (status) {
    case v1::MESSAGE_DELIVERY_STATUS_ACCEPTED:
    case v1::MESSAGE_DELIVERY_STATUS_DELIVERED:
      return pb::AUDIT_OUTCOME_SUCCEEDED;
    case v1::MESSAGE_DELIVERY_STATUS_DENIED:
      return pb::AUDIT_OUTCOME_DENIED;
    default:
      return pb::AUDIT_OUTCOME_FAILED;
  }
}

bool Accepted(const v1::MessageDeliveryResult& receipt) {
  return receipt.status() == v1::MESSAGE_DELIVERY_STATUS_ACCEPTED ||
         receipt.status() == v1::MESSAGE_DELIVERY_STATUS_DELIVERED;
}

// A receipt is well formed: a status, the message's id, a refusal's code an Identifier.
bool ValidReceipt(const v1::MessageDeliveryResult& receipt, const pb::MessageEnvelope& message) {
  if (receipt.message_id() != message.id()) return false;
  switch (receipt.status()) {
    case v1::MESSAGE_DELIVERY_STATUS_ACCEPTED:
    case v1::MESSAGE_DELIVERY_STATUS_DELIVERED:
      return true;
    case v1::MESSAGE_DELIVERY_STATUS_DENIED:
    case v1::MESSAGE_DELIVERY_STATUS_FAILED: {
      std::string code = receipt.error().code();
      return common::validation::CheckIdentifier(&code, "code").ok() &&
             code == receipt.error().code();
    }
    default:
      return false;
  }
}

pb::ToolResult ToolRefused(const pb::ToolCall& call, absl::string_view code, absl::Time at) {
  pb::ToolResult result = values::RefusedResult(call, pb::TOOL_RESULT_STATUS_FAILED, code);
  *result.mutable_completed_at() = TimestampOf(at);
  return result;
}

// The reply answers `request` (semantics §3.9 messages.request) and its payload is an object
// (the tool's output schema).
bool AnswersRequest(pb::MessageEnvelope reply, const pb::MessageEnvelope& request) {
  if (!common::validation::ValidateMessageEnvelope(&reply, "reply").ok()) return false;
  return reply.reply_to() == request.id() &&
         capability::AddressEquals(reply.sender(), request.receiver()) &&
         capability::AddressEquals(reply.receiver(), request.sender()) &&
         reply.purpose() == request.purpose() && reply.trace_id() == request.trace_id() &&
         reply.payload().has_struct_value();
}

}  // namespace

pb::AuditEvent MessageSentEvent(const pb::AccessContext& context, absl::Time at,
                                const MessageSentFacts& facts) {
  pb::AuditEvent event;
  event.set_version("1");
  event.set_type(pb::AUDIT_EVENT_TYPE_MESSAGE_SENT);
  event.set_outcome(facts.outcome);
  *event.mutable_at() = TimestampOf(at);
  event.set_trace_id(context.trace_id());
  event.set_namespace_id(context.namespace_id());
  *event.mutable_actor() = context.actor();
  *event.mutable_authority() = context.authority();
  *event.mutable_owner() = context.owner();
  event.set_purpose(context.purpose());
  event.set_source(pb::AUDIT_SOURCE_KERNEL);
  event.set_message_id(facts.message_id);
  if (facts.receiver.kind_case() != pb::Address::KIND_NOT_SET) {
    *event.mutable_receiver() = facts.receiver;
  }
  if (!facts.operation_id.empty()) event.set_operation_id(facts.operation_id);
  if (!facts.reason.empty()) event.set_reason(facts.reason);
  if (!facts.cause.empty()) event.set_cause(facts.cause);
  if (facts.fail_closed) event.set_fail_closed(true);
  if (!facts.grant_id.empty()) event.set_grant_id(facts.grant_id);
  return event;
}

v1::MessageDeliveryResult KernelReceipt(absl::string_view message_id,
                                        v1::MessageDeliveryStatus status, absl::string_view code,
                                        absl::Time at) {
  v1::MessageDeliveryResult receipt;
  receipt.set_message_id(std::string(message_id));
  receipt.set_status(status);
  *receipt.mutable_timestamp() = TimestampOf(at);
  pb::ProtocolError* error = receipt.mutable_error();
  error->set_code(std::string(code));
  error->set_message(std::string(capability::CodeMessage(code)));
  error->set_retryable(false);
  return receipt;
}

Messenger::Messenger(authorizer::client::AuthorizerClient& authorizer,
                     audit::client::AuditWriter& audit,
                     messaging::MessageTransportInterface* transport, const common::Clock& clock,
                     Options options)
    : authorizer_(authorizer),
      audit_(audit),
      transport_(transport),
      clock_(clock),
      options_(std::move(options)) {
  if (!options_.mint_message_id) options_.mint_message_id = [] { return common::NewUuidV4(); };
}

absl::Time Messenger::TransportDeadline(const MessagingScope& scope, absl::Time now) const {
  return options_.deadline_clock->Now() +
         std::max(absl::ZeroDuration(),
                  std::min(options_.transport_timeout, scope.turn_deadline - now));
}

void Messenger::Record(const MessagingScope& scope, absl::Time now, const MessageSentFacts& facts) {
  // Post-effect: an outage delays the record (the writer's outbox), never the answer.
  (void)audit_.RecordPostEffect(MessageSentEvent(*scope.context, now, facts));
}

v1::MessageDeliveryResult Messenger::Dispatch(const MessagingScope& scope,
                                              const pb::MessageEnvelope& message, absl::Time now) {
  if (transport_ == nullptr) {
    return KernelReceipt(message.id(), v1::MESSAGE_DELIVERY_STATUS_FAILED,
                         capability::kMessageTransportNotConfigured, now);
  }
  absl::StatusOr<v1::MessageDeliveryResult> receipt =
      transport_->Send(scope.context->namespace_id(), scope.context->owner(), message,
                       TransportDeadline(scope, now));
  if (!receipt.ok()) {
    return KernelReceipt(message.id(), v1::MESSAGE_DELIVERY_STATUS_FAILED,
                         capability::kMessageDeliveryFailed, now);
  }
  if (!ValidReceipt(*receipt, message)) {
    return KernelReceipt(message.id(), v1::MESSAGE_DELIVERY_STATUS_FAILED,
                         capability::kInvalidMessageReceipt, now);
  }
  return *std::move(receipt);
}

v1::MessageDeliveryResult Messenger::Send(const MessagingScope& scope,
                                          const pb::MessageEnvelope& message, absl::Time now) {
  const pb::AccessContext& context = *scope.context;
  MessageSentFacts facts;
  facts.message_id = message.id();
  facts.receiver = message.receiver();
  auto refuse = [&](v1::MessageDeliveryStatus status, absl::string_view code, bool fail_closed) {
    facts.outcome = OutcomeOf(status);
    facts.reason = std::string(code);
    facts.fail_closed = fail_closed;
    Record(scope, now, facts);
    return KernelReceipt(message.id(), status, code, now);
  };
  if (!capability::AddressEquals(message.sender(), context.actor()) ||
      message.purpose() != context.purpose() || message.trace_id() != context.trace_id()) {
    return refuse(v1::MESSAGE_DELIVERY_STATUS_DENIED, capability::kMessageContextMismatch, false);
  }
  const std::vector<std::string> path = capability::AddressPath(message.receiver());
  if (path.empty()) {
    return refuse(v1::MESSAGE_DELIVERY_STATUS_FAILED,
                  capability::kMessageRequirementResolutionFailed, false);
  }
  az::AuthorizeRequest request;
  request.set_lease_id(scope.lease_id);
  pb::CapabilityRequirement* requirement = request.mutable_requirement();
  requirement->mutable_resource()->set_namespace_(
      std::string(messaging::kMessagingResourceNamespace));
  for (const std::string& segment : path) requirement->mutable_resource()->add_path(segment);
  requirement->set_action(std::string(messaging::kMessagingAction));
  request.set_consume(true);
  *request.mutable_operation_instant() = TimestampOf(now);
  request.set_operation_id(message.id());
  absl::StatusOr<az::AuthorizeResponse> decided =
      authorizer_.Authorize(request, options_.authorizer_timeout);
  if (!decided.ok()) {
    return refuse(v1::MESSAGE_DELIVERY_STATUS_DENIED, capability::kAuthorityUnavailable, true);
  }
  if (!decided->decision().allowed()) {
    facts.grant_id = decided->decision().matched_grant_id();
    const std::string code = decided->decision().reason_code().empty()
                                 ? std::string(capability::kNoMatchingGrant)
                                 : decided->decision().reason_code();
    return refuse(v1::MESSAGE_DELIVERY_STATUS_DENIED, code, decided->fail_closed());
  }
  facts.grant_id = decided->decision().matched_grant_id();
  v1::MessageDeliveryResult receipt = Dispatch(scope, message, now);
  facts.outcome = OutcomeOf(receipt.status());
  // A receipt's code is the transport's own refusal, never a fail-closed verdict of this kernel.
  if (!Accepted(receipt)) facts.reason = receipt.error().code();
  Record(scope, now, facts);
  return receipt;
}

Messenger::RequestResult Messenger::Request(const MessagingScope& scope, const pb::ToolCall& call,
                                            const nlohmann::json& arguments,
                                            const std::string& grant_id, absl::Time now) {
  const pb::AccessContext& context = *scope.context;
  RequestResult out;
  // The envelope from the trusted context; the caller names only recipient and payload.
  pb::MessageEnvelope message;
  message.set_version("1");
  message.set_id(options_.mint_message_id());
  *message.mutable_sender() = context.actor();
  message.set_purpose(context.purpose());
  message.set_trace_id(context.trace_id());
  *message.mutable_created_at() = TimestampOf(now);
  auto recipient = arguments.find(messaging::kRecipientArgument);
  auto payload = arguments.find(messaging::kPayloadArgument);
  absl::StatusOr<pb::Address> receiver = recipient == arguments.end()
                                             ? absl::InvalidArgumentError("recipient")
                                             : tools::ParseAddressArgument(*recipient);
  absl::StatusOr<google::protobuf::Value> value = payload == arguments.end()
                                                      ? absl::InvalidArgumentError("payload")
                                                      : common::JsonToProtoValue(*payload);
  if (receiver.ok()) *message.mutable_receiver() = *receiver;
  if (value.ok()) *message.mutable_payload() = *value;
  pb::MessageEnvelope checked = message;
  if (!receiver.ok() || !value.ok() ||
      !common::validation::ValidateMessageEnvelope(&checked, "message").ok()) {
    out.result = ToolRefused(call, capability::kMessageRequestNotPrepared, clock_.Now());
    return out;
  }
  v1::MessageDeliveryResult receipt = Dispatch(scope, message, now);
  MessageSentFacts facts;
  facts.message_id = message.id();
  facts.receiver = message.receiver();
  facts.operation_id = call.id();
  facts.grant_id = grant_id;
  facts.outcome = OutcomeOf(receipt.status());
  // A receipt's code is the transport's own refusal, never a fail-closed verdict of this kernel.
  if (!Accepted(receipt)) facts.reason = receipt.error().code();
  Record(scope, now, facts);
  if (!Accepted(receipt)) {
    out.result = ToolRefused(call, capability::kMessageRequestNotAccepted, clock_.Now());
    out.cause = receipt.error().code();
    return out;
  }
  absl::StatusOr<pb::MessageEnvelope> reply =
      transport_->AwaitReply(context.namespace_id(), message, TransportDeadline(scope, now));
  if (!reply.ok()) {
    out.result = ToolRefused(call, capability::kMessageReplyResolutionFailed, clock_.Now());
    return out;
  }
  if (!AnswersRequest(*reply, message)) {
    out.result = ToolRefused(call, capability::kInvalidMessageReply, clock_.Now());
    return out;
  }
  out.result.set_call_id(call.id());
  out.result.set_tool(call.tool());
  out.result.set_status(pb::TOOL_RESULT_STATUS_SUCCEEDED);
  *out.result.mutable_output() = reply->payload();
  *out.result.mutable_completed_at() = TimestampOf(clock_.Now());
  return out;
}

}  // namespace sharedos::envelope::core
