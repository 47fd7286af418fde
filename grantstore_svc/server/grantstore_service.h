// The gRPC adapter of sharedos.grantstore.v1.GrantStore: authenticate the caller, admit it by the
// access table (common/server/access_policy.cc: control-plane methods for admins of the
// namespace, data-plane methods for the authorizer, escalations also for the reviewer they are
// addressed to and — status only — the hosts whose scope covers them), call the core, convert the
// status. Another role is PERMISSION_DENIED, no or an unknown credential UNAUTHENTICATED.
// Thread-safe (the core and the authenticator are).

#ifndef SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
#define SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "capability/address.h"
#include "capability/errors.h"
#include "common/server/access_policy.h"
#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "grantstore_svc/core/grant_store_core.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::server {

// What an escalation record is, as a scope judges it: its namespace, and its owner — the reviewer
// it is addressed to (always the escalated turn's context owner).
inline common::server::Target TargetOf(const v1::EscalationRecord& record) {
  return {record.namespace_id(), capability::AddressKey(record.escalation().reviewer()), ""};
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
  // Control plane: operators of the namespace (the access table's rows, access_policy.cc);
  // mutations are audited with the caller as actor.
  SHAREDOS_SCOPED_RPC(IssueGrant, common::server::OfNamespace(request->grant().namespace_id()),
                      core_.IssueGrant(caller, *request));
  SHAREDOS_SCOPED_RPC(DeriveGrant, common::server::OfNamespace(request->namespace_id()),
                      core_.DeriveGrant(caller, *request));
  SHAREDOS_SCOPED_RPC(RevokeGrant, common::server::OfNamespace(request->namespace_id()),
                      core_.RevokeGrant(caller, *request));
  SHAREDOS_SCOPED_RPC(GetGrant, common::server::OfNamespace(request->namespace_id()),
                      core_.GetGrant(*request));
  SHAREDOS_SCOPED_RPC(ListGrants, common::server::OfNamespace(request->filter().namespace_id()),
                      core_.ListGrants(*request));
  SHAREDOS_SCOPED_RPC(PutHostPolicy, common::server::OfNamespace(request->policy().namespace_id()),
                      core_.PutHostPolicy(caller, *request));
  SHAREDOS_SCOPED_RPC(GetHostPolicy, common::server::OfNamespace(request->namespace_id()),
                      core_.GetHostPolicy(*request));

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

  // Credentials: admins within their namespaces; anyone rotates its own (the core judges each
  // credential).
  SHAREDOS_UNARY_RPC(IssueCredential, core_.IssueCredential(caller, *request));
  SHAREDOS_UNARY_RPC(ListCredentials, core_.ListCredentials(caller, *request));
  SHAREDOS_UNARY_RPC(RevokeCredential, core_.RevokeCredential(caller, *request));
  SHAREDOS_UNARY_RPC(RotateCredential, core_.RotateCredential(caller, *request));

  // A store restored behind the audit log, accepted: the operator ("*") only (docs/adr/0021).
  SHAREDOS_SCOPED_RPC(AcceptRestore, common::server::Target(),
                      core_.AcceptRestore(caller, *request));

  // Data plane: the authorizer deciding through the store; credential lookups of the services.
  SHAREDOS_UNARY_RPC(LoadAuthority, core_.LoadAuthority(*request));
  SHAREDOS_UNARY_RPC(ResolveGrant, core_.ResolveGrant(*request));
  SHAREDOS_UNARY_RPC(TryConsume, core_.TryConsume(*request));
  SHAREDOS_SCOPED_RPC(GetUsage, common::server::OfNamespace(request->namespace_id()),
                      core_.GetUsage(*request));
  SHAREDOS_UNARY_RPC(CheckRevocations, core_.CheckRevocations(*request));
  SHAREDOS_UNARY_RPC(RecordEscalation, core_.RecordEscalation(caller, *request));
  SHAREDOS_UNARY_RPC(AuthenticateCredential, core_.AuthenticateCredential(*request));

  // CoreAdapter(core, authenticator): both borrowed.
  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::grantstore::server

#endif  // SHAREDOS_GRANTSTORE_SVC_SERVER_GRANTSTORE_SERVICE_H_
