#include "audit_svc/client/log_audit_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/random.h"

namespace sharedos::audit::client {

using ::sharedos::protocol::v1::AuditEvent;

absl::Status LogAuditWriter::Append(AuditEvent& event) {
  event.set_version("1");
  if (event.id().empty()) event.set_id(common::NewUuidV4());
  sharedos::audit::v1::AppendRequest request;
  *request.add_events() = event;
  absl::StatusOr<sharedos::audit::v1::AppendResponse> appended = log_.Append(request);
  if (appended.ok()) return absl::OkStatus();
  const absl::StatusCode code = appended.status().code();
  if (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kFailedPrecondition) {
    return appended.status();  // a bug in the caller, not an outage
  }
  return absl::UnavailableError(
      absl::StrCat("audit_unavailable: the audit log did not take the record (",
                   absl::StatusCodeToString(code), ")"));
}

absl::Status LogAuditWriter::RecordPreEffect(AuditEvent event) { return Append(event); }

absl::Status LogAuditWriter::RecordPostEffect(AuditEvent event) {
  absl::Status appended = Append(event);
  if (appended.code() != absl::StatusCode::kUnavailable) return appended;
  // The id is kept: if the log did commit it after all, the later delivery is a duplicate.
  return fallback_.RecordPostEffect(std::move(event));
}

}  // namespace sharedos::audit::client
