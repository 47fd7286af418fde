// The seam between the kernel's messaging and whatever carries a message: the built-in
// in-process transport (local_transport.h), a host's MessageTransport over gRPC
// (grpc_transport.h), or a test fake. Called only for a message the kernel has already allowed;
// the transport re-checks its own route lease at every dispatch (seed ADR 0025) and answers a
// dead route with a DENIED receipt carrying its code. Every message is dispatched for one owner —
// the sending turn's (its trusted context's) — and a route and its messages are that owner's
// (docs/adr/0014, T5). Implementations must be thread-safe. Deadlines are real (wall-clock) time.

#ifndef SHAREDOS_ENVELOPE_SVC_MESSAGING_MESSAGE_TRANSPORT_H_
#define SHAREDOS_ENVELOPE_SVC_MESSAGING_MESSAGE_TRANSPORT_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sharedos/envelope/v1/messaging.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/message.pb.h"

namespace sharedos::envelope::messaging {

class MessageTransportInterface {
 public:
  virtual ~MessageTransportInterface() = default;

  // Dispatches `message` within the world `namespace_id` for `owner` (the sending turn's owner);
  // answers the receipt, still to be checked by the caller (same message id, a status, an error
  // code when refused). Any error means message_delivery_failed; its text must not carry
  // transport-supplied messages.
  virtual absl::StatusOr<v1::MessageDeliveryResult> Send(
      absl::string_view namespace_id, const protocol::v1::Address& owner,
      const protocol::v1::MessageEnvelope& message, absl::Time deadline) = 0;

  // The reply to `request` (a message this transport accepted): the first message whose
  // reply_to is request.id, sent by its receiver to its sender, still to be checked by the
  // caller. Any error means message_reply_resolution_failed.
  virtual absl::StatusOr<protocol::v1::MessageEnvelope> AwaitReply(
      absl::string_view namespace_id, const protocol::v1::MessageEnvelope& request,
      absl::Time deadline) = 0;
};

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_MESSAGING_MESSAGE_TRANSPORT_H_
