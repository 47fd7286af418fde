// The gRPC adapter of sharedos.grantstore.v1.GrantStore: authenticate the caller for the
// method's role, call the core, convert the status. Control-plane methods need an admin
// credential (acting only in the namespaces it administers), data-plane methods (LoadAuthority,
// ResolveGrant, TryConsume, GetUsage, CheckRevocations, RecordEscalation, AuthenticateCredential)
// the service credential; a reviewer credential may read and resolve the escalations addressed
// to it, a host credential read the status of those its scope covers. Another role is
// PERMISSION_DENIED, no or an unknown credential UNAUTHENTICATED. Thread-safe (the core and the
// authenticator are).

#ifndef SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
#define SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "capability/address.h"
#include "capability/errors.h"
#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::server {

// `call()` when `caller` administers `namespace_id`, else PERMISSION_DENIED.
template <typename Call>
auto InNamespace(const common::server::Principal& caller, const std::string& namespace_id,
                 Call&& call) -> decltype(call()) {
  if (!caller.Administers(namespace_id)) {
    return capability::errors::NamespaceNotAdministered(namespace_id);
  }
  return std::forward<Call>(call)();
}

// Whether `caller` may read `record`: an admin of its namespace, or the reviewer it is
// addressed to within the reviewer credential's namespaces.
inline bool MayRead(const common::server::Principal& caller, const v1::EscalationRecord& record) {
  if (caller.Administers(record.namespace_id())) return true;
  return caller.role == common::server::Role::kReviewer &&
         common::server::ScopeCovers(caller.scope.namespaces, record.namespace_id()) &&
         caller.address == capability::AddressKey(record.escalation().reviewer());
}

// Whether `caller` is a host whose scope covers `record`'s namespace and owner (the escalation's
// reviewer: always the context owner).
inline bool HostCovers(const common::server::Principal& caller,
                       const v1::EscalationRecord& record) {
  return caller.role == common::server::Role::kHost &&
         common::server::ScopeCovers(caller.scope.namespaces, record.namespace_id()) &&
         common::server::ScopeCovers(caller.scope.owners,
                                     capability::AddressKey(record.escalation().reviewer()));
}

// What a host reads of an escalation it covers: its id, status, execution and namespace —
// nothing of the reason, the requested authority or who decided.
inline v1::EscalationRecord StatusOnly(const v1::EscalationRecord& record) {
  v1::EscalationRecord status;
  status.set_escalation_id(record.escalation_id());
  status.set_namespace_id(record.namespace_id());
  status.set_execution_id(record.execution_id());
  status.set_status(record.status());
  return status;
}

class GrantStoreService final
    : public common::server::CoreAdapter<v1::GrantStore, core::GrantStoreCore> {
 public:
  // Control plane: operators of a namespace; mutations are audited with the caller as actor.
  SHAREDOS_UNARY_RPC(IssueGrant, kAdmin, InNamespace(caller, request->grant().namespace_id(), [&] {
                       return core_.IssueGrant(caller, *request);
                     }));
  SHAREDOS_UNARY_RPC(DeriveGrant, kAdmin, InNamespace(caller, request->namespace_id(), [&] {
                       return core_.DeriveGrant(caller, *request);
                     }));
  SHAREDOS_UNARY_RPC(RevokeGrant, kAdmin, InNamespace(caller, request->namespace_id(), [&] {
                       return core_.RevokeGrant(caller, *request);
                     }));
  SHAREDOS_UNARY_RPC(GetGrant, kAdmin, InNamespace(caller, request->namespace_id(), [&] {
                       return core_.GetGrant(*request);
                     }));
  SHAREDOS_UNARY_RPC(ListGrants, kAdmin, InNamespace(caller, request->filter().namespace_id(), [&] {
                       return core_.ListGrants(*request);
                     }));
  SHAREDOS_UNARY_RPC(PutHostPolicy, kAdmin,
                     InNamespace(caller, request->policy().namespace_id(),
                                 [&] { return core_.PutHostPolicy(caller, *request); }));
  SHAREDOS_UNARY_RPC(GetHostPolicy, kAdmin, InNamespace(caller, request->namespace_id(), [&] {
                       return core_.GetHostPolicy(*request);
                     }));

  // Escalations: admins of the namespace, reviewers for those addressed to them, and hosts — status
  // only (StatusOnly) — for those of the namespaces and owners their scope covers.
  grpc::Status ListEscalations(grpc::ServerContext* context,
                               const v1::ListEscalationsRequest* request,
                               v1::ListEscalationsResponse* response) override;
  grpc::Status GetEscalation(grpc::ServerContext* context, const v1::GetEscalationRequest* request,
                             v1::GetEscalationResponse* response) override;
  // The core decides who may resolve (the reviewer, or an admin on its behalf).
  grpc::Status ResolveEscalation(grpc::ServerContext* context,
                                 const v1::ResolveEscalationRequest* request,
                                 v1::ResolveEscalationResponse* response) override;

  // Credentials: admins, within their namespaces (the core checks the scope).
  SHAREDOS_UNARY_RPC(IssueCredential, kAdmin, core_.IssueCredential(caller, *request));
  SHAREDOS_UNARY_RPC(ListCredentials, kAdmin, core_.ListCredentials(caller, *request));
  SHAREDOS_UNARY_RPC(RevokeCredential, kAdmin, core_.RevokeCredential(caller, *request));
  SHAREDOS_UNARY_RPC(RotateCredential, kAdmin, core_.RotateCredential(caller, *request));

  // Data plane: the services deciding through the store (the authorizer).
  SHAREDOS_UNARY_RPC(LoadAuthority, kService, core_.LoadAuthority(*request));
  SHAREDOS_UNARY_RPC(ResolveGrant, kService, core_.ResolveGrant(*request));
  SHAREDOS_UNARY_RPC(TryConsume, kService, core_.TryConsume(*request));
  SHAREDOS_UNARY_RPC(GetUsage, kService, core_.GetUsage(*request));
  SHAREDOS_UNARY_RPC(CheckRevocations, kService, core_.CheckRevocations(*request));
  SHAREDOS_UNARY_RPC(RecordEscalation, kService, core_.RecordEscalation(caller, *request));
  SHAREDOS_UNARY_RPC(AuthenticateCredential, kService, core_.AuthenticateCredential(*request));

  // CoreAdapter(core, authenticator): both borrowed.
  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::grantstore::server

#endif  // SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
