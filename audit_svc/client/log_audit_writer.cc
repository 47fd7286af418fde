#include "audit_svc/client/log_audit_writer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crypto/random.h"

namespace sharedos::audit::client {

using ::sharedos::protocol::v1::AuditEvent;

namespace {

// The log's answer as the writer's: a malformed event or a conflicting id is the caller's bug,
// anything else an outage.
absl::Status Outcome(const absl::Status& appended) {
  if (appended.ok()) return absl::OkStatus();
  const absl::StatusCode code = appended.code();
  if (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kFailedPrecondition ||
      code == absl::StatusCode::kPermissionDenied) {
    return appended;  // a bug in the caller, not an outage
  }
  return absl::UnavailableError(
      absl::StrCat("audit_unavailable: the audit log did not take the record (",
                   absl::StatusCodeToString(code), ")"));
}

void Stamp(AuditEvent& event) {
  event.set_version("1");
  if (event.id().empty()) event.set_id(common::NewUuidV4());
}

}  // namespace

absl::Status LogAuditWriter::RecordPreEffect(AuditEvent event) {
  Stamp(event);
  return Outcome(log_.AppendEvent(std::move(event), writer_).status());
}

absl::Status LogAuditWriter::RecordControlPlane(sharedos::audit::v1::ControlPlaneEvent event) {
  if (event.id().empty()) event.set_id(common::NewUuidV4());
  return Outcome(log_.AppendControlPlane(std::move(event), writer_).status());
}

absl::Status LogAuditWriter::RecordPostEffect(AuditEvent event) {
  Stamp(event);
  // A copy goes to the log: the record is kept for the fallback.
  absl::Status appended = Outcome(log_.AppendEvent(event, writer_).status());
  if (appended.code() != absl::StatusCode::kUnavailable) return appended;
  // The id is kept: if the log did commit it after all, the later delivery is a duplicate.
  return fallback_.RecordPostEffect(std::move(event));
}

}  // namespace sharedos::audit::client
