#include "grantstore_svc/core/control_plane_events.h"

#include "absl/strings/str_cat.h"
#include "capability/address.h"
#include "common/time/proto_time.h"
#include "google/protobuf/struct.pb.h"

namespace sharedos::grantstore::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::audit::v1::ControlPlaneEvent;
using ::sharedos::audit::v1::ControlPlaneEventType;

void SetString(ControlPlaneEvent& event, const std::string& key, const std::string& value) {
  (*event.mutable_metadata()->mutable_fields())[key].set_string_value(value);
}

std::string AddressString(const pb::Address& address) { return capability::AddressKey(address); }

ControlPlaneEvent Base(const MutationContext& context, ControlPlaneEventType type,
                       const std::string& namespace_id) {
  ControlPlaneEvent event;
  event.set_type(type);
  event.set_outcome(pb::AUDIT_OUTCOME_SUCCEEDED);
  // The clock is the store's own; a time outside the Timestamp range cannot occur in practice
  // and would be refused by the writer's validation.
  absl::StatusOr<google::protobuf::Timestamp> at = common::ToProtoTimestamp(context.at);
  if (at.ok()) *event.mutable_at() = *at;
  event.set_trace_id(absl::StrCat("grantstore-r", context.revision));
  event.set_namespace_id(namespace_id);
  *event.mutable_actor() = context.actor;
  event.set_purpose(kControlPlanePurpose);
  (*event.mutable_metadata()->mutable_fields())["revision"].set_number_value(
      static_cast<double>(context.revision));
  return event;
}

ControlPlaneEvent GrantEvent(const MutationContext& context, ControlPlaneEventType type,
                             const pb::CapabilityGrant& grant) {
  ControlPlaneEvent event = Base(context, type, grant.namespace_id());
  *event.mutable_authority() = grant.issuer();
  *event.mutable_owner() = grant.issuer();
  if (grant.capabilities_size() > 0 && grant.capabilities(0).resource().has_owner()) {
    *event.mutable_owner() = grant.capabilities(0).resource().owner();
  }
  event.set_grant_id(grant.id());
  SetString(event, "subject", AddressString(grant.subject()));
  return event;
}

}  // namespace

ControlPlaneEvent GrantIssuedEvent(const MutationContext& context, const pb::CapabilityGrant& grant,
                                   const std::string& escalation_id) {
  ControlPlaneEvent event =
      GrantEvent(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED, grant);
  if (!escalation_id.empty()) SetString(event, "escalationId", escalation_id);
  return event;
}

ControlPlaneEvent GrantDerivedEvent(const MutationContext& context,
                                    const pb::CapabilityGrant& grant) {
  ControlPlaneEvent event =
      GrantEvent(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED, grant);
  SetString(event, "parentGrantId", grant.parent_grant_id());
  return event;
}

ControlPlaneEvent GrantRevokedEvent(const MutationContext& context,
                                    const pb::CapabilityGrant& grant) {
  return GrantEvent(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED, grant);
}

ControlPlaneEvent HostPolicyUpdatedEvent(const MutationContext& context,
                                         const v1::HostPolicy& policy) {
  ControlPlaneEvent event =
      Base(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED, policy.namespace_id());
  *event.mutable_authority() = event.actor();
  *event.mutable_owner() = event.actor();
  SetString(event, "policyVersion", policy.version());
  (*event.mutable_metadata()->mutable_fields())["ruleCount"].set_number_value(policy.rules_size());
  return event;
}

ControlPlaneEvent EscalationRecordedEvent(const MutationContext& context,
                                          const v1::EscalationRecord& record) {
  ControlPlaneEvent event =
      Base(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED, record.namespace_id());
  *event.mutable_authority() = record.escalation().reviewer();
  *event.mutable_owner() = record.escalation().reviewer();
  event.set_operation_id(record.execution_id());
  SetString(event, "escalationId", record.escalation_id());
  if (record.escalation().has_requested_authority()) {
    SetString(event, "requester",
              AddressString(record.escalation().requested_authority().requester()));
  }
  return event;
}

