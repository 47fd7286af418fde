// How sharedosctl and the reviewer console show answers: tables of grants, audit records,
// escalations, a host policy, a verification, or the response protos as JSON (--json). Every string
// from a request, a tool call or a record is printed through common/text/terminal_safe.h (tables
// cell by cell, JSON with its own escaping completed by JsonTerminalSafe). Pure.
#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_RENDER_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_RENDER_H_

#include <string>
#include <vector>

#include "google/protobuf/message.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::grantstore::client {

std::string FormatCapability(const protocol::v1::Capability& capability);
// A grant's capability: as FormatCapability, and "@(any owner)" when it names no owner (it reaches
// whichever owner a turn names, docs/adr/0014).
std::string FormatGrantCapability(const protocol::v1::Capability& capability);
// "purposes=a,b expires_at=… max_uses=1"; empty when unconstrained.
std::string FormatConstraints(const protocol::v1::CapabilityConstraints& constraints);
std::string RenderGrants(const std::vector<protocol::v1::CapabilityGrant>& grants);
std::string RenderGrant(const protocol::v1::CapabilityGrant& grant);
std::string RenderAuditRecords(const std::vector<audit::v1::AuditRecord>& records);
// The columns of an audit table, and one record's cells under them (the table above and the
// reviewer console's record view).
std::vector<std::string> AuditRecordColumns();
std::vector<std::string> AuditRecordCells(const audit::v1::AuditRecord& record);
// Who decided an escalation, as one phrase: the principal, "on the reviewer's behalf" for an
// admin, the credential it used and who set its secret (ADR 0014, T3) — or, decided with the
// identity provider's token, its idpIssuer and idpSubject (ADR 0020) — and "breakGlass" for a
// human reviewer's SharedOS credential used while a provider is configured; empty while pending.
std::string FormatDecider(const grantstore::v1::EscalationRecord& record);
// An escalation.resolved record's identity: "idpIssuer=<iss> idpSubject=<sub>" and/or
// "breakGlass=true", from its metadata; empty for any other record or when it has none. Raw
// (the caller escapes it).
std::string FormatResolutionIdentity(const audit::v1::ControlPlaneEvent& event);

std::string RenderEscalations(const std::vector<grantstore::v1::EscalationRecord>& escalations);
std::string RenderPolicy(const grantstore::v1::HostPolicy& policy);
std::string RenderVerify(const audit::v1::VerifyResponse& verify);
// Indented JSON (lowerCamelCase names), or one line when `compact`.
std::string ToJson(const google::protobuf::Message& message, bool compact = false);

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_RENDER_H_
