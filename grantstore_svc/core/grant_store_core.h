// The grant store's logic, below the gRPC adapter and above the storage interface: request
// validation, idempotency, derivation (through the authorizer core's DeriveGrant), escalation
// resolution and the audit of every mutation.
//
// Every mutation runs as: open a write transaction, apply, record the control-plane event
// through AuditWriter::RecordPreEffect, then commit. If the event cannot be recorded the
// transaction is rolled back and the call answers UNAVAILABLE "audit_unavailable" — nothing
// mutates unaudited. A request that fails validation writes nothing. Replays that change
// nothing (idempotent retries) take no revision and record no event.
//
// Every method may also answer UNAVAILABLE (the database cannot be reached or is busy
// beyond its timeout) and INTERNAL (a stored row no longer parses); INVALID_ARGUMENT names
// the first bad field (see request_validation.h).

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_GRANT_STORE_CORE_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_GRANT_STORE_CORE_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "audit_svc/client/audit_writer.h"
#include "common/metrics/sinks.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "common/validation/limits.h"
#include "grantstore_svc/core/record_anchor.h"
#include "grantstore_svc/core/request_validation.h"
#include "grantstore_svc/storage/grant_store.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"

namespace sharedos::grantstore::core {

// Who is calling: the authenticated principal (never the credential). Control-plane records
// name it as their actor (ActorOf, credentials.h).
using Caller = common::server::Principal;

// The operator of every namespace, as the process itself acts ("service:<name>"): what
// sharedosd --demo seeds with and benchmarks call as.
Caller InProcessOperator(const std::string& name);

// Thread-safe (its dependencies are; it holds no mutable state of its own).
class GrantStoreCore {
 public:
  struct Options {
    // LoadAuthority's bound (semantics §3.2 MAX_RESOLVED_GRANTS).
    int max_resolved_grants = static_cast<int>(common::validation::kMaxResolvedGrants);
    // Mints ids the caller left empty (escalation ids "esc-<id>", approved grants
    // "grant-<id>"). Default: a random UUID.
    std::function<std::string()> new_id;
    // Where sharedos_escalations_resolved_total is counted; null: nowhere. Borrowed.
    common::metrics::Metrics* metrics = nullptr;
    // How long an approved grant lasts when neither the request nor the reviewer's narrowing
    // sets an expiry (an approval never lasts forever by omission); zero: no default.
    absl::Duration approval_ttl = kDefaultApprovalTtl;
    // The store compared with the audit log (record_anchor.h): while it is not serving, every
    // method but AcceptRestore answers its UNAVAILABLE. Null: no comparison (tests,
    // --audit=discard). Borrowed.
    RecordAnchor* anchor = nullptr;
    // The organisation's identity provider is configured (--oidc_config, ADR 0020): a human's
    // reviewer identity then comes only from it. Issuing or rotating a reviewer credential for a
    // human principal is refused (FAILED_PRECONDITION) unless
    // allow_reviewer_credentials_with_idp (break-glass), and a decision made by a human reviewer
    // with a SharedOS credential is recorded as break-glass (DecisionCredential.break_glass).
    bool identity_provider_configured = false;
    bool allow_reviewer_credentials_with_idp = false;
  };

  // Borrows every dependency; each must outlive the core.
  GrantStoreCore(storage::GrantStore& store, audit::client::AuditWriter& audit,
                 const common::Clock& clock, Options options);
  GrantStoreCore(storage::GrantStore& store, audit::client::AuditWriter& audit,
                 const common::Clock& clock);

  // --- Control plane ---

  // Issues a root grant at the next revision; audits grant.issued. A retry with the same
  // idempotency_key and grant answers the first result; the same id with the same grant (not
  // revoked) answers the stored grant without a new revision.
  // Errors: INVALID_ARGUMENT; FAILED_PRECONDITION (id used by a different or revoked grant;
  // idempotency_key used with a different grant); UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::IssueGrantResponse> IssueGrant(const Caller& caller,
                                                    v1::IssueGrantRequest request);

