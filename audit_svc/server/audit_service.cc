#include "audit_svc/server/audit_service.h"

#include "absl/status/status.h"
#include "common/status/grpc_status.h"
#include "common/status/status_macros.h"

namespace sharedos::audit::server {

using ::sharedos::common::ToGrpcStatus;

grpc::Status AuditService::Query(grpc::ServerContext* context, const v1::QueryRequest* request,
                                 v1::QueryResponse* response) {
  static const std::string kMethod = MethodName("Query");
  return rpc_.Unary(
      *context, kMethod, response,
      [&](const common::server::Principal& caller) -> absl::StatusOr<v1::QueryResponse> {
        RETURN_IF_ERROR(common::server::CheckTarget(
            kMethod, caller, common::server::OfNamespace(request->filter().namespace_id())));
        if (caller.role == common::server::Role::kService &&
            !request->filter().has_control_plane_type()) {
          return absl::PermissionDeniedError(
              "filter.control_plane_type: a service reads control-plane records only");
        }
        return core_.Query(*request);
      });
}

grpc::Status AuditService::Tail(grpc::ServerContext* context, const v1::TailRequest* request,
                                grpc::ServerWriter<v1::TailResponse>* writer) {
  static const std::string kMethod = MethodName("Tail");
  auto caller = rpc_.Caller(*context, kMethod);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::Status in_scope = common::server::CheckTarget(
      kMethod, *caller, common::server::OfNamespace(request->filter().namespace_id()));
  if (!in_scope.ok()) return ToGrpcStatus(in_scope);
  // A long-poll (until the caller leaves): bounded per principal (issue 34).
  auto slot = long_polls_.Acquire(caller->name, "AuditLog.Tail");
  if (!slot.ok()) return ToGrpcStatus(slot.status());
  absl::Status valid = core::AuditLog::ValidateFilter(request->filter());
  if (!valid.ok()) return ToGrpcStatus(valid);
  if (request->include_checkpoints() && checkpointer_ == nullptr) {
    return ToGrpcStatus(absl::FailedPreconditionError(
        "include_checkpoints: this audit_svc has no checkpoint key (--checkpoint_key_file)"));
  }
  int64_t checkpoints = checkpointer_ != nullptr ? checkpointer_->Generation() : 0;
  int64_t head = core_.HeadSequence();
  int64_t after = head;  // absent from_sequence: only what is appended from now on
  if (request->has_from_sequence()) {
    if (request->from_sequence() < 1) {
      return ToGrpcStatus(absl::InvalidArgumentError("from_sequence: below 1"));
    }
    if (request->from_sequence() > head + 1) {
      return ToGrpcStatus(absl::FailedPreconditionError("from_sequence: beyond the head + 1"));
    }
    after = request->from_sequence() - 1;
  }
  // Deliver what exists, then wait for the head to move; re-check cancellation at least every
  // 200 ms so a departed caller frees its thread promptly.
  while (!context->IsCancelled()) {
    // The head is read before the records: a short page then proves every matching record up
    // to it was delivered, and anything committed meanwhile lies beyond it.
    const int64_t head_before = core_.HeadSequence();
    auto records = core_.ReadAfter(request->filter(), after, 100);
    if (!records.ok()) return ToGrpcStatus(records.status());
    for (auto& record : *records) {
      after = record.sequence();
      v1::TailResponse response;
      *response.mutable_record() = std::move(record);
      if (!writer->Write(response)) return grpc::Status::OK;
    }
    if (request->include_checkpoints() && !WriteCheckpoints(checkpoints, writer)) {
      return grpc::Status::OK;
    }
    if (records->size() == 100) continue;
    // Non-matching records still advance the position, up to the head searched.
    after = std::max(after, head_before);
    core_.WaitForHeadAfter(after, absl::Milliseconds(200));
  }
  return grpc::Status::OK;
}

absl::StatusOr<v1::CheckpointResponse> AuditService::MakeCheckpoint() {
  if (checkpointer_ == nullptr) {
    return absl::FailedPreconditionError(
        "checkpoint: this audit_svc has no checkpoint key (--checkpoint_key_file)");
  }
  v1::CheckpointResponse response;
  ASSIGN_OR_RETURN(*response.mutable_checkpoint(), checkpointer_->CheckpointNow());
  response.set_public_key_pem(checkpointer_->key().public_key_pem());
  return response;
}

bool AuditService::WriteCheckpoints(int64_t& generation,
                                    grpc::ServerWriter<v1::TailResponse>* writer) {
  for (v1::SignedCheckpoint& checkpoint : checkpointer_->CheckpointsAfter(generation)) {
    v1::TailResponse response;
    *response.mutable_checkpoint() = std::move(checkpoint);
    if (!writer->Write(response)) return false;
  }
  return true;
}

}  // namespace sharedos::audit::server
