// The control-plane record (sharedos.audit.v1.ControlPlaneEvent): what the grant store did to
// the trusted state. It shares the audit log and its hash chain with protocol "1" events, but it
// is not one: protocol "1" carries only the reference's eleven event types, and a "1" reader is
// never handed a control-plane record (docs/adr/0008-control-plane-records-outside-protocol-1.md).

#ifndef SHAREDOS_AUDIT_SVC_CORE_CONTROL_PLANE_EVENT_H_
#define SHAREDOS_AUDIT_SVC_CORE_CONTROL_PLANE_EVENT_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::audit::core {

// The record's rules, as the log and every writer apply them: no unknown fields; id, trace_id,
// namespace_id identifiers; type and outcome set and known; at a valid timestamp; actor,
// authority and owner present and valid addresses; purpose 1..512; grant_id and operation_id
// empty or identifiers; metadata a valid JSON object. Trims the identifiers in place, as the
// protocol "1" validation does. (The redaction guard is CheckRedaction, redaction.h.)
// Errors: INVALID_ARGUMENT "<path>.<field>: …".
absl::Status ValidateControlPlaneEvent(sharedos::audit::v1::ControlPlaneEvent* event,
                                       absl::string_view path = "control_plane");

// "grant.issued" … "escalation.resolved"; empty for UNSPECIFIED or an unknown value.
absl::string_view ControlPlaneEventTypeName(sharedos::audit::v1::ControlPlaneEventType type);
// The inverse; nullopt for anything else.
std::optional<sharedos::audit::v1::ControlPlaneEventType> ParseControlPlaneEventType(
    absl::string_view name);

}  // namespace sharedos::audit::core

#endif  // SHAREDOS_AUDIT_SVC_CORE_CONTROL_PLANE_EVENT_H_
