#include "grantstore_svc/core/grant_store_core.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "capability/derive_grant.h"
#include "capability/errors.h"
#include "capability/reason_codes.h"
#include "common/crypto/random.h"
#include "common/proto/deterministic.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/validation/protocol.h"
#include "google/protobuf/util/message_differencer.h"
#include "grantstore_svc/core/control_plane_events.h"
#include "grantstore_svc/core/credentials.h"
#include "grantstore_svc/core/owner_binding.h"
#include "grantstore_svc/core/page_token.h"
#include "grantstore_svc/core/request_validation.h"

namespace sharedos::grantstore::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::util::MessageDifferencer;
using storage::StoredGrant;
using storage::WriteTransaction;

// The grant as issued (a stored grant without its revocation).
pb::CapabilityGrant IssuedForm(const pb::CapabilityGrant& grant) {
  pb::CapabilityGrant issued = grant;
  issued.clear_revoked_at();
  return issued;
}

absl::StatusOr<absl::Time> ToTime(const google::protobuf::Timestamp& timestamp) {
  return common::FromProtoTimestamp(timestamp);
}

// An existing grant under a new grant's id: the same grant, still live, answers itself (an
// idempotent retry); anything else is a reuse of the id.
absl::StatusOr<bool> IsReplayOf(const std::optional<StoredGrant>& existing,
                                const pb::CapabilityGrant& grant) {
  if (!existing.has_value()) return false;
  if (!existing->revoked_revision.has_value() &&
      MessageDifferencer::Equals(existing->grant, grant)) {
    return true;
  }
  return capability::errors::GrantIdInUse(grant.namespace_id(), grant.id());
}

using common::server::Role;

// Whether `caller` may resolve `record` as `request` asks: its reviewer, or an admin of its
// namespace explicitly on the reviewer's behalf. Errors: PERMISSION_DENIED (nothing written).
absl::Status CheckDecider(const Caller& caller, const v1::EscalationRecord& record,
                          const v1::ResolveEscalationRequest& request) {
  const std::string& id = record.escalation_id();
  const std::string reviewer = capability::AddressKey(record.escalation().reviewer());
  switch (caller.role) {
    case Role::kReviewer:
      if (request.on_behalf_of_reviewer()) {
        return capability::errors::NotTheReviewer(
            id, "on_behalf_of_reviewer is for an admin; a reviewer decides as itself");
      }
      if (caller.address != reviewer) {
        return capability::errors::NotTheReviewer(
            id, "the credential's principal is not the escalation's reviewer");
      }
      if (!common::server::ScopeCovers(caller.scope.namespaces, record.namespace_id()) ||
          (!caller.scope.owners.empty() &&
           !common::server::ScopeCovers(caller.scope.owners, reviewer))) {
        return capability::errors::NotTheReviewer(
            id, "the escalation is outside the reviewer credential's scope");
      }
      break;
    case Role::kAdmin:
      if (!caller.Administers(record.namespace_id())) {
        return capability::errors::NamespaceNotAdministered(record.namespace_id());
      }
      if (!request.on_behalf_of_reviewer()) {
        return capability::errors::NotTheReviewer(
            id, "an admin resolves only with on_behalf_of_reviewer, which is recorded");
      }
      break;
    default:
      return capability::errors::NotTheReviewer(
          id, absl::StrCat("a ", common::server::RoleName(caller.role),
                           " credential resolves no escalation"));
  }
  if (request.has_reviewer() && !capability::AddressEquals(request.reviewer(), ActorOf(caller))) {
    return capability::errors::ReviewerIsNotTheCaller();
  }
  return absl::OkStatus();
}

