// Strict validation of every grantstore.v1 request (architecture §5): unknown fields anywhere
// in the tree, protocol "1" validation of the embedded objects (which also trims identifiers
// in place), bounds, and consistency between the request's fields. Each function returns OK
// or INVALID_ARGUMENT "<field path>: <problem>" naming the first bad field, relative to the
// request (e.g. "grant.capabilities[0].scope: unspecified", "request: unknown field 9").
// Checks that need stored state (existence, widening against a stored escalation) live in
// GrantStoreCore. Stateless; thread-safe for distinct requests.

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_REQUEST_VALIDATION_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_REQUEST_VALIDATION_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"

namespace sharedos::grantstore::core {

// Bounds of this API beyond protocol "1".
// How long an approved grant lasts when neither the escalation nor the reviewer's narrowing sets
// an expiry: an approval never lasts forever by omission (ADR 0014; GrantStoreCore::Options).
inline constexpr absl::Duration kDefaultApprovalTtl = absl::Hours(24);
inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 1000;
inline constexpr size_t kMaxHostPolicyRules = 1024;
inline constexpr size_t kMaxRuleActors = 256;
inline constexpr size_t kMaxRevocationIds = 256;
// A resolution's note, in UTF-16 units (as every length here).
inline constexpr size_t kMaxResolutionNoteLength = 1000;

// grant required and a valid CapabilityGrant; no revoked_at; no parent_grant_id (DeriveGrant);
// idempotency_key an optional Identifier.
absl::Status ValidateIssueGrantRequest(v1::IssueGrantRequest* request);
// namespace_id, parent_grant_id Identifiers; child required: id Identifier, subject an
// Address, 0..64 valid capabilities (none is the refusal empty_capabilities, not an error),
// constraints valid when present, issued_at required, metadata JSON.
absl::Status ValidateDeriveGrantRequest(v1::DeriveGrantRequest* request);
absl::Status ValidateRevokeGrantRequest(v1::RevokeGrantRequest* request);
absl::Status ValidateGetGrantRequest(v1::GetGrantRequest* request);
// filter required with a namespace_id; subject/issuer valid when present; page_size 0..1000.
absl::Status ValidateListGrantsRequest(v1::ListGrantsRequest* request);
// policy required: namespace_id, version Identifiers; ≤ 1024 rules, each with a unique id,
// an Identifier resource_namespace, ≤ 64 path segments, a set scope, ≤ 64 Actions, ≤ 256
// Addresses, ≤ 64 Purposes.
absl::Status ValidatePutHostPolicyRequest(v1::PutHostPolicyRequest* request);
absl::Status ValidateGetHostPolicyRequest(v1::GetHostPolicyRequest* request);
// namespace_id; status, when present, a known value other than UNSPECIFIED; page_size 0..1000.
absl::Status ValidateListEscalationsRequest(v1::ListEscalationsRequest* request);
absl::Status ValidateGetEscalationRequest(v1::GetEscalationRequest* request);
// escalation_id; decision APPROVE or DENY; reviewer an Address; narrowing and grant_id only
// with APPROVE; narrowing: expires_at valid, max_uses positive, ≤ 64 unique Purposes; note
// (either decision) trimmed, ≤ kMaxResolutionNoteLength, no control character but LF.
absl::Status ValidateResolveEscalationRequest(v1::ResolveEscalationRequest* request);
// namespace_id, actor, authority; at_revision non-negative when present.
absl::Status ValidateLoadAuthorityRequest(v1::LoadAuthorityRequest* request);
absl::Status ValidateResolveGrantRequest(v1::ResolveGrantRequest* request);
// ids; max_uses ≥ 1.
absl::Status ValidateTryConsumeRequest(v1::TryConsumeRequest* request);
absl::Status ValidateGetUsageRequest(v1::GetUsageRequest* request);
// namespace_id; 1..256 grant ids, each an Identifier.
absl::Status ValidateCheckRevocationsRequest(v1::CheckRevocationsRequest* request);
// escalation a valid Escalation with status PENDING; namespace_id, execution_id Identifiers;
// escalation_id an optional Identifier; requested_authority (when present) in the request's
// namespace and owned by the escalation's reviewer (the context owner, semantics §1.9).
absl::Status ValidateRecordEscalationRequest(v1::RecordEscalationRequest* request);

// Credentials: ids are Identifiers; scopes hold at most 64 entries each, namespaces Identifiers
// or "*", owners address keys or "*"; a service credential has no scope.
absl::Status ValidateIssueCredentialRequest(v1::IssueCredentialRequest* request);
absl::Status ValidateListCredentialsRequest(v1::ListCredentialsRequest* request);
absl::Status ValidateRevokeCredentialRequest(v1::RevokeCredentialRequest* request);
absl::Status ValidateRotateCredentialRequest(v1::RotateCredentialRequest* request);
// reason: 1..1024 bytes of UTF-8 after trimming, no control characters.
inline constexpr size_t kMaxAcceptRestoreReasonBytes = 1024;
absl::Status ValidateAcceptRestoreRequest(v1::AcceptRestoreRequest* request);
absl::Status ValidateAuthenticateCredentialRequest(v1::AuthenticateCredentialRequest* request);

}  // namespace sharedos::grantstore::core

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_REQUEST_VALIDATION_H_
