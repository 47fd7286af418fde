#include "grantstore_svc/core/request_validation.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "common/server/auth.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"
#include "google/protobuf/message.h"

namespace sharedos::grantstore::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
namespace val = ::sharedos::common::validation;
using ::google::protobuf::RepeatedPtrField;

// Unknown fields anywhere in the request; the request itself is named "request".
absl::Status RejectUnknown(const google::protobuf::Message& request) {
  absl::Status status = val::RejectUnknownFields(request, "");
  if (!status.ok() && absl::StartsWith(status.message(), "unknown field")) {
    return val::InvalidArgumentAt("request", status.message());
  }
  return status;
}

absl::Status Required(bool present, absl::string_view path) {
  if (!present) return val::InvalidArgumentAt(path, "required");
  return absl::OkStatus();
}

// `address` is null when absent (callers pass `has_x() ? mutable_x() : nullptr`, so that
// checking never creates the field).
absl::Status RequiredAddress(pb::Address* address, absl::string_view path) {
  RETURN_IF_ERROR(Required(address != nullptr, path));
  return val::ValidateAddress(address, path);
}

absl::Status CheckPageSize(int page_size, absl::string_view path) {
  if (page_size < 0 || page_size > kMaxPageSize) {
    return val::InvalidArgumentAt(path, absl::StrCat("must be within 0..", kMaxPageSize));
  }
  return absl::OkStatus();
}

// A C0 control but LF, DEL, or a C1 control (U+0080..U+009F, encoded C2 80..C2 9F). `text`
// is valid UTF-8, so a C2 byte always leads a two-byte character.
bool HasControlCharacter(absl::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      return true;
    }
  }
  return false;
}

// Optional free text (empty: none), trimmed in place.
absl::Status CheckNote(std::string* note, absl::string_view path) {
  if (note->empty()) return absl::OkStatus();
  if (!val::Utf16Length(*note).has_value()) return val::InvalidArgumentAt(path, "invalid UTF-8");
  const absl::string_view trimmed = val::TrimWhitespace(*note);
  if (trimmed.size() != note->size()) *note = std::string(trimmed);
  RETURN_IF_ERROR(val::CheckString(*note, 0, kMaxResolutionNoteLength, path));
  if (HasControlCharacter(*note)) {
    return val::InvalidArgumentAt(path, "control character (only newline is allowed)");
  }
  return absl::OkStatus();
}

