#include "audit_svc/server/audit_service.h"

#include "absl/status/status.h"
#include "common/server/grpc_auth.h"
#include "common/status/grpc_status.h"

namespace sharedos::audit::server {

using ::sharedos::common::ToGrpcStatus;
using ::sharedos::common::server::RequireCaller;
using ::sharedos::common::server::Role;
namespace v1 = ::sharedos::audit::v1;

namespace {
// A status or a value, unpacked into the response: one line per RPC.
template <typename T>
grpc::Status Answer(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}
}  // namespace

grpc::Status AuditService::Append(grpc::ServerContext* context, const v1::AppendRequest* request,
                                  v1::AppendResponse* response) {
  auto caller = RequireCaller(authenticator_, *context, {Role::kService});
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Answer(log_.Append(*request), response);
}

grpc::Status AuditService::Query(grpc::ServerContext* context, const v1::QueryRequest* request,
                                 v1::QueryResponse* response) {
  auto caller = RequireCaller(authenticator_, *context, {Role::kAdmin});
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Answer(log_.Query(*request), response);
}

grpc::Status AuditService::Verify(grpc::ServerContext* context, const v1::VerifyRequest* request,
                                  v1::VerifyResponse* response) {
  auto caller = RequireCaller(authenticator_, *context, {Role::kAdmin});
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return Answer(log_.Verify(*request), response);
}

grpc::Status AuditService::Tail(grpc::ServerContext* context, const v1::TailRequest* request,
                                grpc::ServerWriter<v1::TailResponse>* writer) {
  auto caller = RequireCaller(authenticator_, *context, {Role::kAdmin});
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  absl::Status valid = core::AuditLog::ValidateFilter(request->filter());
  if (!valid.ok()) return ToGrpcStatus(valid);
  int64_t head = log_.HeadSequence();
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
    const int64_t head_before = log_.HeadSequence();
    auto records = log_.ReadAfter(request->filter(), after, 100);
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
    log_.WaitForHeadAfter(after, absl::Milliseconds(200));
  }
  return grpc::Status::OK;
}

}  // namespace sharedos::audit::server
