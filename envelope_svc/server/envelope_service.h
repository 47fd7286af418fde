// The gRPC adapter of sharedos.envelope.v1.Envelope: authenticate the caller (a host credential
// only, by the access table: none is UNAUTHENTICATED, one of another role PERMISSION_DENIED), hand
// its scope to the TurnEngine — which judges the turn's namespace, owner and authority against it
// (common::server::HostCovers) — convert the status. With a TurnForwarder (envelope replicas, ADR
// 0011), a per-turn call of a turn another replica owns goes there instead (turn_forwarder.h).
// Thread-safe (every dependency is).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_

#include "common/server/auth.h"
#include "common/server/long_poll_limiter.h"
#include "common/server/rpc_adapter.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/server/turn_forwarder.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"

// A per-turn unary RPC of the Envelope service (hosts, by the access table): `__VA_ARGS__` on
// this replica's engine when it owns the turn, else forwarded (TurnForwarder::Serve).
#define SHAREDOS_TURN_RPC(Method, ...)                                                             \
  grpc::Status Method(grpc::ServerContext* context, const v1::Method##Request* request,            \
                      v1::Method##Response* response) override {                                   \
    static const std::string kMethod = MethodName(#Method);                                        \
    return rpc_.Unary(                                                                             \
        *context, kMethod, response, [&](const ::sharedos::common::server::Principal& caller) {    \
          return TurnForwarder::Serve(forwarder_, *context, *request, &v1::Envelope::Stub::Method, \
                                      [&] { return __VA_ARGS__; });                                \
        });                                                                                        \
  }

namespace sharedos::envelope::server {

class EnvelopeService final : public common::server::CoreAdapter<v1::Envelope, core::TurnEngine> {
 public:
  // Each within the scope of the host's credential.
  SHAREDOS_UNARY_RPC(OpenTurn, core_.OpenTurn(*request, caller.scope, caller.name));
  SHAREDOS_TURN_RPC(InvokeTool, core_.InvokeTool(*request, caller.scope));
  SHAREDOS_TURN_RPC(FinishTurn, core_.FinishTurn(*request, caller.scope));
  SHAREDOS_TURN_RPC(CancelTurn, core_.CancelTurn(*request, caller.scope));
  SHAREDOS_TURN_RPC(GetTurn, core_.GetTurn(*request, caller.scope));
  SHAREDOS_TURN_RPC(SendMessage, core_.SendMessage(*request, caller.scope));
  SHAREDOS_TURN_RPC(InvokeResource, core_.InvokeResource(*request, caller.scope));
  SHAREDOS_TURN_RPC(ListToolNamespaces, core_.ListToolNamespaces(*request, caller.scope));
  SHAREDOS_TURN_RPC(UpdateToolNamespaces, core_.UpdateToolNamespaces(*request, caller.scope));
  grpc::Status WatchTurn(grpc::ServerContext* context, const v1::WatchTurnRequest* request,
                         grpc::ServerWriter<v1::WatchTurnResponse>* writer) override;

  // All borrowed; `forwarder` null: one replica, every turn served here.
  EnvelopeService(core::TurnEngine& core, const common::server::Authenticator& authenticator,
                  const TurnForwarder* forwarder = nullptr)
      : CoreAdapter(core, authenticator), forwarder_(forwarder) {}

 private:
  const TurnForwarder* const forwarder_;
  // WatchTurn's long-polls, bounded per principal and in total.
  common::server::LongPollLimiter long_polls_;
};

}  // namespace sharedos::envelope::server

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_
