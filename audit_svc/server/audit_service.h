#ifndef SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_
#define SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_

#include "audit_svc/core/audit_log.h"
#include "common/server/auth.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::audit::server {

// The gRPC adapter of sharedos.audit.v1.AuditLog: authenticate, call the core, convert the
// status. Writers (service credential) append; operators (admin credential) query, tail and
// verify. Thread-safe (the core is).
class AuditService final : public sharedos::audit::v1::AuditLog::Service {
 public:
  AuditService(core::AuditLog& log, const common::server::Authenticator& authenticator)
      : log_(log), authenticator_(authenticator) {}

  grpc::Status Append(grpc::ServerContext* context, const sharedos::audit::v1::AppendRequest* request,
                      sharedos::audit::v1::AppendResponse* response) override;
  grpc::Status Query(grpc::ServerContext* context, const sharedos::audit::v1::QueryRequest* request,
                     sharedos::audit::v1::QueryResponse* response) override;
  grpc::Status Tail(grpc::ServerContext* context, const sharedos::audit::v1::TailRequest* request,
                    grpc::ServerWriter<sharedos::audit::v1::TailResponse>* writer) override;
  grpc::Status Verify(grpc::ServerContext* context, const sharedos::audit::v1::VerifyRequest* request,
                      sharedos::audit::v1::VerifyResponse* response) override;

 private:
  core::AuditLog& log_;
  const common::server::Authenticator& authenticator_;
};

}  // namespace sharedos::audit::server

#endif  // SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_
