// The kernel's messaging (semantics §3.9 `sendMessage` and `messages.request`, §5.2
// `message.sent`, §6.4; seed ADRs 0015 and 0025), over a turn's trusted context and its
// authority lease:
//
// Send — Envelope.SendMessage, a host sending for a turn's actor; the checks in order:
//   the message is valid                              (the caller: INVALID_ARGUMENT)
//   sender ≠ actor, purpose or trace ≠ the context's  denied message_context_mismatch
//   the receiver has no addressPath                   failed message_requirement_resolution_failed
//   Authorize sharedos.messaging / addressPath(receiver) / owner = the context's / send,
//   consuming: the authorizer does not answer         denied authority_unavailable (fail closed)
//              denied                                 denied <its code>
//   no transport attached                             failed message_transport_not_configured
//   the transport errs                                failed message_delivery_failed
//   its receipt is malformed (no status, another id,
//   a refusal without a code)                         failed invalid_message_receipt
//   otherwise its receipt verbatim — a DENIED route_lease_revoked included: never upgraded.
//
// Request — the messages.request tool once mediation has authorized its requirement
// (sharedos.messaging / addressPath(recipient) / send, consumed once): the envelope is built
// from the trusted context — sender = actor, purpose, trace, created_at = now, a minted id —
// never from the caller; the arguments name only the recipient and the payload. Then:
//   the envelope cannot be built                      failed message_request_not_prepared
//   the dispatch is not accepted/delivered            failed message_request_not_accepted,
//                                                     cause = the receipt's (or kernel's) code
//   the transport cannot resolve a reply              failed message_reply_resolution_failed
//   the reply is malformed, or does not answer: reply_to ≠ the request's id, sender ≠ its
//   receiver, receiver ≠ its sender, another purpose or trace, a payload not an object
//                                                     failed invalid_message_reply
//   otherwise succeeded, output = the reply's payload.
//
// Every dispatch attempted (and every refusal of Send) is audited once as message.sent
// (post-effect, source kernel): messageId, receiver, operationId (the call id for
// messages.request), grantId, reason, cause, failClosed — never the payload. Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_MESSAGING_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_MESSAGING_H_

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "common/time/clock.h"
#include "envelope_svc/messaging/message_transport.h"
#include "sharedos/envelope/v1/messaging.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/message.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

// The trusted view of the sending turn.
struct MessagingScope {
  const protocol::v1::AccessContext* context = nullptr;
  std::string lease_id;
  std::string authority_hash;
  // Transport waits never outlast the turn (on the turn's clock).
  absl::Time turn_deadline = absl::InfiniteFuture();
};

// What one message.sent record states.
struct MessageSentFacts {
  std::string message_id;
  protocol::v1::Address receiver;
  // The messages.request call id; empty for SendMessage.
  std::string operation_id;
  protocol::v1::AuditOutcome outcome = protocol::v1::AUDIT_OUTCOME_SUCCEEDED;
  std::string reason;
  std::string cause;
  bool fail_closed = false;
  std::string grant_id;
};

// message.sent (post-effect, source kernel), stamped from `context` at `at`.
protocol::v1::AuditEvent MessageSentEvent(const protocol::v1::AccessContext& context, absl::Time at,
                                          const MessageSentFacts& facts);

class Messenger {
 public:
  struct Options {
    absl::Duration authorizer_timeout = absl::Seconds(2);
    // Per transport call (never past the turn's deadline); AwaitReply included.
    absl::Duration transport_timeout = absl::Seconds(30);
    // Transport deadlines are wall-clock time.
    const common::Clock* deadline_clock = &common::RealClock();
    // Mints messages.request's message ids (default: a random UUID).
    std::function<std::string()> mint_message_id;
  };

  // `transport` may be null (no transport: message_transport_not_configured). Borrows all.
  Messenger(authorizer::client::AuthorizerClient& authorizer, audit::client::AuditWriter& audit,
            messaging::MessageTransportInterface* transport, const common::Clock& clock,
            Options options);

  bool has_transport() const { return transport_ != nullptr; }

  // sendMessage of a valid `message` at the operation instant `now`.
  v1::MessageDeliveryResult Send(const MessagingScope& scope,
                                 const protocol::v1::MessageEnvelope& message, absl::Time now);

  struct RequestResult {
    protocol::v1::ToolResult result;
    // tool.invoked's cause (the receipt's code behind message_request_not_accepted).
    std::string cause;
  };
  // messages.request's invocation: `arguments` parsed against the tool's input schema, the
  // requirement already authorized under `grant_id`.
  RequestResult Request(const MessagingScope& scope, const protocol::v1::ToolCall& call,
                        const nlohmann::json& arguments, const std::string& grant_id,
                        absl::Time now);

 private:
  // The transport's receipt for `message`, checked; a kernel failure receipt otherwise.
  v1::MessageDeliveryResult Dispatch(const MessagingScope& scope,
                                     const protocol::v1::MessageEnvelope& message, absl::Time now);
  absl::Time TransportDeadline(const MessagingScope& scope, absl::Time now) const;
  void Record(const MessagingScope& scope, absl::Time now, const MessageSentFacts& facts);

  authorizer::client::AuthorizerClient& authorizer_;
  audit::client::AuditWriter& audit_;
  messaging::MessageTransportInterface* const transport_;
  const common::Clock& clock_;
  Options options_;
};

// A kernel-built receipt: `status` with ProtocolError{code, fixed message, retryable false}.
v1::MessageDeliveryResult KernelReceipt(absl::string_view message_id,
                                        v1::MessageDeliveryStatus status, absl::string_view code,
                                        absl::Time at);

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_MESSAGING_H_
