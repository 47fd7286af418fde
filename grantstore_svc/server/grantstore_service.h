// The gRPC adapter of sharedos.grantstore.v1.GrantStore: authenticate the caller for the
// method's role, call the core, convert the status. Control-plane methods need the admin
// credential, data-plane methods (LoadAuthority, ResolveGrant, TryConsume, GetUsage,
// CheckRevocations, RecordEscalation, AuthenticateCredential) the service credential; another role
// is PERMISSION_DENIED, no or an unknown credential UNAUTHENTICATED. Thread-safe (the core and the authenticator are).

#ifndef SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
#define SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_

#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::server {

// The core's Caller for an authenticated principal: control-plane events name it as their actor.
inline core::Caller Actor(const common::server::Principal& caller) {
  return core::Caller{caller.name};
}

class GrantStoreService final
    : public common::server::CoreAdapter<v1::GrantStore, core::GrantStoreCore> {
 public:
  // Control plane: operators; mutations are audited with the caller's name as their actor.
  SHAREDOS_UNARY_RPC(IssueGrant, kAdmin, core_.IssueGrant(Actor(caller), *request));
  SHAREDOS_UNARY_RPC(DeriveGrant, kAdmin, core_.DeriveGrant(Actor(caller), *request));
  SHAREDOS_UNARY_RPC(RevokeGrant, kAdmin, core_.RevokeGrant(Actor(caller), *request));
  SHAREDOS_UNARY_RPC(GetGrant, kAdmin, core_.GetGrant(*request));
  SHAREDOS_UNARY_RPC(ListGrants, kAdmin, core_.ListGrants(*request));
  SHAREDOS_UNARY_RPC(PutHostPolicy, kAdmin, core_.PutHostPolicy(Actor(caller), *request));
  SHAREDOS_UNARY_RPC(GetHostPolicy, kAdmin, core_.GetHostPolicy(*request));
  SHAREDOS_UNARY_RPC(ListEscalations, kAdmin, core_.ListEscalations(*request));
  SHAREDOS_UNARY_RPC(GetEscalation, kAdmin, core_.GetEscalation(*request));
  SHAREDOS_UNARY_RPC(ResolveEscalation, kAdmin, core_.ResolveEscalation(Actor(caller), *request));

  // Data plane: the services deciding through the store (the authorizer).
  SHAREDOS_UNARY_RPC(LoadAuthority, kService, core_.LoadAuthority(*request));
  SHAREDOS_UNARY_RPC(ResolveGrant, kService, core_.ResolveGrant(*request));
  SHAREDOS_UNARY_RPC(TryConsume, kService, core_.TryConsume(*request));
  SHAREDOS_UNARY_RPC(GetUsage, kService, core_.GetUsage(*request));
  SHAREDOS_UNARY_RPC(CheckRevocations, kService, core_.CheckRevocations(*request));
  SHAREDOS_UNARY_RPC(RecordEscalation, kService, core_.RecordEscalation(Actor(caller), *request));

  // CoreAdapter(core, authenticator): both borrowed.
  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::grantstore::server

#endif  // SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
