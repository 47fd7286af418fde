#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
using nlohmann::json;

void GradeCallRecord(const Attempt& attempt, Grading& grading) {
  auto record = grading.records.find(attempt.turn);
  std::vector<std::string> gaps;
  if (record != grading.records.end()) {
    CheckCallRecord(attempt, grading.invoked_of[attempt.id], record->second, grading.completeness,
                    grading.grant_prefix, &gaps, &grading.cell.refused_by);
  } else {
    gaps.push_back(attempt.id + ": no record of its turn");
  }
  for (std::string& gap : gaps) grading.cell.record_gaps.push_back(std::move(gap));
}

// The audit facts one issued call must have left: exactly one tool.invoked for its operation,
// with the outcome and code the caller was given, the boundary (source), a cause on the
// tool_unavailable family, fail_closed where declared, and the authority hash where declared.
// `invoked`: the tool.invoked records attributed to the attempt (by operation id on the gRPC
// seat; by order on the MCP seat, whose call ids the front door mints).
//
// A host step's operation (`resource`, `send`) is held to the same facts on its own record —
// resource.invoked by operation id, message.sent by message id (semantics §5.2) — which
// carries no authorityHash.
void CheckCallRecord(const Attempt& attempt, const std::vector<const pb::AuditEvent*>& invoked,
                     const std::vector<pb::AuditEvent>& events, bool completeness,
                     const std::string& grant_prefix, std::vector<std::string>* gaps,
                     std::set<std::string>* refused_by) {
  const json& step = attempt.declared;
  const std::string kind = Str(step, "do");
  const bool tool_record = kind != "resource" && kind != "send";
  const std::string record_name = kind == "resource" ? "resource.invoked"
                                  : kind == "send"   ? "message.sent"
                                                     : "tool.invoked";
  const pb::AuditEvent* checked = nullptr;
  for (const pb::AuditEvent& event : events) {
    if (!invoked.empty() && event.operation_id() == invoked[0]->operation_id() &&
        event.type() == pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED) {
      checked = &event;
    }
  }
  if (step.value("notAnOperation", false)) {
    if (!invoked.empty()) gaps->push_back(attempt.id + ": recorded as an operation");
    return;
  }
  if (attempt.status.rfind("rpc:", 0) == 0) {
    // A call on an ended turn may be recorded as the refusal it is; never as an operation
    // that ran.
    for (const pb::AuditEvent* event : invoked) {
      if (Str(step, "do") != "resume" || event->outcome() == pb::AUDIT_OUTCOME_SUCCEEDED) {
        gaps->push_back(absl::StrCat(attempt.id, ": a rejected call recorded as an operation (",
                                     OutcomeName(event->outcome()), ")"));
      }
    }
    return;
  }
  if (invoked.size() != 1) {
    gaps->push_back(absl::StrCat(attempt.id, ": ", invoked.size(), " ", record_name, " records"));
    return;
  }
  const pb::AuditEvent& event = *invoked[0];
  if (OutcomeName(event.outcome()) != attempt.status) {
    gaps->push_back(absl::StrCat(attempt.id, ": audited ", OutcomeName(event.outcome()),
                                 ", answered ", attempt.status));
  }
  if (attempt.status != "succeeded") {
    if (event.reason() != attempt.code) {
      gaps->push_back(absl::StrCat(attempt.id, ": audited reason \"", event.reason(),
                                   "\", answered ", attempt.code));
    }
    const std::string source = SourceName(event);
    if (!source.empty()) refused_by->insert(source);
    const std::string declared_source = Str(step, "refusedBy");
    if (!declared_source.empty() && source != declared_source) {
      gaps->push_back(absl::StrCat(attempt.id, ": refused by ", source.empty() ? "?" : source,
                                   ", declared ", declared_source));
    }
    if (attempt.code == "tool_unavailable" && event.cause().empty()) {
      gaps->push_back(attempt.id + ": tool_unavailable without a cause");
    }
    // The specific fact behind a coarse code (ADR 0023): one of the declared causes.
    if (step.contains("causes")) {
      bool cause_ok = false;
      for (const json& cause : step["causes"]) cause_ok |= cause == event.cause();
      if (!cause_ok) {
        gaps->push_back(absl::StrCat(attempt.id, ": audited cause \"", event.cause(),
                                     "\", declared ", step["causes"].dump()));
      }
    }
  }
  // Semantics §5.2: a tool withheld at discovery is refused after its decision — an
  // authorization.checked (denied, the discovery code = the refusal's cause) immediately before
  // its tool.invoked in the call's own record (the records of its operation id: the log
  // interleaves the next call's pre-effect decision with this call's post-effect record, which
  // the outbox delivers).
  if (step.value("decisionBefore", false)) {
    const pb::AuditEvent* before = nullptr;
    for (const pb::AuditEvent& other : events) {
      if (&other == &event) break;
      if (other.operation_id() == event.operation_id()) before = &other;
    }
    if (before == nullptr || before->type() != pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED ||
        before->outcome() != pb::AUDIT_OUTCOME_DENIED || before->reason() != event.cause() ||
        before->consumed()) {
      gaps->push_back(absl::StrCat(
          attempt.id, ": no authorization.checked (denied, ", event.cause(),
          ", not consumed) immediately before its tool.invoked (before it: ",
          before == nullptr ? "nothing"
                            : absl::StrCat(pb::AuditEventType_Name(before->type()), " ",
                                           OutcomeName(before->outcome()), " ", before->reason()),
          ")"));
    }
  }
  if (!event.has_source()) gaps->push_back(attempt.id + ": no source");
  if (step.value("failClosed", false) && !(event.has_fail_closed() && event.fail_closed())) {
    gaps->push_back(attempt.id + ": not audited fail_closed");
  }
  const std::string grant = Str(step, "auditGrant");
  if (!grant.empty() && (checked == nullptr || checked->grant_id() != grant_prefix + grant)) {
    gaps->push_back(absl::StrCat(attempt.id, ": the decision does not name grant ", grant));
  }
  if (tool_record && event.authority_hash().empty()) {
    gaps->push_back(attempt.id + ": no authorityHash");
  }
  // Record completeness (row 30): the decision behind a kernel refusal is in the record too,
  // under the same authority.
  if (completeness && tool_record && SourceName(event) == "kernel" &&
      attempt.status != "succeeded" &&
      (checked == nullptr || checked->authority_hash() != event.authority_hash())) {
    gaps->push_back(attempt.id + ": no authorization.checked under the same authorityHash");
  }
}
}  // namespace sharedos::conformance
