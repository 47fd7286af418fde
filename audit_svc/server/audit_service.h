#ifndef SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_
#define SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_

#include "audit_svc/core/audit_log.h"
#include "audit_svc/core/checkpoint.h"
#include "common/server/access_policy.h"
#include "common/server/auth.h"
#include "common/server/long_poll_limiter.h"
#include "common/server/rpc_adapter.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"

namespace sharedos::audit::server {

// The gRPC adapter of sharedos.audit.v1.AuditLog: authenticate, admit by the access table
// (common/server/access_policy.cc), call the core, convert the status. Writers (the authorizer's,
// the envelope's and the grant store's service credentials) append, each record stamped with the
// writer and held to its record types; admins query and tail the namespaces they administer; the
// operator ("*") verifies and checkpoints the whole chain. Thread-safe (the core is).
class AuditService final : public common::server::CoreAdapter<v1::AuditLog, core::AuditLog> {
 public:
  // Writers append, as themselves; admins read within their namespaces; the operator the chain.
  SHAREDOS_UNARY_RPC(Append, core_.Append(*request, caller.address));
  // Admins within their namespaces; the grant store (service:grantstore) its own control-plane
  // records, to compare its state with them (docs/adr/0021): only with filter.control_plane_type.
  grpc::Status Query(grpc::ServerContext* context, const v1::QueryRequest* request,
                     v1::QueryResponse* response) override;
  grpc::Status Tail(grpc::ServerContext* context, const v1::TailRequest* request,
                    grpc::ServerWriter<v1::TailResponse>* writer) override;
  SHAREDOS_SCOPED_RPC(Verify, common::server::Target(),
                      core::VerifyWithCheckpoints(core_, *request,
                                                  checkpointer_ ? &checkpointer_->key() : nullptr));
  SHAREDOS_SCOPED_RPC(Checkpoint, common::server::Target(), MakeCheckpoint());

  // Borrows all three; `checkpointer` null: no checkpoint key (Checkpoint and Tail's
  // include_checkpoints are FAILED_PRECONDITION; Verify checks checkpoints only under a key the
  // request carries).
  AuditService(core::AuditLog& log, const common::server::Authenticator& authenticator,
               core::Checkpointer* checkpointer = nullptr)
      : CoreAdapter(log, authenticator), checkpointer_(checkpointer) {}

 private:
  absl::StatusOr<v1::CheckpointResponse> MakeCheckpoint();
  // Tail's include_checkpoints: writes the checkpoints made since `generation` (advancing it);
  // false when the caller has gone.
  bool WriteCheckpoints(int64_t& generation, grpc::ServerWriter<v1::TailResponse>* writer);

  core::Checkpointer* const checkpointer_;
  // Tail's long-polls, bounded per principal and in total.
  common::server::LongPollLimiter long_polls_;
};

}  // namespace sharedos::audit::server

#endif  // SHAREDOS_AUDIT_SVC_SERVER_AUDIT_SERVICE_H_
