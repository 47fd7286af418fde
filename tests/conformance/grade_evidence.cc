#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
using nlohmann::json;

void RecordEvidence(Grading& grading) {
  const RowRun& run = grading.run;
  Cell& cell = grading.cell;
  auto& records = grading.records;
  auto& invoked_of = grading.invoked_of;
  // Evidence: what each step got, with the audited boundary and cause of each refusal.
  for (const Attempt& attempt : run.attempts) {
    const std::string what = Str(attempt.declared, "do");
    std::string step = absl::StrCat("`", attempt.id, "` (", attempt.role);
    if (attempt.declared.contains("tool")) {
      absl::StrAppend(&step, ", ", Str(attempt.declared, "tool"));
    }
    if (what != "call") absl::StrAppend(&step, ", ", what);
    absl::StrAppend(&step, ")");
    std::string observed;
    if (!attempt.unreachable.empty()) {
      observed = absl::StrCat("unreachable: ", attempt.unreachable);
    } else if (!attempt.issued) {
      observed = "not issued";
    } else if (absl::StartsWith(attempt.status, "rpc:")) {
      observed = absl::StrCat("error ", attempt.status.substr(4));
    } else {
      observed = attempt.status;
      if (!attempt.code.empty()) absl::StrAppend(&observed, " `", attempt.code, "`");
      auto audited = invoked_of.find(attempt.id);
      if (attempt.status != "succeeded" && audited != invoked_of.end() &&
          audited->second.size() == 1) {
        const pb::AuditEvent& event = *audited->second[0];
        absl::StrAppend(&observed, " · ", SourceName(event).empty() ? "?" : SourceName(event));
        if (!event.cause().empty()) absl::StrAppend(&observed, ", cause `", event.cause(), "`");
        if (event.has_fail_closed() && event.fail_closed()) {
          absl::StrAppend(&observed, ", fail closed");
        }
      }
      if (attempt.details.is_object() && attempt.details.contains("requiredAuthority")) {
        absl::StrAppend(&observed, "; requires `", Str(attempt.details["requiredAuthority"], "id"),
                        "`");
      }
      if (what == "approve" && attempt.details.is_object() && attempt.details.contains("issuer")) {
        absl::StrAppend(&observed, ": grant issued by ", Str(attempt.details, "issuer"),
                        ", approved by ", Str(attempt.details, "reviewer"));
      }
    }
    cell.observed.push_back({step, observed});
  }
  for (const auto& [n, turn] : run.turns) {
    if (!turn.opened) continue;
    std::string observed = TurnStatusName(turn.result.status());
    if (turn.result.has_error()) absl::StrAppend(&observed, " `", turn.result.error().code(), "`");
    if (turn.result.has_escalation()) {
      absl::StrAppend(&observed, " `escalation_requested`");
      const std::string& asked = turn.result.escalation().requested_authority().id();
      if (!asked.empty()) absl::StrAppend(&observed, ", requested authority `", asked, "`");
    }
    if (turn.ended_at_open) absl::StrAppend(&observed, " at admission");
    for (const pb::AuditEvent& event : records[n]) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED && event.has_fail_closed() &&
          event.fail_closed()) {
        absl::StrAppend(&observed, ", audited fail closed");
      }
    }
    cell.observed.push_back({absl::StrCat("turn ", n, " ended"), observed});
  }
}

}  // namespace sharedos::conformance
