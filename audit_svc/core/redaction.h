#ifndef SHAREDOS_AUDIT_SVC_CORE_REDACTION_H_
#define SHAREDOS_AUDIT_SVC_CORE_REDACTION_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"

namespace sharedos::audit::core {

// The redaction guard (semantics §5.3): an audit record never carries tool arguments, tool
// results, message payloads, thrown/provider error text or credentials. Such data can only
// arrive through `metadata` (every other field is typed), so any key, at any depth, that names
// one of them rejects the whole event. Keys are compared case-insensitively with `_` and `-`
// ignored, so `api_key`, `apiKey` and `API-KEY` are one key.
//
// Errors: INVALID_ARGUMENT "<path>: key \"<key>\" is never recorded (…)". The message names the
// key and its path, never the value.
absl::Status CheckRedaction(const sharedos::protocol::v1::AuditEvent& event,
                            absl::string_view path = "event");

// The same guard over a control-plane record's metadata.
absl::Status CheckRedaction(const sharedos::audit::v1::ControlPlaneEvent& event,
                            absl::string_view path = "control_plane");

// True when `key` is one the guard refuses (exposed for tests and for writers that build metadata).
bool IsRedactedKey(absl::string_view key);

}  // namespace sharedos::audit::core

#endif  // SHAREDOS_AUDIT_SVC_CORE_REDACTION_H_
