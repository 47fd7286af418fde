// A turn's tool namespaces (semantics §1.14, §2.1, §3.9 listToolNamespaces /
// updateToolNamespaces; §5.2): the availability plane, distinct from authority. List describes
// every tool namespace of the turn's registered tools — sources, tool count, enabled — and is
// audited tool.namespace.catalog.listed {totalNamespaces, enabledNamespaces: count}. Update
// turns namespaces on or off for every later call of the turn (Invocation mediates under the
// updated selection: a tool of a disabled namespace is tool_unavailable, cause
// namespace_disabled; enabling one grants nothing) and is audited
// tool.namespace.selection.updated {enabledNamespaces: names}. Both post-effect. Thread-safe
// under the turn's mutex.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TOOL_NAMESPACES_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TOOL_NAMESPACES_H_

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "envelope_svc/core/turn.h"
#include "sharedos/envelope/v1/tool_namespaces.pb.h"

namespace sharedos::envelope::core {

// An update's own shape: at least one namespace named, none in both lists, each an Identifier
// without surrounding whitespace, at most 64 per list.
// Errors: INVALID_ARGUMENT naming the field ("enable[2]: …", "disable: …").
absl::Status ValidateToolNamespaceUpdate(const v1::UpdateToolNamespacesRequest& request);

// Errors: FAILED_PRECONDITION (the turn has ended).
absl::StatusOr<v1::ListToolNamespacesResponse> ListToolNamespaces(Turn& turn,
                                                                  audit::client::AuditWriter& audit,
                                                                  absl::Time now);

// `request` already valid (ValidateToolNamespaceUpdate).
// Errors: FAILED_PRECONDITION (the turn has ended).
absl::StatusOr<v1::UpdateToolNamespacesResponse> UpdateToolNamespaces(
    Turn& turn, const v1::UpdateToolNamespacesRequest& request, audit::client::AuditWriter& audit,
    absl::Time now);

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TOOL_NAMESPACES_H_
