#include "envelope_svc/server/routes_service.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "capability/address.h"
#include "common/server/access_policy.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"
#include "envelope_svc/messaging/replicated_transport.h"

namespace sharedos::envelope::messaging {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;

constexpr absl::Duration kMaxWait = absl::Seconds(30);

// A world's id: an identifier, as given (a peer's world: the peer checked its caller's scope).
absl::Status CheckPeerWorld(const std::string& namespace_id) {
  std::string id = namespace_id;
  RETURN_IF_ERROR(validation::CheckIdentifier(&id, "namespace_id"));
  if (id != namespace_id) {
    return absl::InvalidArgumentError("namespace_id: surrounding whitespace");
  }
  return absl::OkStatus();
}

// A host's world: a valid id within the credential's scope.
absl::Status CheckWorld(const std::string& namespace_id, const common::server::Scope& scope) {
  RETURN_IF_ERROR(CheckPeerWorld(namespace_id));
  if (!common::server::ScopeCovers(scope.namespaces, namespace_id)) {
    return absl::PermissionDeniedError("namespace_id: outside the credential's scope");
  }
  return absl::OkStatus();
}

// A call's deadline as absl::Time (infinite when it has none).
absl::Time DeadlineOf(const grpc::ServerContext& context) {
  if (context.deadline() == std::chrono::system_clock::time_point::max()) {
    return absl::InfiniteFuture();
  }
  return absl::FromChrono(context.deadline());
}

absl::StatusOr<pb::Address> CheckedAddress(bool present, const pb::Address& address,
                                           absl::string_view field) {
  pb::Address checked = address;
  RETURN_IF_ERROR(validation::ValidateAddress(present ? &checked : nullptr, field));
  return checked;
}

// The owners a call reaches: `owner` when given (within the host's scope), else every owner the
// scope covers. Errors: INVALID_ARGUMENT (a malformed owner); PERMISSION_DENIED (outside scope).
absl::StatusOr<LocalMessageTransport::Owners> OwnersOf(bool has_owner, const pb::Address& owner,
                                                       const common::server::Scope& scope) {
  if (!has_owner) return scope.owners;
  ASSIGN_OR_RETURN(const pb::Address checked, CheckedAddress(true, owner, "owner"));
  const std::string key = capability::AddressKey(checked);
  if (!common::server::ScopeCovers(scope.owners, key)) {
    return absl::PermissionDeniedError(
        absl::StrCat("owner: \"", key, "\" is outside the credential's scope"));
  }
  return LocalMessageTransport::Owners{key};
}

// The one owner whose route a RevokeRoute names: `owner`, the scope's one owner, or "*" (every
// owner's) for a host of every owner. Errors: as OwnersOf; INVALID_ARGUMENT (no owner from a host
// of several).
absl::StatusOr<std::string> RouteOwnerOf(const v1::RevokeRouteRequest& request,
                                         const common::server::Scope& scope) {
  if (request.has_owner()) {
    ASSIGN_OR_RETURN(LocalMessageTransport::Owners owners, OwnersOf(true, request.owner(), scope));
    return owners.front();
  }
  if (scope.owners.size() == 1) return scope.owners.front();
  return absl::InvalidArgumentError(
      "owner: required — this host credential serves several owners; name whose route to revoke");
}

}  // namespace

absl::Status MessageRoutesCore::CheckReceive(const v1::ReceiveRequest& request,
                                             const common::server::Scope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckWorld(request.namespace_id(), scope));
  RETURN_IF_ERROR(CheckedAddress(request.has_receiver(), request.receiver(), "receiver").status());
  RETURN_IF_ERROR(OwnersOf(request.has_owner(), request.owner(), scope).status());
  if (request.max() < 1 || request.max() > static_cast<int>(LocalMessageTransport::kMaxReceive)) {
    return absl::InvalidArgumentError("max: must be 1..64");
  }
  if (request.has_wait()) {
    absl::StatusOr<absl::Duration> parsed = common::FromProtoDuration(request.wait());
    if (!parsed.ok() || *parsed < absl::ZeroDuration() || *parsed > kMaxWait) {
      return absl::InvalidArgumentError("wait: must be 0s..30s");
    }
  }
  return absl::OkStatus();
}

absl::Status MessageRoutesCore::CheckRevokeRoute(const v1::RevokeRouteRequest& request,
                                                 const common::server::Scope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckWorld(request.namespace_id(), scope));
  RETURN_IF_ERROR(CheckedAddress(request.has_sender(), request.sender(), "sender").status());
  RETURN_IF_ERROR(CheckedAddress(request.has_receiver(), request.receiver(), "receiver").status());
  return RouteOwnerOf(request, scope).status();
}

absl::StatusOr<v1::ReceiveResponse> MessageRoutesCore::Receive(const v1::ReceiveRequest& request,
                                                               const common::server::Scope& scope) {
  RETURN_IF_ERROR(CheckReceive(request, scope));
  ASSIGN_OR_RETURN(const pb::Address receiver,
                   CheckedAddress(request.has_receiver(), request.receiver(), "receiver"));
  absl::Duration wait = absl::ZeroDuration();
  if (request.has_wait()) {
    ASSIGN_OR_RETURN(wait, common::FromProtoDuration(request.wait()));
  }
  ASSIGN_OR_RETURN(const LocalMessageTransport::Owners owners,
                   OwnersOf(request.has_owner(), request.owner(), scope));
  v1::ReceiveResponse response;
  for (LocalMessageTransport::Received& received : transport_.Receive(
           request.namespace_id(), receiver, owners, request.max(), absl::Now() + wait)) {
    *response.add_messages() = std::move(received.message);
    std::optional<pb::Address> owner = capability::AddressFromKey(received.owner);
    *response.add_owners() = owner.value_or(pb::Address());
  }
  return response;
}

