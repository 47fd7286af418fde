// Who may call what: the one table of every RPC of every SharedOS service and every page of the
// reviewer console, with the roles that may call it and the rule each role's scope must meet on
// the data the call reads or changes (docs/security.md, ADR 0014). Adapters never list roles:
// they name their method and hand over its target; cores judge per-record reads with the same
// rules (MayReach). A method missing from the table is refused to everyone (fail closed), and a
// test walks every service's descriptor to keep the table complete.
//
// Scope values mean the same everywhere (ScopeCovers, auth.h): a list covers a value it holds, "*"
// covers every value, an empty list covers none.
//
// Out of scope is PERMISSION_DENIED when the caller named the namespace or owner itself (a
// filter, a turn's context, a world), and NOT_FOUND when it named an opaque id (an escalation, a
// turn, a credential) whose very existence must not leak: the object's own not-found error
// (capability/errors.h), word for word what an id that does not exist answers.
//
// Stateless; the table is immutable. Thread-safe.

#ifndef SHAREDOS_COMMON_SERVER_ACCESS_POLICY_H_
#define SHAREDOS_COMMON_SERVER_ACCESS_POLICY_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/server/auth.h"

namespace sharedos::common::server {

// What a call reads or changes, as a scope judges it. An empty member is "none named".
struct Target {
  Target() = default;
  Target(std::string namespace_id, std::string owner = "", std::string authority = "")
      : namespace_id(std::move(namespace_id)),
        owner(std::move(owner)),
        authority(std::move(authority)) {}

  std::string namespace_id;
  // Address keys ("<kind>:<id>").
  std::string owner;
  // The authority a turn runs under (hosts only).
  std::string authority;
};

// The target of a call that names only a namespace.
inline Target OfNamespace(absl::string_view namespace_id) {
  return Target(std::string(namespace_id));
}

// How a role's scope is judged against a Target.
enum class Rule {
  // admin: scope.namespaces covers the target's namespace (an empty namespace is covered only by
  // "*": a scoped admin must name one of its namespaces).
  kAdministers,
  // admin of every namespace ("*"): chain-wide reads and process status, admin and service
  // credentials.
  kOperator,
  // host: scope.namespaces covers the namespace, scope.owners the owner, and scope.authorities
  // (without them, scope.owners) the authority.
  kHostOf,
  // reviewer: scope.namespaces covers the namespace and the owner (the escalation's reviewer) is
  // the reviewer's own principal.
  kAddressee,
  // any role: the call concerns the caller's own credential (checked by the core).
  kSelf,
  // service: the caller's principal is one of the row's services.
  kService,
};

// The service principals: each SharedOS service has its own ("service:<name>"), and calls only
// the methods its job needs (T4).
inline constexpr absl::string_view kAuthorizerService = "service:authorizer";
inline constexpr absl::string_view kEnvelopeService = "service:envelope";
inline constexpr absl::string_view kGrantstoreService = "service:grantstore";
inline constexpr absl::string_view kAuditService = "service:audit";

// One role's way into a method.
struct Access {
  Role role;
  Rule rule;
  // kService: the principals that may call.
  std::vector<std::string> services;
};

// One row of the table.
struct MethodPolicy {
  // "<package>.<Service>/<Method>" for an RPC (e.g. "sharedos.audit.v1.AuditLog/Query"),
  // "console <path>" for a console page.
  std::string method;
  std::vector<Access> access;
  // What the target is, for the reader of the table (e.g. "filter.namespace_id").
  std::string target;
};

// Every row, in the order the table lists them.
const std::vector<MethodPolicy>& AccessTable();

// The row of `method`, or null.
const MethodPolicy* PolicyFor(absl::string_view method);

// Whether `caller` may call `method` at all (its role has an Access row; a service its
// principal). Errors: PERMISSION_DENIED (another role, another service, or a method the table
// does not list).
absl::Status Admit(absl::string_view method, const Principal& caller);

// Admit, then the caller's rule against `target`. Errors: PERMISSION_DENIED naming what lies
// outside the caller's scope.
absl::Status CheckTarget(absl::string_view method, const Principal& caller, const Target& target);

// Whether `caller` may reach `target` through `method` (CheckTarget as a bool): per-record reads
// filter with it.
bool MayReach(absl::string_view method, const Principal& caller, const Target& target);

// Whether a host scope covers a turn's namespace, owner and authority (kHostOf).
bool HostCovers(const Scope& scope, const Target& target);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_ACCESS_POLICY_H_
