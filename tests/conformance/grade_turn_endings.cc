#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
using nlohmann::json;

// Turn endings: the answer, and exactly one turn.ended in the record agreeing with it.
void GradeTurnEnding(int n, const Turn& turn, Grading& grading) {
  Cell& cell = grading.cell;
  std::vector<std::string>& turn_failures = grading.turn_failures;
  const std::vector<pb::AuditEvent>& events = grading.records[n];
  std::vector<const pb::AuditEvent*> ended;
  for (const pb::AuditEvent& event : events) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) ended.push_back(&event);
  }
  if (ended.size() != 1) {
    cell.record_gaps.push_back(absl::StrCat("turn ", n, ": ", ended.size(), " turn.ended"));
  }
  const std::string status = TurnStatusName(turn.result.status());
  const std::string code = turn.result.has_error() ? turn.result.error().code()
                           : status == "escalated" ? "escalation_requested"
                                                   : "";
  if (!code.empty() && status != "succeeded") cell.reason_codes.insert(code);
  // The boundary that refused a turn (semantics §8.1): a denied turn was refused by the
  // kernel (admission); a failed one by the envelope; an escalated turn names none.
  if (status == "denied") cell.refused_by.insert("kernel");
  if (status == "failed" && code != "runtime_failed") cell.refused_by.insert("envelope");
  if (ended.size() == 1) {
    if (OutcomeName(ended[0]->outcome()) != status) {
      cell.record_gaps.push_back(absl::StrCat(
          "turn ", n, ": turn.ended ", OutcomeName(ended[0]->outcome()), ", answered ", status));
    }
    if (!code.empty() && ended[0]->reason() != code) {
      cell.record_gaps.push_back(absl::StrCat("turn ", n, ": turn.ended reason \"",
                                              ended[0]->reason(), "\", answered ", code));
    }
  }
  const json& expect = turn.expect_turn;
  if (!expect.is_object())
    turn_failures.push_back(absl::StrCat("turn ", n, ": no declared ending"));
  if (expect.is_object()) {
    if (Str(expect, "status") != status) {
      turn_failures.push_back(absl::StrCat("turn ", n, " ended ", status,
                                           code.empty() ? "" : " " + code, ", expected ",
                                           Str(expect, "status")));
    } else if (expect.contains("reasonCode") && Str(expect, "reasonCode") != code) {
      turn_failures.push_back(
          absl::StrCat("turn ", n, " ended ", code, ", expected ", Str(expect, "reasonCode")));
    }
    if (expect.value("failClosed", false) &&
        !(ended.size() == 1 && ended[0]->has_fail_closed() && ended[0]->fail_closed())) {
      turn_failures.push_back(absl::StrCat("turn ", n, ": not recorded fail_closed"));
    }
  }
}

}  // namespace sharedos::conformance