absl::StatusOr<v1::RevokeRouteResponse> MessageRoutesCore::RevokeRoute(
    const v1::RevokeRouteRequest& request, const common::server::Scope& scope) {
  RETURN_IF_ERROR(CheckRevokeRoute(request, scope));
  ASSIGN_OR_RETURN(const pb::Address sender,
                   CheckedAddress(request.has_sender(), request.sender(), "sender"));
  ASSIGN_OR_RETURN(const pb::Address receiver,
                   CheckedAddress(request.has_receiver(), request.receiver(), "receiver"));
  ASSIGN_OR_RETURN(const std::string owner, RouteOwnerOf(request, scope));
  ASSIGN_OR_RETURN(const bool was_leased,
                   transport_.RevokeRoute(request.namespace_id(), owner, sender, receiver));
  v1::RevokeRouteResponse response;
  response.set_was_leased(was_leased);
  return response;
}

std::string MessageRoutesService::HomeOf(const std::string& namespace_id) const {
  if (forwarder_ == nullptr) return "";
  return WorldHome(namespace_id, forwarder_->replicas());
}

grpc::Status MessageRoutesService::Receive(grpc::ServerContext* context,
                                           const v1::ReceiveRequest* request,
                                           v1::ReceiveResponse* response) {
  static const std::string kMethod = MethodName("Receive");
  return rpc_.Unary(
      *context, kMethod, response,
      [&](const common::server::Principal& caller) -> absl::StatusOr<v1::ReceiveResponse> {
        RETURN_IF_ERROR(MessageRoutesCore::CheckReceive(*request, caller.scope));
        // A long-poll (up to 30 s): bounded per principal (issue 34).
        ASSIGN_OR_RETURN(common::server::LongPollLimiter::Slot slot,
                         long_polls_.Acquire(caller.name, "MessageRoutes.Receive"));
        return server::TurnForwarder::ServeWorld(
            forwarder_, *context, HomeOf(request->namespace_id()), *request,
            &v1::MessageRoutes::Stub::Receive,
            [&] { return core_.Receive(*request, caller.scope); });
      });
}

grpc::Status MessageRoutesService::RevokeRoute(grpc::ServerContext* context,
                                               const v1::RevokeRouteRequest* request,
                                               v1::RevokeRouteResponse* response) {
  static const std::string kMethod = MethodName("RevokeRoute");
  return rpc_.Unary(
      *context, kMethod, response,
      [&](const common::server::Principal& caller) -> absl::StatusOr<v1::RevokeRouteResponse> {
        RETURN_IF_ERROR(MessageRoutesCore::CheckRevokeRoute(*request, caller.scope));
        return server::TurnForwarder::ServeWorld(
            forwarder_, *context, HomeOf(request->namespace_id()), *request,
            &v1::MessageRoutes::Stub::RevokeRoute,
            [&] { return core_.RevokeRoute(*request, caller.scope); });
      });
}

absl::StatusOr<v1::TransportSendResponse> PeerTransportCore::Send(
    const v1::TransportSendRequest& request, absl::Time deadline) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckPeerWorld(request.namespace_id()));
  pb::MessageEnvelope message = request.message();
  RETURN_IF_ERROR(
      validation::ValidateMessageEnvelope(request.has_message() ? &message : nullptr, "message"));
  pb::Address owner = request.owner();
  RETURN_IF_ERROR(validation::ValidateAddress(request.has_owner() ? &owner : nullptr, "owner"));
  ASSIGN_OR_RETURN(v1::MessageDeliveryResult receipt,
                   transport_.Send(request.namespace_id(), owner, message, deadline));
  v1::TransportSendResponse response;
  *response.mutable_receipt() = std::move(receipt);
  return response;
}

absl::StatusOr<v1::AwaitReplyResponse> PeerTransportCore::AwaitReply(
    const v1::AwaitReplyRequest& request, absl::Time deadline) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckPeerWorld(request.namespace_id()));
  pb::MessageEnvelope sent = request.request();
  RETURN_IF_ERROR(
      validation::ValidateMessageEnvelope(request.has_request() ? &sent : nullptr, "request"));
  ASSIGN_OR_RETURN(pb::MessageEnvelope reply,
                   transport_.AwaitReply(request.namespace_id(), sent,
                                         std::min(deadline, absl::Now() + kMaxWait)));
  v1::AwaitReplyResponse response;
  *response.mutable_reply() = std::move(reply);
  return response;
}

grpc::Status PeerTransportService::Send(grpc::ServerContext* context,
                                        const v1::TransportSendRequest* request,
                                        v1::TransportSendResponse* response) {
  static const std::string kMethod = MethodName("Send");
  return rpc_.Unary(*context, kMethod, response, [&](const common::server::Principal&) {
    return core_.Send(*request, DeadlineOf(*context));
  });
}

grpc::Status PeerTransportService::AwaitReply(grpc::ServerContext* context,
                                              const v1::AwaitReplyRequest* request,
                                              v1::AwaitReplyResponse* response) {
  static const std::string kMethod = MethodName("AwaitReply");
  return rpc_.Unary(*context, kMethod, response, [&](const common::server::Principal&) {
    return core_.AwaitReply(*request, DeadlineOf(*context));
  });
}

}  // namespace sharedos::envelope::messaging
