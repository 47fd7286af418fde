#ifndef SHAREDOS_AUDIT_SVC_CLIENT_LOG_AUDIT_WRITER_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_LOG_AUDIT_WRITER_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "audit_svc/client/audit_writer.h"
#include "audit_svc/core/audit_log.h"

namespace sharedos::audit::client {

// The AuditWriter of a service that runs in the same process as the audit log (sharedosd):
// records are appended to the AuditLog directly — the log's own validation, redaction guard,
// group commit and hash chain, with no channel or serialization in between.
//
// Pre-effect: OK only once AuditLog::Append returned OK, i.e. the record is committed in the
// one log at the log's durability (`full`: fsynced; `normal`: WAL, survives a process kill, not
// a power loss) — the remote mode's guarantee. A storage failure is UNAVAILABLE
// ("audit_unavailable: ...", the caller fails closed); a malformed event is INVALID_ARGUMENT.
// Post-effect: appended the same way; if the log cannot take it (UNAVAILABLE), it goes to
// `fallback` (a writer with a durable outbox that delivers later), so an outage delays the
// record but never loses it. A post-effect record handed to the fallback may reach the log
// after later ones. Every record is stamped with `writer` (the service's principal,
// "service:envelope") and must be of a type that writer produces (audit_svc/core/writer_policy.h),
// as over gRPC. Thread-safe; borrows both dependencies.
class LogAuditWriter : public AuditWriter {
 public:
  LogAuditWriter(core::AuditLog& log, AuditWriter& fallback, std::string writer)
      : log_(log), fallback_(fallback), writer_(std::move(writer)) {}

  absl::Status RecordPreEffect(sharedos::protocol::v1::AuditEvent event) override;
  absl::Status RecordPostEffect(sharedos::protocol::v1::AuditEvent event) override;
  // As RecordPreEffect: committed in the log before OK.
  absl::Status RecordControlPlane(sharedos::audit::v1::ControlPlaneEvent event) override;

 private:
  core::AuditLog& log_;
  AuditWriter& fallback_;
  const std::string writer_;
};

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_LOG_AUDIT_WRITER_H_
