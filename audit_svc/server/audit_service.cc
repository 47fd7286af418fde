#include "audit_svc/server/audit_service.h"

#include "absl/status/status.h"
#include "common/status/grpc_status.h"

namespace sharedos::audit::server {

using ::sharedos::common::ToGrpcStatus;

grpc::Status AuditService::Tail(grpc::ServerContext* context, const v1::TailRequest* request,
                                grpc::ServerWriter<v1::TailResponse>* writer) {
  auto caller = rpc_.Caller(*context, {common::server::Role::kAdmin});
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::Status valid = core::AuditLog::ValidateFilter(request->filter());
  if (!valid.ok()) return ToGrpcStatus(valid);
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
    if (records->size() == 100) continue;
    // Non-matching records still advance the position, up to the head searched.
    after = std::max(after, head_before);
    core_.WaitForHeadAfter(after, absl::Milliseconds(200));
  }
  return grpc::Status::OK;
}

}  // namespace sharedos::audit::server
