// The gRPC adapter of sharedos.envelope.v1.Envelope: authenticate the caller (a host
// credential only: none is UNAUTHENTICATED, one of another role PERMISSION_DENIED), hand its scope
// to the TurnEngine, convert the status. Thread-safe (both dependencies are).

#ifndef SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_
#define SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_

#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "envelope_svc/core/turn_engine.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"

namespace sharedos::envelope::server {

class EnvelopeService final : public common::server::CoreAdapter<v1::Envelope, core::TurnEngine> {
 public:
  // Each within the scope of the host's credential.
  SHAREDOS_UNARY_RPC(OpenTurn, kHost, core_.OpenTurn(*request, caller.scope));
  SHAREDOS_UNARY_RPC(InvokeTool, kHost, core_.InvokeTool(*request, caller.scope));
  SHAREDOS_UNARY_RPC(FinishTurn, kHost, core_.FinishTurn(*request, caller.scope));
  SHAREDOS_UNARY_RPC(CancelTurn, kHost, core_.CancelTurn(*request, caller.scope));
  SHAREDOS_UNARY_RPC(GetTurn, kHost, core_.GetTurn(*request, caller.scope));
  SHAREDOS_UNARY_RPC(SendMessage, kHost, core_.SendMessage(*request, caller.scope));
  SHAREDOS_UNARY_RPC(InvokeResource, kHost, core_.InvokeResource(*request, caller.scope));
  SHAREDOS_UNARY_RPC(ListToolNamespaces, kHost, core_.ListToolNamespaces(*request, caller.scope));
  SHAREDOS_UNARY_RPC(UpdateToolNamespaces, kHost,
                     core_.UpdateToolNamespaces(*request, caller.scope));
  grpc::Status WatchTurn(grpc::ServerContext* context, const v1::WatchTurnRequest* request,
                         grpc::ServerWriter<v1::WatchTurnResponse>* writer) override;

  // CoreAdapter(core, authenticator): both borrowed.
  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::envelope::server

#endif  // SHAREDOS_ENVELOPE_SVC_SERVER_ENVELOPE_SERVICE_H_
