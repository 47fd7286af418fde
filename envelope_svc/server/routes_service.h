// sharedos.envelope.v1.MessageRoutes over the built-in LocalMessageTransport: a host receives
// the messages waiting for an agent and revokes route leases, within its credential's worlds.
// Across envelope replicas (ADR 0013) a world's messaging lives at its home replica
// (replicated_transport.h): a MessageRoutes call is checked where it arrives, then served at the
// home (TurnForwarder::ServeWorld); and every replica serves sharedos.envelope.v1.MessageTransport
// to its peers (PeerTransportService, service credentials only) over its own built-in transport,
// so a peer's dispatches and waits of a world homed here land in it. Thread-safe (the transport
// is).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_ROUTES_SERVICE_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_ROUTES_SERVICE_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/server/auth.h"
#include "common/server/long_poll_limiter.h"
#include "common/server/rpc_adapter.h"
#include "envelope_svc/messaging/local_transport.h"
#include "envelope_svc/server/turn_forwarder.h"
#include "sharedos/envelope/v1/messaging.grpc.pb.h"

namespace sharedos::envelope::messaging {

// The RPCs' logic: validation, scope, the transport.
class MessageRoutesCore {
 public:
  // Borrows `transport`.
  explicit MessageRoutesCore(LocalMessageTransport& transport) : transport_(transport) {}

  // Errors: INVALID_ARGUMENT naming the field; PERMISSION_DENIED (namespace outside `scope`).
  static absl::Status CheckReceive(const v1::ReceiveRequest& request,
                                   const common::server::Scope& scope);
  static absl::Status CheckRevokeRoute(const v1::RevokeRouteRequest& request,
                                       const common::server::Scope& scope);

  // Checked, then served by this replica's transport. Errors: those of the checks.
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
  // Host credentials, within their worlds; checked here, served at the world's home.
  grpc::Status Receive(grpc::ServerContext* context, const v1::ReceiveRequest* request,
                       v1::ReceiveResponse* response) override;
  grpc::Status RevokeRoute(grpc::ServerContext* context, const v1::RevokeRouteRequest* request,
                           v1::RevokeRouteResponse* response) override;

  // All borrowed; `forwarder` null: one replica, every world served here.
  MessageRoutesService(MessageRoutesCore& core, const common::server::Authenticator& authenticator,
                       const server::TurnForwarder* forwarder = nullptr)
      : CoreAdapter(core, authenticator), forwarder_(forwarder) {}

 private:
  // The replica that homes `namespace_id` ("" with no forwarder: this one).
  std::string HomeOf(const std::string& namespace_id) const;

  const server::TurnForwarder* const forwarder_;
  // Receive's long-polls, bounded per principal and in total.
  common::server::LongPollLimiter long_polls_;
};

// sharedos.envelope.v1.MessageTransport as a replica serves it to its peers: this replica's
// built-in transport, never forwarded again.
class PeerTransportCore {
 public:
  // The longest a peer's AwaitReply waits here, whatever its deadline.
  static constexpr absl::Duration kMaxWait = absl::Minutes(10);

  // Borrows `transport`.
  explicit PeerTransportCore(LocalMessageTransport& transport) : transport_(transport) {}

  // Errors: INVALID_ARGUMENT naming the field (unknown fields, namespace_id, message / request
  // not a valid protocol "1" MessageEnvelope); those of the transport (AwaitReply: NOT_FOUND,
  // DEADLINE_EXCEEDED).
  absl::StatusOr<v1::TransportSendResponse> Send(const v1::TransportSendRequest& request,
                                                 absl::Time deadline);
  absl::StatusOr<v1::AwaitReplyResponse> AwaitReply(const v1::AwaitReplyRequest& request,
                                                    absl::Time deadline);

 private:
  LocalMessageTransport& transport_;
};

class PeerTransportService final
    : public common::server::CoreAdapter<v1::MessageTransport, PeerTransportCore> {
 public:
  // Service credentials only (the replicas' --replica_token_file); the call's deadline bounds
  // the transport's wait.
  grpc::Status Send(grpc::ServerContext* context, const v1::TransportSendRequest* request,
                    v1::TransportSendResponse* response) override;
  grpc::Status AwaitReply(grpc::ServerContext* context, const v1::AwaitReplyRequest* request,
                          v1::AwaitReplyResponse* response) override;

  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::envelope::messaging

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_ROUTES_SERVICE_H_
