#include "grantstore_svc/client/operator_render.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/text/table.h"
#include "common/text/terminal_safe.h"
#include "google/protobuf/util/json_util.h"
#include "grantstore_svc/client/operator_names.h"

namespace sharedos::grantstore::client {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
using common::text::Table;
using common::text::TerminalSafe;

}  // namespace

namespace {

// "<namespace>:<path>[/**]@<owner>" (the owner given, or none) " [<actions>]".
std::string CapabilityText(const protocol::v1::Capability& capability, absl::string_view owner) {
  std::string resource = absl::StrCat(capability.resource().namespace_(), ":",
                                      absl::StrJoin(capability.resource().path(), "/"));
  if (capability.scope() == protocol::v1::SCOPE_DESCENDANTS) absl::StrAppend(&resource, "/**");
  if (!owner.empty()) absl::StrAppend(&resource, "@", owner);
  return absl::StrCat(resource, " [", absl::StrJoin(capability.actions(), ","), "]");
}

}  // namespace

std::string FormatCapability(const protocol::v1::Capability& capability) {
  return CapabilityText(capability, capability.resource().has_owner()
                                        ? FormatAddress(capability.resource().owner())
                                        : "");
}

std::string FormatGrantCapability(const protocol::v1::Capability& capability) {
  // A grant's capability without an owner reaches whichever owner a turn names (ADR 0014).
  return CapabilityText(capability, capability.resource().has_owner()
                                        ? FormatAddress(capability.resource().owner())
                                        : "(any owner)");
}

std::string FormatConstraints(const protocol::v1::CapabilityConstraints& constraints) {
  std::vector<std::string> parts;
  if (!constraints.purposes().empty()) {
    parts.push_back(absl::StrCat("purposes=", absl::StrJoin(constraints.purposes(), ",")));
  }
  if (constraints.has_not_before()) {
    parts.push_back(absl::StrCat("not_before=", FormatTimestamp(constraints.not_before())));
  }
  if (constraints.has_expires_at()) {
    parts.push_back(absl::StrCat("expires_at=", FormatTimestamp(constraints.expires_at())));
  }
  if (constraints.has_max_uses()) {
    parts.push_back(absl::StrCat("max_uses=", constraints.max_uses()));
  }
  if (constraints.has_delegation_depth()) {
    parts.push_back(absl::StrCat("delegation_depth=", constraints.delegation_depth()));
  }
  return absl::StrJoin(parts, " ");
}

std::string RenderGrants(const std::vector<protocol::v1::CapabilityGrant>& grants) {
  Table table({"ID", "SUBJECT", "ISSUER", "CAPABILITIES", "PARENT", "REVOKED"});
  for (const auto& grant : grants) {
    std::vector<std::string> capabilities;
    for (const auto& capability : grant.capabilities()) {
      capabilities.push_back(FormatGrantCapability(capability));
    }
    table.AddRow({grant.id(), FormatAddress(grant.subject()), FormatAddress(grant.issuer()),
                  absl::StrJoin(capabilities, " "), grant.parent_grant_id(),
                  grant.has_revoked_at() ? FormatTimestamp(grant.revoked_at()) : "no"});
  }
  return table.Render();
}

std::string RenderGrant(const protocol::v1::CapabilityGrant& grant) {
  Table table({"FIELD", "VALUE"});
  table.AddRow({"id", grant.id()});
  table.AddRow({"namespace", grant.namespace_id()});
  table.AddRow({"subject", FormatAddress(grant.subject())});
  table.AddRow({"issuer", FormatAddress(grant.issuer())});
  for (const auto& capability : grant.capabilities()) {
    table.AddRow({"capability", FormatGrantCapability(capability)});
  }
  table.AddRow({"constraints", FormatConstraints(grant.constraints())});
  table.AddRow({"issued_at", FormatTimestamp(grant.issued_at())});
  table.AddRow({"revoked_at", grant.has_revoked_at() ? FormatTimestamp(grant.revoked_at()) : ""});
  table.AddRow({"parent", grant.parent_grant_id()});
  return table.Render();
}