// The credential `caller` decides with, and who else may have known its secret (T3).
v1::DecisionCredential DecidedWith(const Caller& caller, bool identity_provider_configured) {
  v1::DecisionCredential with;
  with.set_credential_id(caller.name);
  with.set_from_file(caller.from_file);
  if (std::optional<pb::Address> issuer = capability::AddressFromKey(caller.issued_by)) {
    *with.mutable_issued_by() = *std::move(issuer);
  }
  if (std::optional<pb::Address> setter = capability::AddressFromKey(caller.secret_set_by)) {
    *with.mutable_secret_set_by() = *std::move(setter);
  }
  with.set_held_by_decider_alone(!caller.from_file && !caller.secret_set_by.empty() &&
                                 caller.secret_set_by == caller.address);
  // The person the identity provider vouched for (ADR 0020), or, with a provider configured, a
  // human reviewer deciding with a SharedOS credential instead: break-glass.
  with.set_idp_issuer(caller.idp_issuer);
  with.set_idp_subject(caller.idp_subject);
  with.set_break_glass(identity_provider_configured && caller.idp_issuer.empty() &&
                       caller.role == common::server::Role::kReviewer &&
                       absl::StartsWith(caller.address, "human:"));
  return with;
}

// Every requested capability concerns the reviewer's own resources (its owner, or the request's
// owner when it names none, is the reviewer). Errors: PERMISSION_DENIED naming the first other.
absl::Status CheckWithinReviewer(const v1::EscalationRecord& record) {
  const pb::Address& reviewer = record.escalation().reviewer();
  const pb::CapabilityRequest& asked = record.escalation().requested_authority();
  const pb::Address& default_owner = asked.has_owner() ? asked.owner() : reviewer;
  for (int i = 0; i < asked.capabilities_size(); ++i) {
    const pb::Address& owner =
        capability::OwnerOrDefault(asked.capabilities(i).resource(), default_owner);
    if (!capability::AddressEquals(owner, reviewer)) {
      return capability::errors::ApprovalBeyondReviewer(
          absl::StrCat("requested_authority.capabilities[", i, "].resource.owner"));
    }
  }
  return absl::OkStatus();
}

// Builds the grant an approval issues and checks that the narrowing only narrows.
absl::StatusOr<pb::CapabilityGrant> ApprovedGrant(const v1::EscalationRecord& record,
                                                  const v1::ResolveEscalationRequest& request,
                                                  const std::string& grant_id,
                                                  const google::protobuf::Timestamp& now,
                                                  absl::Duration default_ttl) {
  const pb::CapabilityRequest& asked = record.escalation().requested_authority();
  pb::CapabilityGrant grant;
  grant.set_id(grant_id);
  grant.set_namespace_id(asked.namespace_id());
  *grant.mutable_subject() = asked.requester();
  // Issued under the authority the escalated turn ran under, so the next turn with the same
  // context loads it (LoadAuthority: subject = actor, issuer = authority); the reviewer who
  // decided is on the escalation record. Older records without it: the reviewer.
  *grant.mutable_issuer() =
      record.has_authority() ? record.authority() : record.escalation().reviewer();
  *grant.mutable_capabilities() = asked.capabilities();
  // An approval acts on the reviewer's own resources only, named on every capability, so the
  // grant is never put to work on another owner's data whatever a later turn names as its owner
  // (ADR 0014, T1; CheckWithinReviewer has refused anything else).
  for (pb::Capability& capability : *grant.mutable_capabilities()) {
    *capability.mutable_resource()->mutable_owner() = record.escalation().reviewer();
  }
  pb::CapabilityConstraints* constraints = grant.mutable_constraints();
  if (asked.has_constraints()) *constraints = asked.constraints();
  *grant.mutable_issued_at() = now;
  auto& metadata = *grant.mutable_metadata()->mutable_fields();
  metadata["escalationId"].set_string_value(record.escalation_id());
  metadata["capabilityRequestId"].set_string_value(asked.id());
  metadata["approvedBy"].set_string_value(capability::AddressKey(record.decided_by()));
  metadata["approvedWithCredential"].set_string_value(record.decided_with().credential_id());
  metadata["credentialHeldByDeciderAlone"].set_bool_value(
      record.decided_with().held_by_decider_alone());
  // Nothing narrowed and nothing asked for: the approval still ends (Options::approval_ttl).
  const bool expires = constraints->has_expires_at() ||
                       (request.has_narrowing() && request.narrowing().has_expires_at());
  if (!expires && default_ttl > absl::ZeroDuration()) {
    // From when it may first be used: now, or a later not_before the request asked for.
    ASSIGN_OR_RETURN(absl::Time start, ToTime(now));
    if (constraints->has_not_before()) {
      ASSIGN_OR_RETURN(const absl::Time not_before, ToTime(constraints->not_before()));
      start = std::max(start, not_before);
    }
    ASSIGN_OR_RETURN(*constraints->mutable_expires_at(),
                     common::ToProtoTimestamp(start + default_ttl));
  }

  if (!request.has_narrowing()) return grant;
  const v1::GrantNarrowing& narrowing = request.narrowing();
  if (narrowing.has_expires_at()) {
    ASSIGN_OR_RETURN(const absl::Time expires, ToTime(narrowing.expires_at()));
    if (constraints->has_expires_at()) {
      ASSIGN_OR_RETURN(const absl::Time asked_expires, ToTime(constraints->expires_at()));
      if (expires > asked_expires) {
        return capability::errors::InvalidField(
            "narrowing.expires_at", "later than the requested expires_at (would widen)");
      }
    }
    if (constraints->has_not_before()) {
      ASSIGN_OR_RETURN(const absl::Time not_before, ToTime(constraints->not_before()));
      if (expires < not_before) {
        return capability::errors::InvalidField("narrowing.expires_at",
                                                "before the requested not_before");
      }
    }
    *constraints->mutable_expires_at() = narrowing.expires_at();
  }
  if (narrowing.has_max_uses()) {
    if (constraints->has_max_uses() && narrowing.max_uses() > constraints->max_uses()) {
      return capability::errors::InvalidField("narrowing.max_uses",
                                              "above the requested max_uses (would widen)");
    }
    constraints->set_max_uses(narrowing.max_uses());
  }
  if (!narrowing.purposes().empty()) {
    if (!constraints->purposes().empty()) {
      const absl::flat_hash_set<std::string> allowed(constraints->purposes().begin(),
                                                     constraints->purposes().end());
      for (int i = 0; i < narrowing.purposes_size(); ++i) {
        if (!allowed.contains(narrowing.purposes(i))) {
          return capability::errors::InvalidField(absl::StrCat("narrowing.purposes[", i, "]"),
                                                  "not among the requested purposes (would widen)");
        }
      }
    }
    *constraints->mutable_purposes() = narrowing.purposes();
  }
  return grant;
}

}  // namespace