absl::Status CheckPurposes(RepeatedPtrField<std::string>* purposes, absl::string_view path) {
  RETURN_IF_ERROR(val::CheckCount(purposes->size(), 0, val::kMaxPurposes, path));
  absl::flat_hash_set<std::string> seen;
  for (int i = 0; i < purposes->size(); ++i) {
    const std::string element = val::IndexPath(path, i);
    RETURN_IF_ERROR(val::CheckPurpose(purposes->Mutable(i), element));
    if (!seen.insert(purposes->Get(i)).second) {
      return val::InvalidArgumentAt(element, absl::StrCat("duplicate \"", purposes->Get(i), "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckRule(v1::HostPolicyRule* rule, absl::string_view path) {
  RETURN_IF_ERROR(val::CheckIdentifier(rule->mutable_id(), val::FieldPath(path, "id")));
  RETURN_IF_ERROR(val::CheckIdentifier(rule->mutable_resource_namespace(),
                                       val::FieldPath(path, "resource_namespace")));
  const std::string path_field = val::FieldPath(path, "path");
  RETURN_IF_ERROR(val::CheckCount(rule->path_size(), 0, val::kMaxPathSegments, path_field));
  for (int i = 0; i < rule->path_size(); ++i) {
    RETURN_IF_ERROR(val::CheckPathSegment(rule->path(i), val::IndexPath(path_field, i)));
  }
  const std::string scope = val::FieldPath(path, "scope");
  if (rule->scope() == pb::SCOPE_UNSPECIFIED) return val::InvalidArgumentAt(scope, "unspecified");
  if (!pb::Scope_IsValid(rule->scope())) {
    return val::InvalidArgumentAt(scope, absl::StrCat("unknown value ", rule->scope()));
  }
  const std::string actions = val::FieldPath(path, "actions");
  RETURN_IF_ERROR(val::CheckCount(rule->actions_size(), 0, val::kMaxActions, actions));
  for (int i = 0; i < rule->actions_size(); ++i) {
    RETURN_IF_ERROR(val::CheckAction(rule->mutable_actions(i), val::IndexPath(actions, i)));
  }
  const std::string actors = val::FieldPath(path, "actors");
  RETURN_IF_ERROR(val::CheckCount(rule->actors_size(), 0, kMaxRuleActors, actors));
  for (int i = 0; i < rule->actors_size(); ++i) {
    RETURN_IF_ERROR(val::ValidateAddress(rule->mutable_actors(i), val::IndexPath(actors, i)));
  }
  return CheckPurposes(rule->mutable_purposes(), val::FieldPath(path, "purposes"));
}

}  // namespace

absl::Status ValidateIssueGrantRequest(v1::IssueGrantRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(Required(request->has_grant(), "grant"));
  pb::CapabilityGrant* grant = request->mutable_grant();
  RETURN_IF_ERROR(val::ValidateCapabilityGrant(grant, "grant"));
  if (grant->has_revoked_at()) {
    return val::InvalidArgumentAt("grant.revoked_at", "must be absent (use RevokeGrant)");
  }
  if (!grant->parent_grant_id().empty()) {
    return val::InvalidArgumentAt("grant.parent_grant_id",
                                  "must be absent for a root grant (use DeriveGrant)");
  }
  return val::CheckOptionalIdentifier(request->mutable_idempotency_key(), "idempotency_key");
}

absl::Status ValidateDeriveGrantRequest(v1::DeriveGrantRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_parent_grant_id(), "parent_grant_id"));
  RETURN_IF_ERROR(Required(request->has_child(), "child"));
  v1::DerivationRequest* child = request->mutable_child();
  RETURN_IF_ERROR(val::CheckIdentifier(child->mutable_id(), "child.id"));
  RETURN_IF_ERROR(
      RequiredAddress(child->has_subject() ? child->mutable_subject() : nullptr, "child.subject"));
  RETURN_IF_ERROR(
      val::CheckCount(child->capabilities_size(), 0, val::kMaxCapabilities, "child.capabilities"));
  for (int i = 0; i < child->capabilities_size(); ++i) {
    RETURN_IF_ERROR(val::ValidateCapability(child->mutable_capabilities(i),
                                            val::IndexPath("child.capabilities", i)));
  }
  if (child->has_constraints()) {
    RETURN_IF_ERROR(
        val::ValidateCapabilityConstraints(child->mutable_constraints(), "child.constraints"));
  }
  RETURN_IF_ERROR(Required(child->has_issued_at(), "child.issued_at"));
  RETURN_IF_ERROR(val::CheckTimestamp(child->issued_at(), "child.issued_at"));
  if (child->has_metadata()) {
    RETURN_IF_ERROR(val::CheckJsonObject(child->metadata(), "child.metadata"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRevokeGrantRequest(v1::RevokeGrantRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  return val::CheckIdentifier(request->mutable_grant_id(), "grant_id");
}

absl::Status ValidateGetGrantRequest(v1::GetGrantRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  return val::CheckIdentifier(request->mutable_grant_id(), "grant_id");
}

absl::Status ValidateListGrantsRequest(v1::ListGrantsRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(Required(request->has_filter(), "filter"));
  v1::GrantFilter* filter = request->mutable_filter();
  RETURN_IF_ERROR(val::CheckIdentifier(filter->mutable_namespace_id(), "filter.namespace_id"));
  if (filter->has_subject()) {
    RETURN_IF_ERROR(val::ValidateAddress(filter->mutable_subject(), "filter.subject"));
  }
  if (filter->has_issuer()) {
    RETURN_IF_ERROR(val::ValidateAddress(filter->mutable_issuer(), "filter.issuer"));
  }
  return CheckPageSize(request->page_size(), "page_size");
}

absl::Status ValidatePutHostPolicyRequest(v1::PutHostPolicyRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(Required(request->has_policy(), "policy"));
  v1::HostPolicy* policy = request->mutable_policy();
  RETURN_IF_ERROR(val::CheckIdentifier(policy->mutable_namespace_id(), "policy.namespace_id"));
  RETURN_IF_ERROR(val::CheckIdentifier(policy->mutable_version(), "policy.version"));
  RETURN_IF_ERROR(val::CheckCount(policy->rules_size(), 0, kMaxHostPolicyRules, "policy.rules"));
  absl::flat_hash_set<std::string> ids;
  for (int i = 0; i < policy->rules_size(); ++i) {
    const std::string path = val::IndexPath("policy.rules", i);
    RETURN_IF_ERROR(CheckRule(policy->mutable_rules(i), path));
    if (!ids.insert(policy->rules(i).id()).second) {
      return val::InvalidArgumentAt(val::FieldPath(path, "id"),
                                    absl::StrCat("duplicate \"", policy->rules(i).id(), "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateGetHostPolicyRequest(v1::GetHostPolicyRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  return val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id");
}

absl::Status ValidateListEscalationsRequest(v1::ListEscalationsRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  if (request->has_status()) {
    if (request->status() == v1::ESCALATION_RECORD_STATUS_UNSPECIFIED) {
      return val::InvalidArgumentAt("status", "unspecified");
    }
    if (!v1::EscalationRecordStatus_IsValid(request->status())) {
      return val::InvalidArgumentAt("status", absl::StrCat("unknown value ", request->status()));
    }
  }
  return CheckPageSize(request->page_size(), "page_size");
}

absl::Status ValidateGetEscalationRequest(v1::GetEscalationRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  return val::CheckIdentifier(request->mutable_escalation_id(), "escalation_id");
}

absl::Status ValidateResolveEscalationRequest(v1::ResolveEscalationRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_escalation_id(), "escalation_id"));
  if (request->decision() == v1::ESCALATION_DECISION_UNSPECIFIED) {
    return val::InvalidArgumentAt("decision", "unspecified");
  }
  if (!v1::EscalationDecision_IsValid(request->decision())) {
    return val::InvalidArgumentAt("decision", absl::StrCat("unknown value ", request->decision()));
  }
  if (request->has_reviewer()) {
    RETURN_IF_ERROR(val::ValidateAddress(request->mutable_reviewer(), "reviewer"));
  }
  RETURN_IF_ERROR(val::CheckOptionalIdentifier(request->mutable_grant_id(), "grant_id"));
  RETURN_IF_ERROR(CheckNote(request->mutable_note(), "note"));
  if (request->decision() == v1::ESCALATION_DECISION_DENY) {
    if (request->has_narrowing()) {
      return val::InvalidArgumentAt("narrowing", "only allowed with APPROVE");
    }
    if (!request->grant_id().empty()) {
      return val::InvalidArgumentAt("grant_id", "only allowed with APPROVE");
    }
    return absl::OkStatus();
  }
  if (request->has_narrowing()) {
    v1::GrantNarrowing* narrowing = request->mutable_narrowing();
    if (narrowing->has_expires_at()) {
      RETURN_IF_ERROR(val::CheckTimestamp(narrowing->expires_at(), "narrowing.expires_at"));
    }
    if (narrowing->has_max_uses() && narrowing->max_uses() < 1) {
      return val::InvalidArgumentAt("narrowing.max_uses", "must be positive");
    }
    RETURN_IF_ERROR(CheckPurposes(narrowing->mutable_purposes(), "narrowing.purposes"));
  }
  return absl::OkStatus();
}

absl::Status ValidateLoadAuthorityRequest(v1::LoadAuthorityRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  RETURN_IF_ERROR(
      RequiredAddress(request->has_actor() ? request->mutable_actor() : nullptr, "actor"));
  RETURN_IF_ERROR(RequiredAddress(request->has_authority() ? request->mutable_authority() : nullptr,
                                  "authority"));
  if (request->has_at_revision() && request->at_revision() < 0) {
    return val::InvalidArgumentAt("at_revision", "must not be negative");
  }
  return absl::OkStatus();
}

absl::Status ValidateResolveGrantRequest(v1::ResolveGrantRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_grant_id(), "grant_id"));
  if (request->has_at_revision() && request->at_revision() < 0) {
    return val::InvalidArgumentAt("at_revision", "must not be negative");
  }
  return absl::OkStatus();
}

absl::Status ValidateTryConsumeRequest(v1::TryConsumeRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_grant_id(), "grant_id"));
  if (request->max_uses() < 1) return val::InvalidArgumentAt("max_uses", "must be positive");
  return absl::OkStatus();
}

absl::Status ValidateGetUsageRequest(v1::GetUsageRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  return val::CheckIdentifier(request->mutable_grant_id(), "grant_id");
}

absl::Status ValidateCheckRevocationsRequest(v1::CheckRevocationsRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  RETURN_IF_ERROR(val::CheckCount(request->grant_ids_size(), 1, kMaxRevocationIds, "grant_ids"));
  for (int i = 0; i < request->grant_ids_size(); ++i) {
    RETURN_IF_ERROR(
        val::CheckIdentifier(request->mutable_grant_ids(i), val::IndexPath("grant_ids", i)));
  }
  return absl::OkStatus();
}

absl::Status ValidateRecordEscalationRequest(v1::RecordEscalationRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(Required(request->has_escalation(), "escalation"));
  pb::Escalation* escalation = request->mutable_escalation();
  RETURN_IF_ERROR(val::ValidateEscalation(escalation, "escalation"));
  if (escalation->status() != pb::ESCALATION_STATUS_PENDING) {
    return val::InvalidArgumentAt("escalation.status", "must be PENDING");
  }
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_namespace_id(), "namespace_id"));
  RETURN_IF_ERROR(val::CheckIdentifier(request->mutable_execution_id(), "execution_id"));
  RETURN_IF_ERROR(val::CheckOptionalIdentifier(request->mutable_escalation_id(), "escalation_id"));
  if (request->has_authority()) {
    RETURN_IF_ERROR(val::ValidateAddress(request->mutable_authority(), "authority"));
  }
  if (escalation->has_requested_authority()) {
    const pb::CapabilityRequest& asked = escalation->requested_authority();
    if (asked.namespace_id() != request->namespace_id()) {
      return val::InvalidArgumentAt("escalation.requested_authority.namespace_id",
                                    "must equal namespace_id");
    }
    if (!capability::AddressEquals(asked.owner(), escalation->reviewer())) {
      return val::InvalidArgumentAt("escalation.reviewer",
                                    "must equal requested_authority.owner (the context owner)");
    }
  }
  return absl::OkStatus();
}

