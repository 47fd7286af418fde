#include "grantstore_svc/client/explain.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text/terminal_safe.h"
#include "grantstore_svc/client/explanations.h"
#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_render.h"
#include "nlohmann/json.hpp"

namespace sharedos::grantstore::client {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
namespace pb = ::sharedos::protocol::v1;
using common::text::TerminalSafe;

constexpr size_t kMaxIdBytes = 256;

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// ---- Reading the record ----

// The record at `sequence`: the first Tail answers from there (then the stream is cancelled).
absl::StatusOr<av1::AuditRecord> RecordAt(const ExplainClients& clients, int64_t sequence) {
  av1::TailRequest request;
  request.set_from_sequence(sequence);
  std::unique_ptr<grpc::ClientContext> context = clients.context();
  auto reader = clients.audit->Tail(context.get(), request);
  av1::TailResponse response;
  std::optional<av1::AuditRecord> found;
  if (reader->Read(&response) && response.has_record()) found = response.record();
  context->TryCancel();
  grpc::Status status = reader->Finish();
  if (found.has_value() && found->sequence() == sequence) return *found;
  if (!found.has_value() && !status.ok() && status.error_code() != grpc::StatusCode::CANCELLED) {
    return FromGrpc(status);
  }
  return absl::NotFoundError(absl::StrCat("id: no record at sequence ", sequence));
}

// The record whose event id (or control-plane id) is `id`, scanning the log page by page.
absl::StatusOr<av1::AuditRecord> RecordWithId(const ExplainClients& clients, absl::string_view id) {
  av1::QueryRequest request;
  request.set_limit(1000);
  for (int page = 0; page < kMaxScanPages; ++page) {
    av1::QueryResponse answered;
    grpc::Status status = clients.audit->Query(clients.context().get(), request, &answered);
    if (!status.ok()) return FromGrpc(status);
    for (const av1::AuditRecord& record : answered.records()) {
      if ((record.has_event() && record.event().id() == id) ||
          (record.has_control_plane() && record.control_plane().id() == id)) {
        return record;
      }
    }
    if (answered.next_page_token().empty()) {
      return absl::NotFoundError(absl::StrCat("id: no record with event id ", id));
    }
    request.set_page_token(answered.next_page_token());
  }
  return absl::NotFoundError(absl::StrCat("id: no record with event id ", id, " in the first ",
                                          kMaxScanPages * 1000,
                                          " records; explain it by its sequence instead"));
}

// The records matching `filter`, at most kMaxTracePages pages.
absl::StatusOr<std::vector<av1::AuditRecord>> Records(const ExplainClients& clients,
                                                      const av1::AuditFilter& filter) {
  av1::QueryRequest request;
  *request.mutable_filter() = filter;
  request.set_limit(1000);
  std::vector<av1::AuditRecord> records;
  for (int page = 0; page < kMaxTracePages; ++page) {
    av1::QueryResponse answered;
    grpc::Status status = clients.audit->Query(clients.context().get(), request, &answered);
    if (!status.ok()) return FromGrpc(status);
    records.insert(records.end(), answered.records().begin(), answered.records().end());
    if (answered.next_page_token().empty()) break;
    request.set_page_token(answered.next_page_token());
  }
  return records;
}

// ---- Reading a record's fields ----

const google::protobuf::Value* MetadataField(const pb::AuditEvent& event, absl::string_view key) {
  const auto& fields = event.metadata().fields();
  auto it = fields.find(std::string(key));
  return it == fields.end() ? nullptr : &it->second;
}

std::string MetadataText(const pb::AuditEvent& event, absl::string_view key) {
  const google::protobuf::Value* value = MetadataField(event, key);
  if (value == nullptr) return "";
  if (value->has_string_value()) return value->string_value();
  if (value->has_number_value()) return absl::StrCat(value->number_value());
  if (value->has_bool_value()) return value->bool_value() ? "true" : "false";
  return "";
}

std::string ObjectText(const pb::AuditEvent& event, absl::string_view key,
                       absl::string_view field) {
  const google::protobuf::Value* value = MetadataField(event, key);
  if (value == nullptr || !value->has_struct_value()) return "";
  auto it = value->struct_value().fields().find(std::string(field));
  if (it == value->struct_value().fields().end() || !it->second.has_string_value()) return "";
  return it->second.string_value();
}

std::string ResourceText(const pb::AuditEvent& event) {
  if (!event.has_resource()) return "";
  std::string text =
      absl::StrCat(event.resource().namespace_(), ":", absl::StrJoin(event.resource().path(), "/"));
  if (event.resource().has_owner())
    absl::StrAppend(&text, "@", FormatAddress(event.resource().owner()));
  if (!event.action().empty()) absl::StrAppend(&text, " [", event.action(), "]");
  return text;
}

bool Refused(pb::AuditOutcome outcome) {
  return outcome == pb::AUDIT_OUTCOME_DENIED || outcome == pb::AUDIT_OUTCOME_FAILED ||
         outcome == pb::AUDIT_OUTCOME_INTERRUPTED;
}

// The nearest record of `records` (in sequence order) of `type` for which `match` holds,
// before `sequence` (inclusive) or, `after`, after it.
const pb::AuditEvent* Nearest(const std::vector<av1::AuditRecord>& records, int64_t sequence,
                              pb::AuditEventType type, bool after,
                              const std::function<bool(const pb::AuditEvent&)>& match) {
  const pb::AuditEvent* best = nullptr;
  for (const av1::AuditRecord& record : records) {
    if (!record.has_event() || record.event().type() != type || !match(record.event())) continue;
    if (!after && record.sequence() <= sequence) best = &record.event();
    if (after && record.sequence() > sequence) return &record.event();
  }
  return best;
}

// ---- Building the explanation ----

class Builder {
 public:
  explicit Builder(const ExplainClients& clients) : clients_(clients) {}