ControlPlaneEvent EscalationResolvedEvent(const MutationContext& context,
                                          const v1::EscalationRecord& record) {
  ControlPlaneEvent event =
      Base(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED, record.namespace_id());
  *event.mutable_authority() = record.escalation().reviewer();
  *event.mutable_owner() = record.escalation().reviewer();
  event.set_operation_id(record.execution_id());
  event.set_grant_id(record.grant_id());
  SetString(event, "escalationId", record.escalation_id());
  SetString(event, "decision",
            record.status() == v1::ESCALATION_RECORD_STATUS_APPROVED ? "approved" : "denied");
  SetString(event, "decidedBy", AddressString(context.actor));
  if (record.on_behalf_of_reviewer()) {
    (*event.mutable_metadata()->mutable_fields())["onBehalfOfReviewer"].set_bool_value(true);
  }
  // The credential decided with, and who else knew its secret (ADR 0014, T3): an approval made
  // with a secret an admin issued or rotated says so in the record itself.
  const v1::DecisionCredential& with = record.decided_with();
  SetString(event, "credentialId", with.credential_id());
  if (with.from_file()) {
    (*event.mutable_metadata()->mutable_fields())["credentialFromFile"].set_bool_value(true);
  }
  if (with.has_issued_by()) SetString(event, "credentialIssuedBy", AddressString(with.issued_by()));
  if (with.has_secret_set_by()) {
    SetString(event, "credentialSecretSetBy", AddressString(with.secret_set_by()));
  }
  (*event.mutable_metadata()->mutable_fields())["credentialHeldByDeciderAlone"].set_bool_value(
      with.held_by_decider_alone());
  // The identity provider's issuer and subject of the person who decided (ADR 0020), and
  // whether a human reviewer decided with a SharedOS credential although a provider is
  // configured (break-glass).
  if (!with.idp_issuer().empty()) SetString(event, "idpIssuer", with.idp_issuer());
  if (!with.idp_subject().empty()) SetString(event, "idpSubject", with.idp_subject());
  if (with.break_glass()) {
    (*event.mutable_metadata()->mutable_fields())["breakGlass"].set_bool_value(true);
  }
  // That a note was given and how long it is; its text stays on the record, out of the log.
  if (!record.note().empty()) {
    (*event.mutable_metadata()->mutable_fields())["noteBytes"].set_number_value(
        static_cast<double>(record.note().size()));
  }
  return event;
}

ControlPlaneEvent CredentialChangedEvent(const MutationContext& context,
                                         const v1::Credential& credential,
                                         const std::string& change) {
  const std::string namespace_id =
      credential.scope().namespaces().empty() ? "*" : credential.scope().namespaces(0);
  ControlPlaneEvent event =
      Base(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED, namespace_id);
  *event.mutable_authority() = credential.principal();
  *event.mutable_owner() = credential.principal();
  SetString(event, "credentialId", credential.credential_id());
  SetString(event, "change", change);
  SetString(event, "role", v1::CredentialRole_Name(credential.role()));
  return event;
}

ControlPlaneEvent RestoreAcceptedEvent(const MutationContext& context,
                                       const RestoreAcceptance& acceptance) {
  ControlPlaneEvent event =
      Base(context, audit::v1::CONTROL_PLANE_EVENT_TYPE_RESTORE_ACCEPTED, "*");
  *event.mutable_authority() = event.actor();
  *event.mutable_owner() = event.actor();
  auto& fields = *event.mutable_metadata()->mutable_fields();
  fields["restoredRevision"].set_number_value(static_cast<double>(acceptance.restored_revision));
  fields["logRevision"].set_number_value(static_cast<double>(acceptance.log_revision));
  fields["reasonBytes"].set_number_value(static_cast<double>(acceptance.reason_bytes));
  fields["reappliedGrantRevocations"].set_number_value(
      static_cast<double>(acceptance.reapplied_grant_revocations));
  fields["revokedCredentials"].set_number_value(
      static_cast<double>(acceptance.revoked_credentials));
  return event;
}

}  // namespace sharedos::grantstore::core
