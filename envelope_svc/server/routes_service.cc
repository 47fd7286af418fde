#include "envelope_svc/server/routes_service.h"

#include <string>
#include <utility>
#include <vector>

#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"

namespace sharedos::envelope::messaging {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace validation = ::sharedos::common::validation;

constexpr absl::Duration kMaxWait = absl::Seconds(30);

absl::Status CheckWorld(const std::string& namespace_id, const common::server::Scope& scope) {
  std::string id = namespace_id;
  RETURN_IF_ERROR(validation::CheckIdentifier(&id, "namespace_id"));
  if (id != namespace_id) {
    return absl::InvalidArgumentError("namespace_id: surrounding whitespace");
  }
  if (!common::server::ScopeCovers(scope.namespaces, namespace_id)) {
    return absl::PermissionDeniedError("namespace_id: outside the credential's scope");
  }
  return absl::OkStatus();
}

absl::StatusOr<pb::Address> CheckedAddress(bool present, const pb::Address& address,
                                           absl::string_view field) {
  pb::Address checked = address;
  RETURN_IF_ERROR(validation::ValidateAddress(present ? &checked : nullptr, field));
  return checked;
}

}  // namespace

absl::StatusOr<v1::ReceiveResponse> MessageRoutesCore::Receive(const v1::ReceiveRequest& request,
                                                               const common::server::Scope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckWorld(request.namespace_id(), scope));
  ASSIGN_OR_RETURN(const pb::Address receiver,
                   CheckedAddress(request.has_receiver(), request.receiver(), "receiver"));
  if (request.max() < 1 || request.max() > static_cast<int>(LocalMessageTransport::kMaxReceive)) {
    return absl::InvalidArgumentError("max: must be 1..64");
  }
  absl::Duration wait = absl::ZeroDuration();
  if (request.has_wait()) {
    absl::StatusOr<absl::Duration> parsed = common::FromProtoDuration(request.wait());
    if (!parsed.ok() || *parsed < absl::ZeroDuration() || *parsed > kMaxWait) {
      return absl::InvalidArgumentError("wait: must be 0s..30s");
    }
    wait = *parsed;
  }
  v1::ReceiveResponse response;
  for (pb::MessageEnvelope& message :
       transport_.Receive(request.namespace_id(), receiver, request.max(), absl::Now() + wait)) {
    *response.add_messages() = std::move(message);
  }
  return response;
}

absl::StatusOr<v1::RevokeRouteResponse> MessageRoutesCore::RevokeRoute(
    const v1::RevokeRouteRequest& request, const common::server::Scope& scope) {
  RETURN_IF_ERROR(validation::RejectUnknownFields(request, "request"));
  RETURN_IF_ERROR(CheckWorld(request.namespace_id(), scope));
  ASSIGN_OR_RETURN(const pb::Address sender,
                   CheckedAddress(request.has_sender(), request.sender(), "sender"));
  ASSIGN_OR_RETURN(const pb::Address receiver,
                   CheckedAddress(request.has_receiver(), request.receiver(), "receiver"));
  v1::RevokeRouteResponse response;
  response.set_was_leased(transport_.RevokeRoute(request.namespace_id(), sender, receiver));
  return response;
}

}  // namespace sharedos::envelope::messaging
