#ifndef SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_
#define SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_

#include "audit_svc/core/audit_log.h"
#include "common/server/auth.h"
#include "common/server/rpc_adapter.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::audit::server {

// The gRPC adapter of sharedos.audit.v1.AuditLog: authenticate, call the core, convert the
// status. Writers (service credential) append; operators (admin credential) query, tail and
// verify. Thread-safe (the core is).
class AuditService final : public common::server::CoreAdapter<v1::AuditLog, core::AuditLog> {
 public:
  // Writers (every service) append; operators read.
  SHAREDOS_UNARY_RPC(Append, kService, core_.Append(*request));
  SHAREDOS_UNARY_RPC(Query, kAdmin, core_.Query(*request));
  grpc::Status Tail(grpc::ServerContext* context, const v1::TailRequest* request,
                    grpc::ServerWriter<v1::TailResponse>* writer) override;
  SHAREDOS_UNARY_RPC(Verify, kAdmin, core_.Verify(*request));

  // CoreAdapter(core, authenticator): both borrowed.
  using CoreAdapter::CoreAdapter;
};

}  // namespace sharedos::audit::server

#endif  // SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_