  void Fact(std::string label, std::string value) {
    if (!value.empty()) explanation_.facts.emplace_back(std::move(label), std::move(value));
  }
  void Step(std::string step) {
    if (std::find(explanation_.next_steps.begin(), explanation_.next_steps.end(), step) ==
        explanation_.next_steps.end()) {
      explanation_.next_steps.push_back(std::move(step));
    }
  }
  Explanation Take() {
    if (!decided_.empty()) explanation_.next_steps = {decided_};
    return std::move(explanation_);
  }
  Explanation& explanation() { return explanation_; }

  // The code's meaning and its catalogue's next step.
  void Code(const std::string& label, const std::string& code) {
    if (code.empty()) return;
    const CodeExplanation* known = ExplainCode(code);
    Fact(label, known == nullptr ? code : absl::StrCat(code, " — ", known->meaning));
    if (known != nullptr) Step(std::string(known->next_step));
  }

  absl::Status ProtocolEvent(const av1::AuditRecord& record) {
    const pb::AuditEvent& event = record.event();
    explanation_.title =
        absl::StrCat("record ", record.sequence(), ": ", AuditEventTypeName(event.type()), " ",
                     AuditOutcomeName(event.outcome()));
    Fact("source", event.has_source()
                       ? absl::StrCat(AuditSourceName(event.source()),
                                      event.source() == pb::AUDIT_SOURCE_KERNEL
                                          ? " (the mediation and the authorizer's decision)"
                                          : " (the turn layer: budgets, tools offered, turn state)")
                       : "");
    Code("reason", event.reason());
    if (event.fail_closed())
      Fact("fail closed", "yes: infrastructure refused, nothing was allowed");
    Code("cause", event.cause());
    Fact("namespace", event.namespace_id());
    Fact("actor", event.has_actor() ? FormatAddress(event.actor()) : "");
    Fact("authority", event.has_authority() ? FormatAddress(event.authority()) : "");
    Fact("owner", event.has_owner() ? FormatAddress(event.owner()) : "");
    Fact("purpose", event.purpose());
    Fact("tool", event.tool());
    Fact("resource", ResourceText(event));
    Fact("grant", event.grant_id());
    Fact("trace", event.trace_id());
    if (!Refused(event.outcome()) && event.type() != pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED &&
        !(event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED && !event.reason().empty())) {
      Step(event.grant_id().empty()
               ? "Nothing was refused here."
               : absl::StrCat("Nothing was refused: grant ", event.grant_id(), " allowed it."));
      return absl::OkStatus();
    }
    return Context(record);
  }