std::vector<std::string> AuditRecordColumns() {
  // What was tried (TOOL), who refused it (SOURCE: the kernel's mediation or the envelope's turn
  // layer), with which code (REASON; "(fail closed)" for infrastructure refusals) and the
  // situation behind it (CAUSE); a message.sent names its RECEIVER and MESSAGE id.
  return {"SEQ",   "AT",     "TYPE",   "OUTCOME", "NAMESPACE", "ACTOR",  "TOOL",
          "GRANT", "SOURCE", "REASON", "CAUSE",   "RECEIVER",  "MESSAGE"};
}

std::vector<std::string> AuditRecordCells(const av1::AuditRecord& record) {
  if (record.has_control_plane()) {
    // A control-plane record (not a protocol "1" event): no tool, source or reason; the CAUSE
    // cell of an escalation.resolved names the identity provider's iss/sub and break-glass.
    const auto& event = record.control_plane();
    return {absl::StrCat(record.sequence()),
            FormatTimestamp(event.at()),
            ControlPlaneEventTypeName(event.type()),
            AuditOutcomeName(event.outcome()),
            event.namespace_id(),
            event.has_actor() ? FormatAddress(event.actor()) : "",
            "",
            event.grant_id(),
            "",
            "",
            FormatResolutionIdentity(event),
            "",
            ""};
  }
  const auto& event = record.event();
  std::string reason = event.reason();
  if (event.fail_closed()) absl::StrAppend(&reason, " (fail closed)");
  return {absl::StrCat(record.sequence()),
          FormatTimestamp(event.at()),
          AuditEventTypeName(event.type()),
          AuditOutcomeName(event.outcome()),
          event.namespace_id(),
          event.has_actor() ? FormatAddress(event.actor()) : "",
          event.tool(),
          event.grant_id(),
          event.has_source() ? AuditSourceName(event.source()) : "",
          reason,
          event.cause(),
          event.has_receiver() ? FormatAddress(event.receiver()) : "",
          event.message_id()};
}

std::string RenderAuditRecords(const std::vector<av1::AuditRecord>& records) {
  Table table(AuditRecordColumns());
  for (const auto& record : records) table.AddRow(AuditRecordCells(record));
  return table.Render();
}

std::string FormatDecider(const gs::EscalationRecord& record) {
  if (!record.has_decided_by()) return "";
  std::string decider = FormatAddress(record.decided_by());
  if (record.on_behalf_of_reviewer()) absl::StrAppend(&decider, " on the reviewer's behalf");
  if (!record.has_decided_with()) return decider;
  const gs::DecisionCredential& with = record.decided_with();
  if (!with.idp_issuer().empty()) {
    // The person the identity provider vouched for (ADR 0020): its token, not a secret.
    return absl::StrCat(decider, " with an identity provider token (idpIssuer ", with.idp_issuer(),
                        ", idpSubject ", with.idp_subject(), ")");
  }
  absl::StrAppend(&decider, " with ", with.credential_id());
  if (with.from_file()) {
    absl::StrAppend(&decider, " (a credentials-file secret)");
  } else if (with.held_by_decider_alone()) {
    absl::StrAppend(&decider, " (secret set by itself)");
  } else {
    absl::StrAppend(&decider, " (secret set by ",
                    with.has_secret_set_by() ? FormatAddress(with.secret_set_by()) : "unknown",
                    ", not by the decider)");
  }
  if (with.break_glass()) {
    absl::StrAppend(&decider,
                    "; breakGlass: a human reviewer's SharedOS credential while an identity "
                    "provider is configured");
  }
  return decider;
}