Caller InProcessOperator(const std::string& name) {
  Caller caller;
  caller.name = name;
  caller.address = "service:" + name;
  caller.role = common::server::Role::kAdmin;
  caller.scope.namespaces = {"*"};
  return caller;
}

GrantStoreCore::GrantStoreCore(storage::GrantStore& store, audit::client::AuditWriter& audit,
                               const common::Clock& clock, Options options)
    : store_(store),
      audit_(audit),
      clock_(clock),
      options_([&options] {
        if (!options.new_id) options.new_id = [] { return common::NewUuidV4(); };
        return std::move(options);
      }()),
      escalation_metrics_(options_.metrics) {}

GrantStoreCore::GrantStoreCore(storage::GrantStore& store, audit::client::AuditWriter& audit,
                               const common::Clock& clock)
    : GrantStoreCore(store, audit, clock, Options()) {}

absl::Status GrantStoreCore::AuditAndCommit(std::unique_ptr<WriteTransaction> txn,
                                            std::vector<audit::v1::ControlPlaneEvent> events) {
  for (audit::v1::ControlPlaneEvent& event : events) {
    const absl::Status recorded = audit_.RecordControlPlane(std::move(event));
    if (!recorded.ok()) {
      txn.reset();  // Roll back before answering.
      return capability::errors::AuditUnavailable(recorded.message());
    }
  }
  return txn->Commit();
}

// --- Grants ---

