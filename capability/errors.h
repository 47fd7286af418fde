// Every named error factory of SharedOS, in one place (the gRPC errors of the service APIs), so
// that tests match on code + substring and a message is written once. Messages name ids and
// fields, never grant contents, metadata, arguments or credentials. Denials are never errors:
// they are decisions or refusals carrying a reason code (capability/reason_codes.h).
// Stateless; thread-safe.

#ifndef SHAREDOS_CAPABILITY_ERRORS_H_
#define SHAREDOS_CAPABILITY_ERRORS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sharedos::capability::errors {

// ---- Requests (every service). ----

// INVALID_ARGUMENT "<path>: <problem>" (the validation library's shape).
absl::Status InvalidField(absl::string_view path, absl::string_view problem);

// ---- grantstore_svc: grants, revisions, host policy, escalations. ----

// NOT_FOUND: no grant with that id in the namespace.
absl::Status GrantNotFound(absl::string_view namespace_id, absl::string_view grant_id);
// NOT_FOUND: DeriveGrant's parent does not exist (the reference's parent_not_found).
absl::Status ParentGrantNotFound(absl::string_view namespace_id, absl::string_view grant_id);
// NOT_FOUND: no escalation with that id.
absl::Status EscalationNotFound(absl::string_view escalation_id);

// FAILED_PRECONDITION: the id is taken in the namespace by a different grant (ids are
// never reused, even after revocation).
absl::Status GrantIdInUse(absl::string_view namespace_id, absl::string_view grant_id);
// FAILED_PRECONDITION: the idempotency key was first used for a different grant.
absl::Status IdempotencyKeyReused();
// FAILED_PRECONDITION: DeriveGrant from a revoked parent.
absl::Status ParentGrantRevoked(absl::string_view namespace_id, absl::string_view grant_id);
// FAILED_PRECONDITION: a read at a revision the store has not reached (or a negative one).
absl::Status RevisionNotServable(int64_t at_revision, int64_t current_revision);
// FAILED_PRECONDITION: the policy version was already used in the namespace for different
// rules (or is not the current one).
absl::Status HostPolicyVersionUsed(absl::string_view namespace_id, absl::string_view version);
// FAILED_PRECONDITION: the escalation id is taken by a different escalation.
absl::Status EscalationIdInUse(absl::string_view escalation_id);
// FAILED_PRECONDITION: the escalation was already resolved (differently, for a retry).
absl::Status EscalationAlreadyResolved(absl::string_view escalation_id, absl::string_view status);
// FAILED_PRECONDITION: approving an escalation that requested no authority.
absl::Status EscalationHasNoRequestedAuthority(absl::string_view escalation_id);

// ---- grantstore_svc: who may decide, credentials. ----

// PERMISSION_DENIED: the caller is neither the escalation's reviewer nor an admin of its
// namespace acting on the reviewer's behalf (`why` says which).
absl::Status NotTheReviewer(absl::string_view escalation_id, absl::string_view why);
// PERMISSION_DENIED naming `reviewer`: the request names another decider than the caller.
absl::Status ReviewerIsNotTheCaller();
// PERMISSION_DENIED: an approval would give authority over resources the reviewer does not own.
absl::Status ApprovalBeyondReviewer(absl::string_view path);
// PERMISSION_DENIED: an admin acting outside the namespaces it administers.
absl::Status NamespaceNotAdministered(absl::string_view namespace_id);
// NOT_FOUND: no credential with that id (or none the caller may manage).
absl::Status CredentialNotFound(absl::string_view credential_id);
// ALREADY_EXISTS: the credential id is taken.
absl::Status CredentialIdInUse(absl::string_view credential_id);
// FAILED_PRECONDITION: rotating a revoked credential.
absl::Status CredentialRevoked(absl::string_view credential_id);

// RESOURCE_EXHAUSTED "grant_limit_exceeded: ...": LoadAuthority found more grants than a
// turn may hold (semantics §3.2; the authorizer answers authority_unavailable).
absl::Status GrantLimitExceeded(int limit);

// UNAVAILABLE "audit_unavailable: ...": the control-plane event could not be recorded, so
// nothing was written (fail closed).
absl::Status AuditUnavailable(absl::string_view detail);

// INTERNAL: a stored row no longer parses.
absl::Status CorruptRow(absl::string_view table, absl::string_view key);

// ---- authorizer_svc: leases and requests of authorizer.proto. ----

// INVALID_ARGUMENT "lease_id: malformed (<why>)": not a lease this service issued.
absl::Status LeaseMalformed(absl::string_view why);
// INVALID_ARGUMENT "lease_id: integrity check failed": a lease id whose MAC does not verify
// (altered, forged, or issued under another deployment's secret).
absl::Status LeaseTampered();
// NOT_FOUND "lease expired": past the expiry the lease was opened with.
absl::Status LeaseExpired();
// NOT_FOUND "lease closed": closed on this replica.
absl::Status LeaseClosed();
// INVALID_ARGUMENT "subject: neither lease_id nor context is set".
absl::Status NoSubject();
// INVALID_ARGUMENT "timeout: <problem>".
absl::Status BadTimeout(absl::string_view problem);
// INVALID_ARGUMENT "tools: <problem>" / "tools[i].name: duplicate".
absl::Status BadTools(absl::string_view path, absl::string_view problem);
// INVALID_ARGUMENT "requested_authority_ask: <problem>": the ask does not make a valid
// CapabilityRequest once minted.
absl::Status BadAsk(absl::string_view problem);
// UNAVAILABLE "escalation not stored: grantstore_svc answered <code>" (RecordEscalation only).
absl::Status EscalationNotStored(absl::StatusCode store_code);

// ---- envelope_svc: turns. ----

// FAILED_PRECONDITION "the turn has ended": an operation on a turn that is no longer running
// (a tool call past the refusal bound, a namespace update, a finish or an answer after its end).
absl::Status TurnEnded();

}  // namespace sharedos::capability::errors

#endif  // SHAREDOS_CAPABILITY_ERRORS_H_