  // What the rest of the turn's record says: the decision, the authority, the escalation.
  absl::Status Context(const av1::AuditRecord& record) {
    const pb::AuditEvent& event = record.event();
    if (event.trace_id().empty()) return absl::OkStatus();
    av1::AuditFilter filter;
    filter.set_trace_id(event.trace_id());
    filter.set_namespace_id(event.namespace_id());
    absl::StatusOr<std::vector<av1::AuditRecord>> turn = Records(clients_, filter);
    if (!turn.ok()) {
      Fact("turn records", absl::StrCat("not readable: ", turn.status().message()));
      return absl::OkStatus();
    }
    const std::string operation = event.operation_id();
    const pb::AuditEvent* decision =
        event.type() == pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED
            ? &event
            : Nearest(*turn, record.sequence(), pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED, false,
                      [&](const pb::AuditEvent& e) {
                        return !operation.empty() && e.operation_id() == operation;
                      });
    if (decision != nullptr) Decision(*decision);
    const pb::AuditEvent* resolved = Nearest(
        *turn, record.sequence(), pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED, false,
        [&](const pb::AuditEvent& e) {
          return event.authority_hash().empty() || e.authority_hash() == event.authority_hash();
        });
    if (resolved != nullptr) Authority(*resolved);
    NamespaceSettings(event);
    RequiredAuthority(event);
    const pb::AuditEvent* escalated =
        Nearest(*turn, record.sequence(), pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED,
                event.type() != pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED,
                [](const pb::AuditEvent&) { return true; });
    if (escalated != nullptr) EscalationOf(*escalated);
    return absl::OkStatus();
  }

  // The decision record: the grants considered, each rejected grant and why, the host policy
  // rule, the delegation and authority codes, a missing dependency.
  void Decision(const pb::AuditEvent& decision) {
    Fact("decision", absl::StrCat(AuditOutcomeName(decision.outcome()),
                                  decision.reason().empty() ? "" : " " + decision.reason(),
                                  decision.grant_id().empty() ? "" : " by " + decision.grant_id()));
    Fact("grants considered", MetadataText(decision, "grantsResolved"));
    if (const google::protobuf::Value* rejected = MetadataField(decision, "rejectedGrants");
        rejected != nullptr && rejected->has_list_value()) {
      for (const google::protobuf::Value& entry : rejected->list_value().values()) {
        const auto& fields = entry.struct_value().fields();
        const std::string grant =
            fields.count("grantId") ? fields.at("grantId").string_value() : "";
        const std::string reason = fields.count("reason") ? fields.at("reason").string_value() : "";
        const CodeExplanation* why = ExplainRejection(reason);
        std::string text = absl::StrCat(reason, why ? absl::StrCat(": ", why->meaning) : "");
        absl::StrAppend(&text, GrantSummary(decision.namespace_id(), grant));
        Fact(absl::StrCat("rejected grant ", grant), text);
        if (why != nullptr) {
          Step(absl::StrCat("Or widen grant ", grant, ": ", why->next_step, "."));
        }
      }
    }
    const std::string rule = ObjectText(decision, "hostPolicy", "ruleId");
    if (!rule.empty()) {
      Fact("host policy rule",
           absl::StrCat(rule, " (policy version ", ObjectText(decision, "hostPolicy", "version"),
                        ") denied it"));
    }
    const std::string delegation = ObjectText(decision, "delegation", "code");
    if (!delegation.empty()) {
      Code("delegation", delegation);
      Fact("delegated grant", ObjectText(decision, "delegation", "grantId"));
    }
    Code("authority code", ObjectText(decision, "authority", "code"));
    Code("missing dependency", MetadataText(decision, "missingDependency"));
  }

  // The turn's authority.resolved: how many grants, the host ceiling, the host policy state.
  void Authority(const pb::AuditEvent& resolved) {
    const google::protobuf::Value* ids = MetadataField(resolved, "grantIds");
    std::vector<std::string> grants;
    if (ids != nullptr && ids->has_list_value()) {
      for (const auto& id : ids->list_value().values()) grants.push_back(id.string_value());
    }
    Fact("turn authority", grants.empty() ? MetadataText(resolved, "grantCount")
                                          : absl::StrCat(absl::StrJoin(grants, ", ")));
    Fact("host ceiling", MetadataText(resolved, "hostCeiling"));
    Fact("host policy", MetadataText(resolved, "hostPolicy"));
    Code("authority", MetadataText(resolved, "authority"));
  }