absl::StatusOr<v1::IssueGrantResponse> GrantStoreCore::IssueGrant(const Caller& caller,
                                                                  v1::IssueGrantRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateIssueGrantRequest(&request));
  // Whose resources each capability reaches, decided now (ADR 0014, T1): what is stored, answered
  // and compared on a retry is the bound grant.
  RETURN_IF_ERROR(BindOwners(*request.mutable_grant(), request.any_owner(), "grant"));
  const pb::CapabilityGrant& grant = request.grant();
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());

  v1::IssueGrantResponse response;
  const std::string& key = request.idempotency_key();
  if (!key.empty()) {
    ASSIGN_OR_RETURN(std::optional<storage::IdempotencyEntry> entry, txn->GetIdempotencyKey(key));
    if (entry.has_value()) {
      ASSIGN_OR_RETURN(std::optional<StoredGrant> first,
                       txn->GetGrant(entry->namespace_id, entry->grant_id));
      if (!first.has_value())
        return capability::errors::CorruptRow("idempotency_keys", entry->grant_id);
      pb::CapabilityGrant issued = IssuedForm(first->grant);
      if (!MessageDifferencer::Equals(issued, grant))
        return capability::errors::IdempotencyKeyReused();
      *response.mutable_grant() = std::move(issued);
      response.set_revision(first->issued_revision);
      return response;
    }
  }
  ASSIGN_OR_RETURN(std::optional<StoredGrant> existing,
                   txn->GetGrant(grant.namespace_id(), grant.id()));
  ASSIGN_OR_RETURN(const bool replay, IsReplayOf(existing, grant));
  if (replay) {
    *response.mutable_grant() = existing->grant;
    response.set_revision(existing->issued_revision);
    return response;
  }

  RETURN_IF_ERROR(txn->InsertGrant(grant));
  if (!key.empty()) {
    RETURN_IF_ERROR(txn->PutIdempotencyKey(key, {grant.namespace_id(), grant.id()}));
  }
  const MutationContext context{ActorOf(caller), clock_.Now(), txn->revision()};
  response.set_revision(txn->revision());
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn), {GrantIssuedEvent(context, grant)}));
  *response.mutable_grant() = grant;
  return response;
}

absl::StatusOr<v1::DeriveGrantResponse> GrantStoreCore::DeriveGrant(
    const Caller& caller, v1::DeriveGrantRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateDeriveGrantRequest(&request));
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  ASSIGN_OR_RETURN(std::optional<StoredGrant> parent,
                   txn->GetGrant(request.namespace_id(), request.parent_grant_id()));
  if (!parent.has_value()) {
    return capability::errors::ParentGrantNotFound(request.namespace_id(),
                                                   request.parent_grant_id());
  }
  if (parent->revoked_revision.has_value()) {
    return capability::errors::ParentGrantRevoked(request.namespace_id(),
                                                  request.parent_grant_id());
  }

  v1::DerivationRequest& child = *request.mutable_child();
  capability::DeriveRequest derive;
  derive.id = child.id();
  derive.subject = child.subject();
  derive.capabilities.assign(child.capabilities().begin(), child.capabilities().end());
  RETURN_IF_ERROR(BindChildOwners(parent->grant, derive.capabilities, "child.capabilities"));
  if (child.has_constraints()) derive.constraints = child.constraints();
  derive.issued_at = child.issued_at();
  if (child.has_metadata()) derive.metadata = child.metadata();
  ASSIGN_OR_RETURN(capability::DeriveResult derived,
                   capability::DeriveGrant(parent->grant, derive));

  v1::DeriveGrantResponse response;
  if (!derived.ok()) {
    response.mutable_refusal()->set_code(std::string(capability::Name(*derived.refusal)));
    return response;
  }
  const pb::CapabilityGrant& grant = derived.grant;
  ASSIGN_OR_RETURN(std::optional<StoredGrant> existing,
                   txn->GetGrant(grant.namespace_id(), grant.id()));
  ASSIGN_OR_RETURN(const bool replay, IsReplayOf(existing, grant));
  v1::DeriveGrantResponse::Granted* granted = response.mutable_granted();
  if (replay) {
    *granted->mutable_grant() = existing->grant;
    granted->set_revision(existing->issued_revision);
    return response;
  }
  RETURN_IF_ERROR(txn->InsertGrant(grant));
  const MutationContext context{ActorOf(caller), clock_.Now(), txn->revision()};
  granted->set_revision(txn->revision());
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn), {GrantDerivedEvent(context, grant)}));
  *granted->mutable_grant() = grant;
  return response;
}

