#include "envelope_svc/messaging/grpc_transport.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"
#include "common/validation/unknown_fields.h"

namespace sharedos::envelope::messaging {
namespace {

// The failed RPC's code only: the transport's message is never copied.
absl::Status RpcFailed(absl::string_view method, const grpc::Status& status) {
  const absl::Status converted = common::FromGrpcStatus(status);
  const std::string message = absl::StrCat("MessageTransport.", method,
                                           " failed: ", absl::StatusCodeToString(converted.code()));
  if (converted.code() == absl::StatusCode::kDeadlineExceeded) {
    return absl::DeadlineExceededError(message);
  }
  return absl::UnavailableError(message);
}

}  // namespace

void GrpcMessageTransport::Prepare(grpc::ClientContext& context, absl::Time deadline) const {
  if (deadline != absl::InfiniteFuture()) context.set_deadline(absl::ToChronoTime(deadline));
  if (options_.prepare_context) options_.prepare_context(context);
}

absl::StatusOr<v1::MessageDeliveryResult> GrpcMessageTransport::Send(
    absl::string_view namespace_id, const protocol::v1::Address& owner,
    const protocol::v1::MessageEnvelope& message, absl::Time deadline) {
  grpc::ClientContext context;
  Prepare(context, deadline);
  v1::TransportSendRequest request;
  *request.mutable_message() = message;
  request.set_namespace_id(std::string(namespace_id));
  *request.mutable_owner() = owner;
  v1::TransportSendResponse response;
  grpc::Status status = stub_->Send(&context, request, &response);
  if (!status.ok()) return RpcFailed("Send", status);
  if (!common::validation::RejectUnknownFields(response, "response").ok()) {
    return absl::InvalidArgumentError("MessageTransport.Send: response carries unknown fields");
  }
  return response.receipt();
}

absl::StatusOr<protocol::v1::MessageEnvelope> GrpcMessageTransport::AwaitReply(
    absl::string_view namespace_id, const protocol::v1::MessageEnvelope& message,
    absl::Time deadline) {
  grpc::ClientContext context;
  Prepare(context, deadline);
  v1::AwaitReplyRequest request;
  *request.mutable_request() = message;
  request.set_namespace_id(std::string(namespace_id));
  v1::AwaitReplyResponse response;
  grpc::Status status = stub_->AwaitReply(&context, request, &response);
  if (!status.ok()) return RpcFailed("AwaitReply", status);
  if (!common::validation::RejectUnknownFields(response, "response").ok()) {
    return absl::InvalidArgumentError(
        "MessageTransport.AwaitReply: response carries unknown fields");
  }
  return response.reply();
}

}  // namespace sharedos::envelope::messaging
