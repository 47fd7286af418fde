// Which records each writer produces (docs/adr/0014, T4): audit_svc stamps every appended record
// with the authenticated writer and refuses a record type that writer never produces, so a
// compromised writer cannot put words in another's mouth (the envelope cannot record a grant
// being issued; the grant store cannot record a tool call).
//
//   service:authorizer  authority.resolved, authorization.checked, escalation.requested
//   service:envelope    authorization.checked (discovery refusals), tool.catalog.listed,
//                       tool.invoked, resource.invoked, message.sent, turn.ended,
//                       tool.namespace.catalog.listed, tool.namespace.selection.updated
//   service:grantstore  every control-plane record (grant.*, host_policy.updated,
//                       escalation.recorded/resolved, credential.changed), and nothing else
//
// The stamp is part of the hashed record: a protocol "1" event's metadata.writer, a control-plane
// record's `writer`. Stateless; thread-safe.

#ifndef SHAREDOS_AUDIT_SVC_CORE_WRITER_POLICY_H_
#define SHAREDOS_AUDIT_SVC_CORE_WRITER_POLICY_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sharedos/audit/v1/audit.pb.h"

namespace sharedos::audit::core {

// Whether `writer` (an address key, "service:<name>") produces `entry`'s record type.
// Errors: PERMISSION_DENIED naming `path`, the type and the writer.
absl::Status CheckWriter(absl::string_view writer, const v1::LogEntry& entry,
                         absl::string_view path);

// Stamps `entry` with `writer`, replacing whatever the writer sent. Errors: INVALID_ARGUMENT
// (`writer` is not an address key).
absl::Status StampWriter(absl::string_view writer, v1::LogEntry& entry);

}  // namespace sharedos::audit::core

#endif  // SHAREDOS_AUDIT_SVC_CORE_WRITER_POLICY_H_
