// A host's MessageTransport service (messaging.proto) as a MessageTransportInterface. Transport
// error text never leaves this class: a failed RPC becomes UNAVAILABLE (or DEADLINE_EXCEEDED)
// "MessageTransport.<Method> failed: <grpc code name>", which the kernel maps to
// message_delivery_failed / message_reply_resolution_failed. The receipt and reply are answered
// as the host gave them, for the kernel to check. Thread-safe (the stub is).

#ifndef SHAREDOS_ENVELOPE_SVC_MESSAGING_GRPC_TRANSPORT_H_
#define SHAREDOS_ENVELOPE_SVC_MESSAGING_GRPC_TRANSPORT_H_

#include <grpcpp/client_context.h>

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "envelope_svc/messaging/message_transport.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"

namespace sharedos::envelope::messaging {

class GrpcMessageTransport final : public MessageTransportInterface {
 public:
  struct Options {
    // Adds per-call metadata (the envelope's service credential), wired in main.
    std::function<void(grpc::ClientContext&)> prepare_context;
  };

  GrpcMessageTransport(std::unique_ptr<v1::MessageTransport::StubInterface> stub, Options options)
      : stub_(std::move(stub)), options_(std::move(options)) {}

  // Errors: DEADLINE_EXCEEDED / UNAVAILABLE "MessageTransport.Send failed: <CODE>";
  // INVALID_ARGUMENT "MessageTransport.Send: response carries unknown fields".
  absl::StatusOr<v1::MessageDeliveryResult> Send(absl::string_view namespace_id,
                                                 const protocol::v1::Address& owner,
                                                 const protocol::v1::MessageEnvelope& message,
                                                 absl::Time deadline) override;
  // Errors: as Send's, for AwaitReply.
  absl::StatusOr<protocol::v1::MessageEnvelope> AwaitReply(
      absl::string_view namespace_id, const protocol::v1::MessageEnvelope& request,
      absl::Time deadline) override;

 private:
  void Prepare(grpc::ClientContext& context, absl::Time deadline) const;

  const std::unique_ptr<v1::MessageTransport::StubInterface> stub_;
  const Options options_;
};

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_MESSAGING_GRPC_TRANSPORT_H_
