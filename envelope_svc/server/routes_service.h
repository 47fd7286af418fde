// sharedos.envelope.v1.MessageRoutes over the built-in LocalMessageTransport: a host receives
// the messages waiting for an agent and revokes route leases, within its credential's worlds.
// Thread-safe (the transport is).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_ROUTES_SERVICE_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_ROUTES_SERVICE_H_

#include "absl/status/statusor.h"
#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "envelope_svc/messaging/local_transport.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"

namespace sharedos::envelope::messaging {

// The RPCs' logic: validation, scope, the transport.
class MessageRoutesCore {
 public:
  // Borrows `transport`.
  explicit MessageRoutesCore(LocalMessageTransport& transport) : transport_(transport) {}

  // Errors: INVALID_ARGUMENT naming the field; PERMISSION_DENIED (namespace outside `scope`).
  absl::StatusOr<v1::ReceiveResponse> Receive(const v1::ReceiveRequest& request,
                                              const common::server::Scope& scope);
  absl::StatusOr<v1::RevokeRouteResponse> RevokeRoute(const v1::RevokeRouteRequest& request,
                                                      const common::server::Scope& scope);

 private:
  LocalMessageTransport& transport_;
};

class MessageRoutesService final
    : public common::server::CoreAdapter<v1::MessageRoutes, MessageRoutesCore> {
 public:
  SHAREDOS_UNARY_RPC(Receive, kHost, core_.Receive(*request, caller.scope));
  SHAREDOS_UNARY_RPC(RevokeRoute, kHost, core_.RevokeRoute(*request, caller.scope));

  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_ROUTES_SERVICE_H_
