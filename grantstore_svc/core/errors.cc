#include "grantstore_svc/core/errors.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace sharedos::grantstore::errors {

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

absl::Status GrantLimitExceeded(int limit) {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "grant_limit_exceeded: the actor holds more than %d grants from this authority", limit));
}

absl::Status AuditUnavailable(absl::string_view detail) {
  return absl::UnavailableError(absl::StrCat(
      "audit_unavailable: the control-plane event could not be recorded, nothing was written (",
      detail, ")"));
}

absl::Status CorruptRow(absl::string_view table, absl::string_view key) {
  return absl::InternalError(absl::StrFormat("stored %s row \"%s\" does not parse", table, key));
}

}  // namespace sharedos::grantstore::errors