  // Derives a child through capability::DeriveGrant; a refusal is a successful
  // response carrying the §3.7 code (nothing written). Audits grant.derived.
  // Errors: INVALID_ARGUMENT; NOT_FOUND (parent_not_found); FAILED_PRECONDITION (parent
  // revoked; child id used by a different grant); UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::DeriveGrantResponse> DeriveGrant(const Caller& caller,
                                                      v1::DeriveGrantRequest request);

  // Revokes at the clock's now; audits grant.revoked. Revoking a revoked grant answers its
  // original revoked_at and revision.
  // Errors: INVALID_ARGUMENT; NOT_FOUND; UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::RevokeGrantResponse> RevokeGrant(const Caller& caller,
                                                      v1::RevokeGrantRequest request);

  // Errors: INVALID_ARGUMENT; NOT_FOUND.
  absl::StatusOr<v1::GetGrantResponse> GetGrant(v1::GetGrantRequest request);

  // Ordered by id. Errors: INVALID_ARGUMENT (incl. a page_token of another filter).
  absl::StatusOr<v1::ListGrantsResponse> ListGrants(v1::ListGrantsRequest request);

  // Installs a namespace's policy at the next revision; audits host_policy.updated. Putting
  // the current version with the same rules again answers it unchanged.
  // Errors: INVALID_ARGUMENT; FAILED_PRECONDITION (version already used for other rules, or
  // an older version reused); UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::PutHostPolicyResponse> PutHostPolicy(const Caller& caller,
                                                          v1::PutHostPolicyRequest request);

  // `absent` when the namespace has none. Errors: INVALID_ARGUMENT.
  absl::StatusOr<v1::GetHostPolicyResponse> GetHostPolicy(v1::GetHostPolicyRequest request);

  // Oldest first. Errors: INVALID_ARGUMENT (incl. a page_token of another filter).
  absl::StatusOr<v1::ListEscalationsResponse> ListEscalations(v1::ListEscalationsRequest request);

  // Errors: INVALID_ARGUMENT; NOT_FOUND.
  absl::StatusOr<v1::GetEscalationResponse> GetEscalation(v1::GetEscalationRequest request);

  // Who may decide: a reviewer credential whose principal is the escalation's reviewer (its
  // scope covering the namespace and, when it lists owners, the reviewer), or an admin of the
  // namespace with on_behalf_of_reviewer. request.reviewer, when set, must name the decider
  // (the reviewer itself for an admin acting on its behalf). Anything else is PERMISSION_DENIED
  // and the escalation stays pending.
  // APPROVE issues, in the same transaction, a root grant built from the escalation's
  // requested_authority: id = grant_id or "grant-<new id>", namespace_id and capabilities as
  // requested — each on the reviewer's own resources (resource.owner = the reviewer, or absent
  // with the request's owner the reviewer), else PERMISSION_DENIED and nothing issued; the
  // reviewer is written as every capability's owner —, subject = the requester, issuer = the
  // escalated turn's authority, constraints as requested narrowed by `narrowing` (no expiry
  // from either: now + Options::approval_ttl), issued_at = now, metadata {escalationId,
  // capabilityRequestId, approvedBy, approvedWithCredential, credentialHeldByDeciderAlone}; the
  // escalation becomes APPROVED with that grant id, decided_by the caller, decided_with its
  // credential.
  // DENY marks it DENIED. Audits grant.issued (approve) and escalation.resolved. The same
  // resolution repeated answers the stored result; any other resolution of a resolved
  // escalation is refused.
  // Errors: INVALID_ARGUMENT (incl. a narrowing that would widen: expires_at later than the
  // requested one or before its not_before, max_uses above the requested one, purposes not a
  // subset of the requested ones); NOT_FOUND (unknown escalation); FAILED_PRECONDITION
  // (already resolved; approving an escalation without requested_authority; grant_id already
  // used); UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::ResolveEscalationResponse> ResolveEscalation(
      const Caller& caller, v1::ResolveEscalationRequest request);

  // --- Credentials (callers are admins; the adapter checks the role) ---

  // Stores a new credential (digest only) and answers it with its secret, once; audits
  // credential.changed "issued". Errors: INVALID_ARGUMENT; PERMISSION_DENIED (a scope beyond the
  // caller's namespaces; an admin "*" or service credential by an admin other than "*");
  // ALREADY_EXISTS (id taken); UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::IssueCredentialResponse> IssueCredential(const Caller& caller,
                                                              v1::IssueCredentialRequest request);
  // The credentials the caller manages, by id. Errors: INVALID_ARGUMENT.
  absl::StatusOr<v1::ListCredentialsResponse> ListCredentials(const Caller& caller,
                                                              v1::ListCredentialsRequest request);
  // Revokes (idempotent); audits "revoked". Errors: INVALID_ARGUMENT; NOT_FOUND (unknown or
  // not the caller's to manage); UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::RevokeCredentialResponse> RevokeCredential(
      const Caller& caller, v1::RevokeCredentialRequest request);
  // A new secret for a live credential; audits "rotated". Errors: as RevokeCredential;
  // FAILED_PRECONDITION (revoked).
  absl::StatusOr<v1::RotateCredentialResponse> RotateCredential(
      const Caller& caller, v1::RotateCredentialRequest request);
  // The live credential with that digest. Errors: INVALID_ARGUMENT; NOT_FOUND (unknown or
  // revoked).
  absl::StatusOr<v1::AuthenticateCredentialResponse> AuthenticateCredential(
      v1::AuthenticateCredentialRequest request);

  // --- The store anchored in the audit log (docs/adr/0021; the caller is the operator "*") ---

  // Accepts a store restored behind the log: re-applies the revocations the log holds past the
  // restored revision (grants revoked again; credentials revoked or rotated: revoked), moves the
  // revision past the log's highest and records store.restore_accepted, all in one transaction;
  // then the store serves. A store not behind answers accepted = false, writing nothing.
  // Errors: INVALID_ARGUMENT (reason); PERMISSION_DENIED (not an admin of "*"); UNAVAILABLE (the
  // log cannot be read or written; nothing changed); FAILED_PRECONDITION (no anchor configured;
  // more revocations than one acceptance re-applies).
  absl::StatusOr<v1::AcceptRestoreResponse> AcceptRestore(const Caller& caller,
                                                          v1::AcceptRestoreRequest request);

  // --- Data plane ---

  // The live grants (issued at or before the revision, not revoked by it) with subject =
  // actor and issuer = authority, in issue order, and the namespace's policy as of the same
  // revision. The same at_revision always answers the same snapshot.
  // Errors: INVALID_ARGUMENT; FAILED_PRECONDITION (at_revision ahead of the store);
  // RESOURCE_EXHAUSTED "grant_limit_exceeded" (more than max_resolved_grants).
  absl::StatusOr<v1::LoadAuthorityResponse> LoadAuthority(v1::LoadAuthorityRequest request);

  // The grant as of at_revision (revoked_at set iff revoked by then).
  // Errors: INVALID_ARGUMENT; NOT_FOUND (not issued by then); FAILED_PRECONDITION
  // (at_revision ahead of the store).
  absl::StatusOr<v1::ResolveGrantResponse> ResolveGrant(v1::ResolveGrantRequest request);

  // Errors: INVALID_ARGUMENT; NOT_FOUND.
  absl::StatusOr<v1::TryConsumeResponse> TryConsume(v1::TryConsumeRequest request);
  absl::StatusOr<v1::GetUsageResponse> GetUsage(v1::GetUsageRequest request);

  // Errors: INVALID_ARGUMENT.
  absl::StatusOr<v1::CheckRevocationsResponse> CheckRevocations(
      v1::CheckRevocationsRequest request);

  // Stores the escalation PENDING at the next revision; audits escalation.recorded. The same
  // escalation_id with the same content answers the same id without a new revision.
  // Errors: INVALID_ARGUMENT; FAILED_PRECONDITION (escalation_id recorded with different
  // content); UNAVAILABLE (audit_unavailable).
  absl::StatusOr<v1::RecordEscalationResponse> RecordEscalation(
      const Caller& caller, v1::RecordEscalationRequest request);

 private:
  // With an identity provider and without break-glass, a reviewer credential for a human is
  // refused (Options::identity_provider_configured). Errors: FAILED_PRECONDITION naming why.
  absl::Status CheckReviewerIdentityFromIdp(v1::CredentialRole role,
                                            const protocol::v1::Address& principal) const;
  // Records `events` in order, then commits `txn`. On an audit failure nothing is committed
  // (the transaction is dropped, rolling back) and the result is audit_unavailable.
  absl::Status AuditAndCommit(std::unique_ptr<storage::WriteTransaction> txn,
                              std::vector<audit::v1::ControlPlaneEvent> events);
  // Writes a changed credential (insert or update) at the transaction's revision, audits it
  // as `change` and commits; answers the stored form.
  absl::StatusOr<v1::Credential> CommitCredential(const Caller& caller,
                                                  std::unique_ptr<storage::WriteTransaction> txn,
                                                  storage::StoredCredential credential,
                                                  const std::string& change, bool insert);

  // OK, or the anchor's refusal (Options::anchor).
  absl::Status Serving() const;

  storage::GrantStore& store_;
  audit::client::AuditWriter& audit_;
  const common::Clock& clock_;
  const Options options_;
  common::metrics::EscalationMetrics escalation_metrics_;
};

}  // namespace sharedos::grantstore::core

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_GRANT_STORE_CORE_H_