absl::StatusOr<v1::RevokeGrantResponse> GrantStoreCore::RevokeGrant(
    const Caller& caller, v1::RevokeGrantRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateRevokeGrantRequest(&request));
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  ASSIGN_OR_RETURN(std::optional<StoredGrant> existing,
                   txn->GetGrant(request.namespace_id(), request.grant_id()));
  if (!existing.has_value()) {
    return capability::errors::GrantNotFound(request.namespace_id(), request.grant_id());
  }
  v1::RevokeGrantResponse response;
  if (existing->revoked_revision.has_value()) {
    *response.mutable_revoked_at() = existing->grant.revoked_at();
    response.set_revision(*existing->revoked_revision);
    return response;
  }
  const absl::Time now = clock_.Now();
  ASSIGN_OR_RETURN(*response.mutable_revoked_at(), common::ToProtoTimestamp(now));
  RETURN_IF_ERROR(txn->RevokeGrant(request.namespace_id(), request.grant_id(), now));
  pb::CapabilityGrant revoked = std::move(existing->grant);
  *revoked.mutable_revoked_at() = response.revoked_at();
  const MutationContext context{ActorOf(caller), now, txn->revision()};
  response.set_revision(txn->revision());
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn), {GrantRevokedEvent(context, revoked)}));
  return response;
}

absl::StatusOr<v1::GetGrantResponse> GrantStoreCore::GetGrant(v1::GetGrantRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateGetGrantRequest(&request));
  ASSIGN_OR_RETURN(std::optional<StoredGrant> stored,
                   store_.GetGrant(request.namespace_id(), request.grant_id(), std::nullopt));
  if (!stored.has_value()) {
    return capability::errors::GrantNotFound(request.namespace_id(), request.grant_id());
  }
  v1::GetGrantResponse response;
  *response.mutable_grant() = std::move(stored->grant);
  return response;
}

absl::StatusOr<v1::ListGrantsResponse> GrantStoreCore::ListGrants(v1::ListGrantsRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateListGrantsRequest(&request));
  const v1::GrantFilter& filter = request.filter();
  storage::GrantQuery query;
  query.namespace_id = filter.namespace_id();
  if (filter.has_subject()) query.subject = filter.subject();
  if (filter.has_issuer()) query.issuer = filter.issuer();
  query.include_revoked = filter.include_revoked();
  if (!request.page_token().empty()) {
    ASSIGN_OR_RETURN(query.after_grant_id, DecodePageToken(request.page_token(), "grants", filter));
  }
  const int page_size = request.page_size() == 0 ? kDefaultPageSize : request.page_size();
  query.limit = page_size + 1;
  ASSIGN_OR_RETURN(std::vector<pb::CapabilityGrant> grants, store_.ListGrants(query));
  v1::ListGrantsResponse response;
  const bool more = static_cast<int>(grants.size()) > page_size;
  if (more) grants.resize(page_size);
  for (pb::CapabilityGrant& grant : grants) *response.add_grants() = std::move(grant);
  if (more) {
    response.set_next_page_token(
        EncodePageToken("grants", filter, response.grants(page_size - 1).id()));
  }
  return response;
}

// --- Host policy ---

absl::StatusOr<v1::PutHostPolicyResponse> GrantStoreCore::PutHostPolicy(
    const Caller& caller, v1::PutHostPolicyRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidatePutHostPolicyRequest(&request));
  const v1::HostPolicy& policy = request.policy();
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  ASSIGN_OR_RETURN(std::optional<storage::StoredHostPolicy> current,
                   txn->GetHostPolicy(policy.namespace_id()));
  v1::PutHostPolicyResponse response;
  if (current.has_value() && current->policy.version() == policy.version() &&
      MessageDifferencer::Equals(current->policy, policy)) {
    *response.mutable_policy() = std::move(current->policy);
    response.set_revision(current->revision);
    return response;
  }
  ASSIGN_OR_RETURN(const bool used,
                   txn->HostPolicyVersionUsed(policy.namespace_id(), policy.version()));
  if (used)
    return capability::errors::HostPolicyVersionUsed(policy.namespace_id(), policy.version());
  RETURN_IF_ERROR(txn->PutHostPolicy(policy));
  const MutationContext context{ActorOf(caller), clock_.Now(), txn->revision()};
  response.set_revision(txn->revision());
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn), {HostPolicyUpdatedEvent(context, policy)}));
  *response.mutable_policy() = policy;
  return response;
}