std::string FormatResolutionIdentity(const audit::v1::ControlPlaneEvent& event) {
  if (event.type() != av1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED) return "";
  const auto& fields = event.metadata().fields();
  const auto text = [&fields](const std::string& key) -> std::string {
    auto it = fields.find(key);
    return it != fields.end() && it->second.has_string_value() ? it->second.string_value() : "";
  };
  std::vector<std::string> parts;
  if (const std::string issuer = text("idpIssuer"); !issuer.empty()) {
    parts.push_back(absl::StrCat("idpIssuer=", issuer));
  }
  if (const std::string subject = text("idpSubject"); !subject.empty()) {
    parts.push_back(absl::StrCat("idpSubject=", subject));
  }
  if (auto it = fields.find("breakGlass");
      it != fields.end() && it->second.has_bool_value() && it->second.bool_value()) {
    parts.push_back("breakGlass=true");
  }
  return absl::StrJoin(parts, " ");
}

std::string RenderEscalations(const std::vector<gs::EscalationRecord>& escalations) {
  Table table({"ID", "STATUS", "NAMESPACE", "EXECUTION", "REASON", "REVIEWER", "DECIDED BY",
               "GRANT", "NOTE"});
  for (const auto& record : escalations) {
    // One line per row: the note's newlines are shown as " / " (show prints it whole).
    table.AddRow({record.escalation_id(), EscalationStatusName(record.status()),
                  record.namespace_id(), record.execution_id(), record.escalation().reason(),
                  record.has_reviewer() ? FormatAddress(record.reviewer()) : "",
                  FormatDecider(record), record.grant_id(),
                  absl::StrReplaceAll(record.note(), {{"\n", " / "}})});
  }
  return table.Render();
}

std::string RenderPolicy(const gs::HostPolicy& policy) {
  std::string out = absl::StrCat("namespace ", TerminalSafe(policy.namespace_id()), ", version ",
                                 policy.version(), ", ", policy.rules_size(), " deny rules\n");
  Table table({"RULE", "RESOURCE", "SCOPE", "ACTIONS", "ACTORS", "PURPOSES"});
  for (const auto& rule : policy.rules()) {
    std::vector<std::string> actors;
    for (const auto& actor : rule.actors()) actors.push_back(FormatAddress(actor));
    table.AddRow({rule.id(),
                  absl::StrCat(rule.resource_namespace(), ":", absl::StrJoin(rule.path(), "/")),
                  rule.scope() == protocol::v1::SCOPE_DESCENDANTS ? "descendants" : "exact",
                  rule.actions().empty() ? "*" : absl::StrJoin(rule.actions(), ","),
                  actors.empty() ? "*" : absl::StrJoin(actors, ","),
                  rule.purposes().empty() ? "*" : absl::StrJoin(rule.purposes(), ",")});
  }
  return out + table.Render();
}

std::string RenderVerify(const av1::VerifyResponse& verify) {
  const std::string checkpoints =
      verify.checkpoints_verified() > 0
          ? absl::StrCat("; ", verify.checkpoints_verified(), " checkpoints extended")
          : "";
  if (verify.ok()) {
    return absl::StrCat("ok: ", verify.checked(), " records verify; head ",
                        TerminalSafe(verify.head_hash()), checkpoints, "\n");
  }
  const std::string where =
      verify.has_first_bad_sequence()
          ? absl::StrCat("first bad sequence ", verify.first_bad_sequence(), " ")
          : "";
  return absl::StrCat("BROKEN: ", where, "(", verify.checked(), " records checked", checkpoints,
                      "): ", TerminalSafe(verify.detail()), "\n");
}

std::string ToJson(const google::protobuf::Message& message, bool compact) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = !compact;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) return absl::StrCat("{\"error\": \"cannot print as JSON\"}\n");
  if (json.empty() || json.back() != '\n') json += '\n';
  // JSON's own escaping, plus DEL, C1 and bidi controls, which JSON leaves raw.
  return common::text::JsonTerminalSafe(json);
}

}  // namespace sharedos::grantstore::client