  // The namespace's host policy as the grant store holds it now (when the caller may read it).
  void NamespaceSettings(const pb::AuditEvent& event) {
    if (event.namespace_id().empty() || clients_.grants == nullptr) return;
    gs::GetHostPolicyRequest request;
    request.set_namespace_id(event.namespace_id());
    gs::GetHostPolicyResponse policy;
    grpc::Status status =
        clients_.grants->GetHostPolicy(clients_.context().get(), request, &policy);
    if (!status.ok()) {
      Fact("namespace settings", absl::StrCat("host policy not readable with this credential (",
                                              FromGrpc(status).ToString(), ")"));
    } else if (policy.has_policy()) {
      Fact("namespace settings", absl::StrCat("host policy version ", policy.policy().version(),
                                              ", ", policy.policy().rules_size(),
                                              " deny rules (sharedosctl policy get "
                                              "--namespace=",
                                              event.namespace_id(), ")"));
    } else {
      Fact("namespace settings", "no host policy: only grants decide");
    }
    if (event.cause() == "namespace_disabled") {
      Fact("tool namespace", absl::StrCat(event.tool().substr(0, event.tool().find('.')),
                                          " is not enabled in this turn"));
    }
  }

  // The requirement a grant would have to cover.
  void RequiredAuthority(const pb::AuditEvent& event) {
    if (event.reason() != "no_matching_grant" && event.reason() != "grant_exhausted") return;
    if (!event.has_resource()) return;
    Fact("required authority",
         absl::StrCat(event.has_actor() ? FormatAddress(event.actor()) : "the agent", " needs ",
                      ResourceText(event), " of ",
                      event.has_owner() ? FormatAddress(event.owner()) : "the owner",
                      event.purpose().empty() ? "" : ", for purpose " + event.purpose(),
                      ", from the authority ",
                      event.has_authority() ? FormatAddress(event.authority()) : "-"));
  }

  // The escalation a refusal led to, and where it stands.
  void EscalationOf(const pb::AuditEvent& requested) {
    const std::string id = MetadataText(requested, "escalationId");
    if (requested.has_requested_authority()) {
      std::vector<std::string> capabilities;
      for (const pb::Capability& capability : requested.requested_authority().capabilities()) {
        capabilities.push_back(FormatCapability(capability));
      }
      Fact("requested authority", absl::StrCat(requested.requested_authority().id(), ": ",
                                               absl::StrJoin(capabilities, " ")));
    }
    if (id.empty()) return;
    Fact("escalation", id);
    gs::GetEscalationRequest request;
    request.set_escalation_id(id);
    gs::GetEscalationResponse answered;
    grpc::Status status =
        clients_.grants->GetEscalation(clients_.context().get(), request, &answered);
    if (!status.ok()) {
      Fact("escalation status",
           absl::StrCat("not readable with this credential (", FromGrpc(status).ToString(), ")"));
      return;
    }
    EscalationStanding(answered.escalation());
  }

  void EscalationStanding(const gs::EscalationRecord& record) {
    // Who decides: the record's reviewer once set, else the one the escalation is addressed to.
    const std::string reviewer = record.has_reviewer() ? FormatAddress(record.reviewer())
                                 : record.escalation().has_reviewer()
                                     ? FormatAddress(record.escalation().reviewer())
                                     : "";
    Fact("escalation status", EscalationStatusName(record.status()));
    Fact("reviewer", reviewer);
    Fact("decided by", FormatDecider(record));
    if (record.has_decided_with()) {
      // Who the identity provider vouched for (ADR 0020), or break-glass.
      Fact("idpIssuer", record.decided_with().idp_issuer());
      Fact("idpSubject", record.decided_with().idp_subject());
      if (record.decided_with().break_glass()) Fact("breakGlass", "true");
    }
    // Where the escalation stands decides what comes next: a decided one is the only step (Take),
    // a pending one comes first.
    switch (record.status()) {
      case gs::ESCALATION_RECORD_STATUS_PENDING:
        explanation_.next_steps.insert(
            explanation_.next_steps.begin(),
            absl::StrCat("The reviewer ", reviewer, " decides escalation ", record.escalation_id(),
                         ": sharedosctl --token_file=<", reviewer,
                         "'s reviewer credential> escalations approve --id=",
                         record.escalation_id(), " (or deny; or in the console's queue)."));
        break;
      case gs::ESCALATION_RECORD_STATUS_APPROVED:
        Fact("issued grant", record.grant_id());
        decided_ = absl::StrCat("Approved: grant ", record.grant_id(),
                                " was issued; the agent's next turn may do it.");
        break;
      case gs::ESCALATION_RECORD_STATUS_DENIED:
        decided_ =
            "Denied by the reviewer: the agent may not do it (the note, if any: sharedosctl "
            "escalations show).";
        break;
      default:
        break;
    }
  }