absl::StatusOr<v1::GetHostPolicyResponse> GrantStoreCore::GetHostPolicy(
    v1::GetHostPolicyRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateGetHostPolicyRequest(&request));
  ASSIGN_OR_RETURN(std::optional<storage::StoredHostPolicy> stored,
                   store_.GetHostPolicy(request.namespace_id()));
  v1::GetHostPolicyResponse response;
  if (stored.has_value()) {
    *response.mutable_policy() = std::move(stored->policy);
  } else {
    response.mutable_absent();
  }
  return response;
}

// --- Escalations ---

absl::StatusOr<v1::ListEscalationsResponse> GrantStoreCore::ListEscalations(
    v1::ListEscalationsRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateListEscalationsRequest(&request));
  // The filter a token is bound to: the request without its paging fields.
  v1::ListEscalationsRequest filter = request;
  filter.clear_page_token();
  filter.clear_page_size();
  storage::EscalationQuery query;
  query.namespace_id = request.namespace_id();
  if (request.has_status()) query.status = request.status();
  if (!request.page_token().empty()) {
    ASSIGN_OR_RETURN(const std::string position,
                     DecodePageToken(request.page_token(), "escalations", filter));
    if (!absl::SimpleAtoi(position, &query.after_recorded_revision) ||
        query.after_recorded_revision < 0) {
      return capability::errors::InvalidField("page_token", "malformed");
    }
  }
  const int page_size = request.page_size() == 0 ? kDefaultPageSize : request.page_size();
  query.limit = page_size + 1;
  ASSIGN_OR_RETURN(std::vector<v1::EscalationRecord> records, store_.ListEscalations(query));
  v1::ListEscalationsResponse response;
  const bool more = static_cast<int>(records.size()) > page_size;
  if (more) records.resize(page_size);
  for (v1::EscalationRecord& record : records) *response.add_escalations() = std::move(record);
  if (more) {
    response.set_next_page_token(
        EncodePageToken("escalations", filter,
                        absl::StrCat(response.escalations(page_size - 1).recorded_revision())));
  }
  return response;
}

absl::StatusOr<v1::GetEscalationResponse> GrantStoreCore::GetEscalation(
    v1::GetEscalationRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateGetEscalationRequest(&request));
  ASSIGN_OR_RETURN(std::optional<storage::StoredEscalation> stored,
                   store_.GetEscalation(request.escalation_id()));
  if (!stored.has_value()) return capability::errors::EscalationNotFound(request.escalation_id());
  v1::GetEscalationResponse response;
  *response.mutable_escalation() = std::move(stored->record);
  return response;
}