namespace {

constexpr int kMaxScopeEntries = 64;

bool IsLowerHex64(absl::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::Status CheckScopeList(google::protobuf::RepeatedPtrField<std::string>* values,
                            absl::string_view path, bool address_keys) {
  if (values->size() > kMaxScopeEntries) {
    return val::InvalidArgumentAt(path, absl::StrCat("more than ", kMaxScopeEntries, " entries"));
  }
  for (int i = 0; i < values->size(); ++i) {
    const std::string at = absl::StrCat(path, "[", i, "]");
    std::string* value = values->Mutable(i);
    if (*value == "*") continue;
    if (address_keys) {
      if (!common::server::IsAddressKey(*value)) {
        return val::InvalidArgumentAt(at, "must be \"<human|agent|group|service>:<id>\" or \"*\"");
      }
    } else {
      RETURN_IF_ERROR(val::CheckIdentifier(value, at));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateIssueCredentialRequest(v1::IssueCredentialRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  RETURN_IF_ERROR(val::CheckOptionalIdentifier(request->mutable_credential_id(), "credential_id"));
  RETURN_IF_ERROR(RequiredAddress(request->has_principal() ? request->mutable_principal() : nullptr,
                                  "principal"));
  if (request->role() == v1::CREDENTIAL_ROLE_UNSPECIFIED ||
      !v1::CredentialRole_IsValid(request->role())) {
    return val::InvalidArgumentAt("role", "must be ADMIN, HOST, REVIEWER or SERVICE");
  }
  if (request->role() == v1::CREDENTIAL_ROLE_SERVICE && request->has_scope()) {
    return val::InvalidArgumentAt("scope", "a service credential has no scope");
  }
  v1::CredentialScope* scope = request->mutable_scope();
  RETURN_IF_ERROR(CheckScopeList(scope->mutable_namespaces(), "scope.namespaces", false));
  RETURN_IF_ERROR(CheckScopeList(scope->mutable_owners(), "scope.owners", true));
  RETURN_IF_ERROR(CheckScopeList(scope->mutable_authorities(), "scope.authorities", true));
  if (scope->authorities_size() > 0 && request->role() != v1::CREDENTIAL_ROLE_HOST) {
    return val::InvalidArgumentAt("scope.authorities", "only a host credential names authorities");
  }
  if (request->role() == v1::CREDENTIAL_ROLE_SERVICE) request->clear_scope();
  return absl::OkStatus();
}

absl::Status ValidateListCredentialsRequest(v1::ListCredentialsRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  return CheckPageSize(request->page_size(), "page_size");
}

absl::Status ValidateRevokeCredentialRequest(v1::RevokeCredentialRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  return val::CheckIdentifier(request->mutable_credential_id(), "credential_id");
}

absl::Status ValidateRotateCredentialRequest(v1::RotateCredentialRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  return val::CheckIdentifier(request->mutable_credential_id(), "credential_id");
}

absl::Status ValidateAcceptRestoreRequest(v1::AcceptRestoreRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  std::string* reason = request->mutable_reason();
  if (reason->size() > kMaxAcceptRestoreReasonBytes) {
    return val::InvalidArgumentAt("reason", "longer than 1024 bytes");
  }
  if (!val::Utf16Length(*reason).has_value()) {
    return val::InvalidArgumentAt("reason", "invalid UTF-8");
  }
  const absl::string_view trimmed = val::TrimWhitespace(*reason);
  if (trimmed.size() != reason->size()) *reason = std::string(trimmed);
  if (reason->empty()) return val::InvalidArgumentAt("reason", "required");
  if (HasControlCharacter(*reason)) {
    return val::InvalidArgumentAt("reason", "control characters are not allowed");
  }
  return absl::OkStatus();
}

absl::Status ValidateAuthenticateCredentialRequest(v1::AuthenticateCredentialRequest* request) {
  RETURN_IF_ERROR(RejectUnknown(*request));
  if (!IsLowerHex64(request->token_sha256())) {
    return val::InvalidArgumentAt("token_sha256", "must be 64 lowercase hex digits");
  }
  return absl::OkStatus();
}

}  // namespace sharedos::grantstore::core
