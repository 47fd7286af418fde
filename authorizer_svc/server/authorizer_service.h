// The gRPC adapter of sharedos.authorizer.v1.Authorizer: authenticate the caller (only the
// envelope's service credential, by the access table: none is UNAUTHENTICATED, any other
// PERMISSION_DENIED), call the AuthorizerCore, convert the status. Thread-safe (both dependencies
// are).

#ifndef SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVICE_H_
#define SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVICE_H_

#include "authorizer_svc/core/authorizer_core.h"
#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"

namespace sharedos::authorizer::server {

class AuthorizerService final
    : public common::server::CoreAdapter<v1::Authorizer, core::AuthorizerCore> {
 public:
  SHAREDOS_UNARY_RPC(OpenTurnAuthority, core_.OpenTurnAuthority(*request));
  SHAREDOS_UNARY_RPC(CloseTurnAuthority, core_.CloseTurnAuthority(*request));
  SHAREDOS_UNARY_RPC(Authorize, core_.Authorize(*request));
  SHAREDOS_UNARY_RPC(Discover, core_.Discover(*request));
  SHAREDOS_UNARY_RPC(AdmitTurn, core_.AdmitTurn(*request));
  SHAREDOS_UNARY_RPC(Reach, core_.Reach(*request));
  SHAREDOS_UNARY_RPC(RecordEscalation, core_.RecordEscalation(*request));

  // CoreAdapter(core, authenticator): both borrowed.
  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::authorizer::server

#endif  // SHAREDOS_AUTHORIZER_SVC_SERVER_AUTHORIZER_SERVICE_H_