absl::StatusOr<v1::ResolveEscalationResponse> GrantStoreCore::ResolveEscalation(
    const Caller& caller, v1::ResolveEscalationRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateResolveEscalationRequest(&request));
  v1::ResolveEscalationRequest resolution = request;
  resolution.clear_escalation_id();
  // The same decision by the same decider is a retry; by another, a second resolution.
  const std::string fingerprint = absl::StrCat(common::DeterministicBytes(resolution), "|",
                                               capability::AddressKey(ActorOf(caller)));

  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  ASSIGN_OR_RETURN(std::optional<storage::StoredEscalation> stored,
                   txn->GetEscalation(request.escalation_id()));
  if (!stored.has_value()) return capability::errors::EscalationNotFound(request.escalation_id());
  v1::EscalationRecord record = std::move(stored->record);
  RETURN_IF_ERROR(CheckDecider(caller, record, request));
  v1::ResolveEscalationResponse response;

  if (record.status() != v1::ESCALATION_RECORD_STATUS_PENDING) {
    if (stored->resolution_fingerprint != fingerprint) {
      return capability::errors::EscalationAlreadyResolved(
          record.escalation_id(),
          record.status() == v1::ESCALATION_RECORD_STATUS_APPROVED ? "approved" : "denied");
    }
    // The same resolution again: answer what it produced.
    if (!record.grant_id().empty()) {
      ASSIGN_OR_RETURN(std::optional<StoredGrant> grant,
                       txn->GetGrant(record.namespace_id(), record.grant_id()));
      if (grant.has_value()) *response.mutable_grant() = std::move(grant->grant);
    }
    *response.mutable_escalation() = std::move(record);
    return response;
  }

  const absl::Time now = clock_.Now();
  ASSIGN_OR_RETURN(const google::protobuf::Timestamp now_proto, common::ToProtoTimestamp(now));
  const MutationContext context{ActorOf(caller), now, txn->revision()};
  *record.mutable_reviewer() = record.escalation().reviewer();
  *record.mutable_decided_by() = ActorOf(caller);
  *record.mutable_decided_with() = DecidedWith(caller, options_.identity_provider_configured);
  record.set_on_behalf_of_reviewer(request.on_behalf_of_reviewer());
  record.set_note(request.note());
  *record.mutable_resolved_at() = now_proto;
  std::vector<audit::v1::ControlPlaneEvent> events;

  if (request.decision() == v1::ESCALATION_DECISION_APPROVE) {
    if (!record.escalation().has_requested_authority()) {
      return capability::errors::EscalationHasNoRequestedAuthority(record.escalation_id());
    }
    RETURN_IF_ERROR(CheckWithinReviewer(record));
    const std::string grant_id =
        request.grant_id().empty() ? absl::StrCat("grant-", options_.new_id()) : request.grant_id();
    ASSIGN_OR_RETURN(pb::CapabilityGrant grant,
                     ApprovedGrant(record, request, grant_id, now_proto, options_.approval_ttl));
    RETURN_IF_ERROR(common::validation::ValidateCapabilityGrant(&grant, "grant"));
    ASSIGN_OR_RETURN(std::optional<StoredGrant> existing,
                     txn->GetGrant(grant.namespace_id(), grant.id()));
    if (existing.has_value())
      return capability::errors::GrantIdInUse(grant.namespace_id(), grant.id());
    RETURN_IF_ERROR(txn->InsertGrant(grant));
    record.set_status(v1::ESCALATION_RECORD_STATUS_APPROVED);
    record.set_grant_id(grant.id());
    events.push_back(GrantIssuedEvent(context, grant, record.escalation_id()));
    *response.mutable_grant() = std::move(grant);
  } else {
    record.set_status(v1::ESCALATION_RECORD_STATUS_DENIED);
  }
  RETURN_IF_ERROR(txn->ResolveEscalation(record, fingerprint));
  events.push_back(EscalationResolvedEvent(context, record));
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn), std::move(events)));
  // Counted once committed; a retry answering the first resolution (above) is not counted again.
  escalation_metrics_.Resolved(record.status() == v1::ESCALATION_RECORD_STATUS_APPROVED
                                   ? common::metrics::EscalationMetrics::Resolution::kApproved
                                   : common::metrics::EscalationMetrics::Resolution::kDenied);
  *response.mutable_escalation() = std::move(record);
  return response;
}

// --- Data plane ---

absl::StatusOr<v1::LoadAuthorityResponse> GrantStoreCore::LoadAuthority(
    v1::LoadAuthorityRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateLoadAuthorityRequest(&request));
  std::optional<int64_t> at_revision;
  if (request.has_at_revision()) at_revision = request.at_revision();
  const int limit = options_.max_resolved_grants;
  ASSIGN_OR_RETURN(storage::AuthoritySnapshot snapshot,
                   store_.LoadAuthority(request.namespace_id(), request.actor(),
                                        request.authority(), at_revision, limit + 1));
  if (static_cast<int>(snapshot.grants.size()) > limit)
    return capability::errors::GrantLimitExceeded(limit);
  v1::LoadAuthorityResponse response;
  response.mutable_grants()->Reserve(static_cast<int>(snapshot.grants.size()));
  for (pb::CapabilityGrant& grant : snapshot.grants) *response.add_grants() = std::move(grant);
  response.set_revision(snapshot.revision);
  if (snapshot.host_policy.has_value()) {
    *response.mutable_host_policy()->mutable_loaded() = std::move(*snapshot.host_policy);
  } else {
    response.mutable_host_policy()->mutable_absent();
  }
  return response;
}

