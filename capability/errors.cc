#include "capability/errors.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "capability/reason_codes.h"

namespace sharedos::capability::errors {

absl::Status InvalidField(absl::string_view path, absl::string_view problem) {
  if (path.empty()) return absl::InvalidArgumentError(problem);
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

absl::Status GrantNotFound(absl::string_view namespace_id, absl::string_view grant_id) {
  return absl::NotFoundError(
      absl::StrFormat("grant \"%s\" not found in namespace \"%s\"", grant_id, namespace_id));
}

absl::Status ParentGrantNotFound(absl::string_view namespace_id, absl::string_view grant_id) {
  return absl::NotFoundError(
      absl::StrFormat("parent_not_found: parent grant \"%s\" not found in namespace \"%s\"",
                      grant_id, namespace_id));
}

absl::Status EscalationNotFound(absl::string_view escalation_id) {
  return absl::NotFoundError(absl::StrFormat("escalation \"%s\" not found", escalation_id));
}

absl::Status GrantIdInUse(absl::string_view namespace_id, absl::string_view grant_id) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "grant id \"%s\" is already used in namespace \"%s\" by a different grant (ids are never "
      "reused, even after revocation)",
      grant_id, namespace_id));
}

absl::Status IdempotencyKeyReused() {
  return absl::FailedPreconditionError("idempotency_key was already used with a different grant");
}

absl::Status ParentGrantRevoked(absl::string_view namespace_id, absl::string_view grant_id) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "parent grant \"%s\" in namespace \"%s\" is revoked: nothing can be derived from it",
      grant_id, namespace_id));
}

absl::Status RevisionNotServable(int64_t at_revision, int64_t current_revision) {
  return absl::FailedPreconditionError(
      absl::StrFormat("at_revision %d cannot be served: the store is at revision %d", at_revision,
                      current_revision));
}

absl::Status HostPolicyVersionUsed(absl::string_view namespace_id, absl::string_view version) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "host policy version \"%s\" was already used in namespace \"%s\" (every change needs a new "
      "version)",
      version, namespace_id));
}

absl::Status EscalationIdInUse(absl::string_view escalation_id) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "escalation_id \"%s\" is already recorded with different content", escalation_id));
}

absl::Status EscalationAlreadyResolved(absl::string_view escalation_id, absl::string_view status) {
  return absl::FailedPreconditionError(
      absl::StrFormat("escalation \"%s\" is already resolved (%s)", escalation_id, status));
}

absl::Status EscalationHasNoRequestedAuthority(absl::string_view escalation_id) {
  return absl::FailedPreconditionError(absl::StrFormat(
      "escalation \"%s\" carries no requested_authority: there is no grant to issue; deny it "
      "instead",
      escalation_id));
}

absl::Status NotTheReviewer(absl::string_view escalation_id, absl::string_view why) {
  return absl::PermissionDeniedError(absl::StrFormat(
      "escalation \"%s\" may be resolved only by its reviewer: %s", escalation_id, why));
}

absl::Status ReviewerIsNotTheCaller() {
  return absl::PermissionDeniedError(
      "reviewer: names someone other than the authenticated principal (the decider is the "
      "credential's principal)");
}

absl::Status ApprovalBeyondReviewer(absl::string_view path) {
  return absl::PermissionDeniedError(absl::StrFormat(
      "%s: concerns resources the reviewer does not own; an approval gives only the reviewer's "
      "own authority, nothing was issued",
      path));
}

absl::Status NamespaceNotAdministered(absl::string_view namespace_id) {
  return absl::PermissionDeniedError(
      absl::StrFormat("namespace \"%s\" is not administered by this credential", namespace_id));
}

absl::Status CredentialNotFound(absl::string_view credential_id) {
  return absl::NotFoundError(absl::StrFormat("credential \"%s\" not found", credential_id));
}

absl::Status CredentialIdInUse(absl::string_view credential_id) {
  return absl::AlreadyExistsError(
      absl::StrFormat("credential id \"%s\" is already used", credential_id));
}

absl::Status CredentialRevoked(absl::string_view credential_id) {
  return absl::FailedPreconditionError(
      absl::StrFormat("credential \"%s\" is revoked; issue a new one", credential_id));
}

absl::Status GrantLimitExceeded(int limit) {
  return absl::ResourceExhaustedError(
      absl::StrFormat("%s: the actor holds more than %d grants from this authority",
                      Name(AuthorityCode::kGrantLimitExceeded), limit));
}

absl::Status AuditUnavailable(absl::string_view detail) {
  return absl::UnavailableError(absl::StrCat(
      kAuditUnavailable, ": the control-plane event could not be recorded, nothing was written (",
      detail, ")"));
}

absl::Status CorruptRow(absl::string_view table, absl::string_view key) {
  return absl::InternalError(absl::StrFormat("stored %s row \"%s\" does not parse", table, key));
}

absl::Status LeaseMalformed(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("lease_id: malformed (", why, ")"));
}

absl::Status LeaseTampered() {
  return absl::InvalidArgumentError("lease_id: integrity check failed");
}

absl::Status LeaseExpired() { return absl::NotFoundError("lease expired"); }

absl::Status LeaseClosed() { return absl::NotFoundError("lease closed"); }

absl::Status NoSubject() {
  return absl::InvalidArgumentError("subject: neither lease_id nor context is set");
}

absl::Status BadTimeout(absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("timeout: ", problem));
}

absl::Status BadTools(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

absl::Status BadAsk(absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("requested_authority_ask: ", problem));
}

absl::Status EscalationNotStored(absl::StatusCode store_code) {
  return absl::UnavailableError(absl::StrCat("escalation not stored: grantstore_svc answered ",
                                             absl::StatusCodeToString(store_code)));
}

absl::Status TurnEnded() { return absl::FailedPreconditionError("the turn has ended"); }

}  // namespace sharedos::capability::errors