  // An escalation by id: its standing, then the denial that led to it.
  absl::Status Escalation(absl::string_view id) {
    gs::GetEscalationRequest request;
    request.set_escalation_id(std::string(id));
    gs::GetEscalationResponse answered;
    grpc::Status status =
        clients_.grants->GetEscalation(clients_.context().get(), request, &answered);
    if (!status.ok()) return FromGrpc(status);
    const gs::EscalationRecord& record = answered.escalation();
    explanation_.title = absl::StrCat("escalation ", record.escalation_id(), ": ",
                                      EscalationStatusName(record.status()));
    Fact("namespace", record.namespace_id());
    Fact("execution", record.execution_id());
    Fact("reason given", record.escalation().reason());
    std::vector<std::string> capabilities;
    for (const pb::Capability& capability :
         record.escalation().requested_authority().capabilities()) {
      capabilities.push_back(FormatCapability(capability));
    }
    Fact("required authority", absl::StrJoin(capabilities, " "));
    Fact("requested by", record.escalation().requested_authority().has_requester()
                             ? FormatAddress(record.escalation().requested_authority().requester())
                             : "");
    EscalationStanding(record);
    // The denial that led to it: the turn's last refusal before it asked.
    av1::AuditFilter filter;
    filter.set_execution_id(record.execution_id());
    absl::StatusOr<std::vector<av1::AuditRecord>> own = Records(clients_, filter);
    if (!own.ok() || own->empty()) return absl::OkStatus();
    const av1::AuditRecord* asked = nullptr;
    for (const av1::AuditRecord& r : *own) {
      if (r.has_event() && r.event().type() == pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED)
        asked = &r;
    }
    if (asked == nullptr) return absl::OkStatus();
    av1::AuditFilter trace;
    trace.set_trace_id(asked->event().trace_id());
    trace.set_namespace_id(asked->event().namespace_id());
    absl::StatusOr<std::vector<av1::AuditRecord>> turn = Records(clients_, trace);
    if (!turn.ok()) return absl::OkStatus();
    const av1::AuditRecord* denial = nullptr;
    for (const av1::AuditRecord& r : *turn) {
      if (r.sequence() >= asked->sequence()) break;
      if (r.has_event() && r.event().type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED &&
          Refused(r.event().outcome())) {
        denial = &r;
      }
    }
    if (denial == nullptr) return absl::OkStatus();
    Fact("denial", absl::StrCat("record ", denial->sequence(), " (sharedosctl explain ",
                                denial->sequence(), ")"));
    Fact("source", AuditSourceName(denial->event().source()));
    Code("reason", denial->event().reason());
    Code("cause", denial->event().cause());
    Fact("tool", denial->event().tool());
    Fact("resource", ResourceText(denial->event()));
    const pb::AuditEvent* decision =
        Nearest(*turn, denial->sequence(), pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED, false,
                [&](const pb::AuditEvent& e) {
                  return e.operation_id() == denial->event().operation_id();
                });
    if (decision != nullptr) Decision(*decision);
    NamespaceSettings(denial->event());
    return absl::OkStatus();
  }

  void ControlPlane(const av1::AuditRecord& record) {
    const av1::ControlPlaneEvent& event = record.control_plane();
    explanation_.title =
        absl::StrCat("record ", record.sequence(), ": ", ControlPlaneEventTypeName(event.type()),
                     " ", AuditOutcomeName(event.outcome()));
    Fact("source", "control plane (the grant store's mutation)");
    Fact("namespace", event.namespace_id());
    Fact("actor", event.has_actor() ? FormatAddress(event.actor()) : "");
    Fact("authority", event.has_authority() ? FormatAddress(event.authority()) : "");
    Fact("owner", event.has_owner() ? FormatAddress(event.owner()) : "");
    Fact("grant", event.grant_id());
    // The record's metadata in name order (escalation.resolved: decidedBy, credentialId, and the
    // identity provider's idpIssuer/idpSubject or breakGlass, ADR 0020); flags and counts too.
    std::map<std::string, std::string> metadata;
    for (const auto& [key, value] : event.metadata().fields()) {
      if (value.has_string_value()) {
        metadata[key] = value.string_value();
      } else if (value.has_bool_value()) {
        metadata[key] = value.bool_value() ? "true" : "false";
      } else if (value.has_number_value()) {
        metadata[key] = absl::StrCat(value.number_value());
      }
    }
    for (auto& [key, value] : metadata) Fact(key, std::move(value));
    Step("Nothing was refused: a control-plane change, recorded.");
  }

