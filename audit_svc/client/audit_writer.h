#ifndef SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_H_
#define SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_H_

#include "absl/status/status.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"

namespace sharedos::audit::client {

// How every SharedOS service writes to the one audit log (architecture §3, seed ADR 0023).
// The writer stamps `version` "1" and, when empty, a fresh UUID `id` (ids are minted by the
// writer, never derived from content; audit_svc deduplicates on them, so a retried delivery
// never doubles a record). Implementations are thread-safe.
class AuditWriter {
 public:
  virtual ~AuditWriter() = default;

  // Pre-effect records (authority.resolved, authorization.checked, tool.catalog.listed): returns
  // OK only once the event is durable — appended
  // to audit_svc (remote mode) or fsynced into this writer's outbox (local mode).
  // Errors: UNAVAILABLE (neither could take it; the caller refuses the operation with
  // `audit_unavailable`, fail closed); INVALID_ARGUMENT (the event is malformed or carries
  // redacted data — a bug in the caller).
  virtual absl::Status RecordPreEffect(sharedos::protocol::v1::AuditEvent event) = 0;

  // Post-effect records (tool.invoked, turn.ended, envelope refusals, escalation.requested):
  // stored in the durable outbox and delivered in order, with retry, when audit_svc is reachable.
  // The caller's result never depends on it; an error (outbox full or unwritable) is for the
  // caller to report, not to act on.
  virtual absl::Status RecordPostEffect(sharedos::protocol::v1::AuditEvent event) = 0;

  // The grant store's control-plane records (grant.issued … escalation.resolved): not protocol
  // "1" events (docs/adr/0008), but in the same log and hash chain, idempotent on the same ids.
  // Pre-effect semantics: the writer stamps a fresh UUID `id` when empty and returns OK only
  // once the record is durable, exactly as RecordPreEffect; the same errors (UNAVAILABLE: the
  // mutation is refused, fail closed; INVALID_ARGUMENT: malformed or redacted data).
  virtual absl::Status RecordControlPlane(sharedos::audit::v1::ControlPlaneEvent event) = 0;
};

}  // namespace sharedos::audit::client

#endif  // SHAREDOS_AUDIT_SVC_CLIENT_AUDIT_WRITER_H_
