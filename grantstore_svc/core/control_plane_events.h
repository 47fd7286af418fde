// The audit records of grantstore's mutations: sharedos.audit.v1.ControlPlaneEvent, written
// with AuditWriter::RecordControlPlane into the one log and hash chain — never protocol "1"
// AuditEvents, whose eleven types a 1.0.0-preview reader is limited to (docs/adr/0008). Each
// carries the namespace, the authenticated acting principal as actor, the authority
// and owner the mutation concerns, the purpose kControlPlanePurpose and the store revision
// (metadata.revision), and never grant metadata, escalation metadata or credentials.
// Stateless; thread-safe.

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_CONTROL_PLANE_EVENTS_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_CONTROL_PLANE_EVENTS_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::grantstore::core {

// The purpose every control-plane event is recorded under (ControlPlaneEvent.purpose is required;
// a mutation of the store serves no turn's purpose).
inline constexpr char kControlPlanePurpose[] = "sharedos.control-plane";

// What every event of one mutation shares.
struct MutationContext {
  // The authenticated principal that caused the mutation (never a caller-supplied name).
  protocol::v1::Address actor;
  // The clock's now (ControlPlaneEvent.at).
  absl::Time at;
  // The revision the mutation commits as; also names the trace ("grantstore-r<revision>").
  int64_t revision = 0;
};

// grant.issued (also for grants issued by approving an escalation: metadata.escalationId).
// authority = issuer; owner = the first capability's resource owner, else the issuer;
// metadata {revision, subject: "<kind>:<id>", escalationId?}.
audit::v1::ControlPlaneEvent GrantIssuedEvent(const MutationContext& context,
                                              const protocol::v1::CapabilityGrant& grant,
                                              const std::string& escalation_id = "");
// grant.derived: as grant.issued, plus metadata.parentGrantId.
audit::v1::ControlPlaneEvent GrantDerivedEvent(const MutationContext& context,
                                               const protocol::v1::CapabilityGrant& grant);
// grant.revoked: as grant.issued.
audit::v1::ControlPlaneEvent GrantRevokedEvent(const MutationContext& context,
                                               const protocol::v1::CapabilityGrant& grant);
// host_policy.updated: actor = authority = owner = the caller; metadata {revision,
// policyVersion, ruleCount}.
audit::v1::ControlPlaneEvent HostPolicyUpdatedEvent(const MutationContext& context,
                                                    const v1::HostPolicy& policy);
// escalation.recorded: authority = owner = the escalation's reviewer (the context owner);
// operation_id = execution_id; metadata {revision, escalationId, requester?}.
audit::v1::ControlPlaneEvent EscalationRecordedEvent(const MutationContext& context,
                                                     const v1::EscalationRecord& record);
// escalation.resolved: authority = owner = the escalation's reviewer; actor = who decided;
// grant_id = the issued grant (approve); metadata {revision, escalationId, decision:
// "approved" | "denied", decidedBy, onBehalfOfReviewer?, noteBytes? (the note's UTF-8 length
// when one was given; never its text)}.
audit::v1::ControlPlaneEvent EscalationResolvedEvent(const MutationContext& context,
                                                     const v1::EscalationRecord& record);
// credential.changed: namespace = the credential's first namespace ("*" when it has none or
// all); authority = owner = the credential's principal; metadata {revision, credentialId,
// change: "issued" | "revoked" | "rotated", role}. Never the secret or its digest.
audit::v1::ControlPlaneEvent CredentialChangedEvent(const MutationContext& context,
                                                    const v1::Credential& credential,
                                                    const std::string& change);

// What an accepted restore did (AcceptRestore, docs/adr/0021).
struct RestoreAcceptance {
  // The revision the restored store had, and the highest the log held.
  int64_t restored_revision = 0;
  int64_t log_revision = 0;
  // The operator's reason's UTF-8 length (never its text).
  int64_t reason_bytes = 0;
  int64_t reapplied_grant_revocations = 0;
  int64_t revoked_credentials = 0;
};
// store.restore_accepted: namespace "*"; actor = authority = owner = the operator; metadata
// {revision, restoredRevision, logRevision, reasonBytes, reappliedGrantRevocations,
// revokedCredentials}.
audit::v1::ControlPlaneEvent RestoreAcceptedEvent(const MutationContext& context,
                                                  const RestoreAcceptance& acceptance);

}  // namespace sharedos::grantstore::core

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_CONTROL_PLANE_EVENTS_H_