 private:
  // " — grant: <capabilities>" when the caller may read it.
  std::string GrantSummary(const std::string& namespace_id, const std::string& grant_id) {
    if (grant_id.empty() || clients_.grants == nullptr) return "";
    gs::GetGrantRequest request;
    request.set_namespace_id(namespace_id);
    request.set_grant_id(grant_id);
    gs::GetGrantResponse answered;
    grpc::Status status = clients_.grants->GetGrant(clients_.context().get(), request, &answered);
    if (!status.ok())
      return absl::StrCat(" (grant not readable: ", FromGrpc(status).ToString(), ")");
    std::vector<std::string> capabilities;
    for (const pb::Capability& capability : answered.grant().capabilities()) {
      capabilities.push_back(FormatCapability(capability));
    }
    return absl::StrCat("; it holds ", absl::StrJoin(capabilities, " "), " for ",
                        FormatAddress(answered.grant().subject()), " from ",
                        FormatAddress(answered.grant().issuer()));
  }

  const ExplainClients& clients_;
  Explanation explanation_;
  // The next step of an escalation already decided ("" while none is).
  std::string decided_;
};

bool AllDigits(absl::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return absl::ascii_isdigit(c); });
}

}  // namespace

absl::StatusOr<Explanation> Explain(const ExplainClients& clients, absl::string_view id) {
  id = absl::StripAsciiWhitespace(id);
  if (id.empty() || id.size() > kMaxIdBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "id: a sequence, an event id or an escalation id (1 to ", kMaxIdBytes, " bytes)"));
  }
  Builder builder(clients);
  if (absl::StartsWith(id, "esc-")) {
    absl::Status built = builder.Escalation(id);
    if (!built.ok()) return built;
    return builder.Take();
  }
  absl::StatusOr<av1::AuditRecord> record = absl::NotFoundError("");
  if (AllDigits(id)) {
    int64_t sequence = 0;
    if (!absl::SimpleAtoi(id, &sequence) || sequence < 1) {
      return absl::InvalidArgumentError("id: a sequence is 1 or more");
    }
    record = RecordAt(clients, sequence);
  } else {
    record = RecordWithId(clients, id);
  }
  if (!record.ok()) return record.status();
  if (record->has_control_plane()) return ExplainControlPlaneRecord(*record);
  absl::Status built = builder.ProtocolEvent(*record);
  if (!built.ok()) return built;
  return builder.Take();
}

Explanation ExplainControlPlaneRecord(const av1::AuditRecord& record) {
  const ExplainClients none;
  Builder builder(none);
  builder.ControlPlane(record);
  return builder.Take();
}

std::string RenderExplanation(const Explanation& explanation) {
  std::string text = absl::StrCat(TerminalSafe(explanation.title), "\n");
  for (const auto& [label, value] : explanation.facts) {
    absl::StrAppend(&text, "  ", TerminalSafe(label), ": ", TerminalSafe(value), "\n");
  }
  if (!explanation.next_steps.empty()) {
    absl::StrAppend(&text, "next:\n");
    for (const std::string& step : explanation.next_steps) {
      absl::StrAppend(&text, "  - ", TerminalSafe(step), "\n");
    }
  }
  return text;
}

std::string ExplanationJson(const Explanation& explanation) {
  nlohmann::ordered_json json;
  json["title"] = explanation.title;
  json["facts"] = nlohmann::ordered_json::array();
  for (const auto& [label, value] : explanation.facts) {
    json["facts"].push_back({{"label", label}, {"value", value}});
  }
  json["nextSteps"] = explanation.next_steps;
  return common::text::JsonTerminalSafe(
             json.dump(1, ' ', false, nlohmann::json::error_handler_t::replace)) +
         "\n";
}

}  // namespace sharedos::grantstore::client