absl::StatusOr<v1::ResolveGrantResponse> GrantStoreCore::ResolveGrant(
    v1::ResolveGrantRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateResolveGrantRequest(&request));
  std::optional<int64_t> at_revision;
  if (request.has_at_revision()) at_revision = request.at_revision();
  ASSIGN_OR_RETURN(std::optional<StoredGrant> stored,
                   store_.GetGrant(request.namespace_id(), request.grant_id(), at_revision));
  if (!stored.has_value()) {
    return capability::errors::GrantNotFound(request.namespace_id(), request.grant_id());
  }
  v1::ResolveGrantResponse response;
  *response.mutable_grant() = std::move(stored->grant);
  return response;
}

absl::StatusOr<v1::TryConsumeResponse> GrantStoreCore::TryConsume(v1::TryConsumeRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateTryConsumeRequest(&request));
  ASSIGN_OR_RETURN(
      const storage::ConsumeResult result,
      store_.TryConsume(request.namespace_id(), request.grant_id(), request.max_uses()));
  v1::TryConsumeResponse response;
  response.set_consumed(result.consumed);
  response.set_uses(result.uses);
  return response;
}

absl::StatusOr<v1::GetUsageResponse> GrantStoreCore::GetUsage(v1::GetUsageRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateGetUsageRequest(&request));
  ASSIGN_OR_RETURN(const int64_t uses, store_.GetUsage(request.namespace_id(), request.grant_id()));
  v1::GetUsageResponse response;
  response.set_uses(uses);
  return response;
}

absl::StatusOr<v1::CheckRevocationsResponse> GrantStoreCore::CheckRevocations(
    v1::CheckRevocationsRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateCheckRevocationsRequest(&request));
  const std::vector<std::string> ids(request.grant_ids().begin(), request.grant_ids().end());
  ASSIGN_OR_RETURN(storage::RevocationCheck check,
                   store_.CheckRevocations(request.namespace_id(), ids));
  v1::CheckRevocationsResponse response;
  response.set_revision(check.revision);
  for (std::string& id : check.revoked_grant_ids) response.add_revoked_grant_ids(std::move(id));
  return response;
}

absl::StatusOr<v1::RecordEscalationResponse> GrantStoreCore::RecordEscalation(
    const Caller& caller, v1::RecordEscalationRequest request) {
  RETURN_IF_ERROR(Serving());
  RETURN_IF_ERROR(ValidateRecordEscalationRequest(&request));
  ASSIGN_OR_RETURN(std::unique_ptr<WriteTransaction> txn, store_.BeginWrite());
  v1::RecordEscalationResponse response;
  std::string id = request.escalation_id();
  if (!id.empty()) {
    ASSIGN_OR_RETURN(std::optional<storage::StoredEscalation> existing, txn->GetEscalation(id));
    if (existing.has_value()) {
      const v1::EscalationRecord& stored = existing->record;
      if (stored.namespace_id() != request.namespace_id() ||
          stored.execution_id() != request.execution_id() ||
          !MessageDifferencer::Equals(stored.escalation(), request.escalation()) ||
          !MessageDifferencer::Equals(stored.authority(), request.authority())) {
        return capability::errors::EscalationIdInUse(id);
      }
      response.set_escalation_id(id);
      return response;
    }
  } else {
    id = absl::StrCat("esc-", options_.new_id());
  }
  v1::EscalationRecord record;
  record.set_escalation_id(id);
  record.set_namespace_id(request.namespace_id());
  record.set_execution_id(request.execution_id());
  *record.mutable_escalation() = request.escalation();
  if (request.has_authority()) *record.mutable_authority() = request.authority();
  record.set_status(v1::ESCALATION_RECORD_STATUS_PENDING);
  record.set_recorded_revision(txn->revision());
  RETURN_IF_ERROR(txn->InsertEscalation(record));
  const MutationContext context{ActorOf(caller), clock_.Now(), txn->revision()};
  RETURN_IF_ERROR(AuditAndCommit(std::move(txn), {EscalationRecordedEvent(context, record)}));
  response.set_escalation_id(id);
  return response;
}

}  // namespace sharedos::grantstore::core
