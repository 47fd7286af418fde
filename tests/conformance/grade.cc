#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/conformance/grading.h"

namespace sharedos::conformance {

namespace pb = ::sharedos::protocol::v1;
using nlohmann::json;

namespace {

// The record of every opened turn, and each attempt's own records.
void ReadRecords(Grading& grading) {
  const RowRun& run = grading.run;
  Deployment& deployment = grading.deployment;
  const std::string& namespace_id = grading.namespace_id;
  const bool mcp = grading.mcp;
  Cell& cell = grading.cell;
  auto& records = grading.records;
  auto& invoked_of = grading.invoked_of;
  auto& host_operation_of = grading.host_operation_of;
  // The record of every turn, and the tool.invoked records of each attempt.
  for (const auto& [n, turn] : run.turns) {
    if (!turn.opened) continue;
    records[n] = ReadRecord(deployment, namespace_id, turn.trace_id, true,
                            turn.result.status() == pb::EXECUTION_STATUS_ESCALATED);
  }
  for (const auto& [n, events] : records) {
    std::vector<const pb::AuditEvent*> in_order;
    for (const pb::AuditEvent& event : events) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_RESOURCE_INVOKED) {
        host_operation_of["resource:" + event.operation_id()].push_back(&event);
      }
      if (event.type() == pb::AUDIT_EVENT_TYPE_MESSAGE_SENT && event.operation_id().empty()) {
        host_operation_of["send:" + event.message_id()].push_back(&event);
      }
      if (event.type() != pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) continue;
      if (!mcp) {
        invoked_of[event.operation_id()].push_back(&event);
      } else {
        in_order.push_back(&event);
      }
    }
    size_t next = 0;
    for (const Attempt& attempt : run.attempts) {
      const std::string what = Str(attempt.declared, "do");
      if (!mcp || attempt.turn != n || !attempt.issued || (what != "call" && what != "resume") ||
          attempt.status.rfind("rpc:", 0) == 0 || attempt.declared.value("notAnOperation", false)) {
        continue;
      }
      if (next < in_order.size()) invoked_of[attempt.id].push_back(in_order[next++]);
    }
    while (mcp && next < in_order.size()) {
      invoked_of["(unattributed)"].push_back(in_order[next++]);
    }
  }
  if (invoked_of.count("(unattributed)")) {
    cell.record_gaps.push_back(absl::StrCat(invoked_of["(unattributed)"].size(),
                                            " tool.invoked records no call accounts for"));
  }
}

// One attempt: reached or not, its record (by its family), its answer.
void GradeAttempt(const Attempt& attempt, Grading& grading) {
  Cell& cell = grading.cell;
  ++cell.declared;
  if (!attempt.unreachable.empty()) return;
  if (grading.mcp && attempt.declared.value("uncatalogued", false) && !attempt.issued) return;
  if (!attempt.issued) {
    grading.not_exercised.push_back(attempt.id + ": never reached SharedOS");
    return;
  }
  ++cell.attempted;
  const std::string what = Str(attempt.declared, "do");
  if (what == "call" || what == "resume") {
    GradeCallRecord(attempt, grading);
  } else if (what == "resource" || what == "send") {
    GradeHostOperationRecord(attempt, grading);
  }
  GradeAnswer(attempt, grading);
}

// The grade (cases.md "Grades"): a harness error or an unmet control leaves the row not
// exercised; an unmet attack, a wrong turn ending or an unusable record fails it.
Cell Verdict(Grading& grading) {
  const RowRun& run = grading.run;
  Cell& cell = grading.cell;
  const auto& unmet_controls = grading.unmet_controls;
  const auto& unmet_attacks = grading.unmet_attacks;
  const auto& not_exercised = grading.not_exercised;
  const auto& turn_failures = grading.turn_failures;
  const bool driver_pass = grading.driver_pass;
  cell.record_usable = cell.record_gaps.empty();
  auto join = [](const std::vector<std::string>& items) { return absl::StrJoin(items, "; "); };
  if (!run.harness_errors.empty()) {
    cell.status = "not exercised";
    cell.detail = join(run.harness_errors);
  } else if (!unmet_controls.empty()) {
    cell.status = "not exercised";
    cell.detail = "control: " + join(unmet_controls);
  } else if (!unmet_attacks.empty()) {
    cell.status = "fail";
    cell.detail = join(unmet_attacks);
  } else if (!not_exercised.empty()) {
    cell.status = "not exercised";
    cell.detail = join(not_exercised);
  } else if (!turn_failures.empty()) {
    cell.status = "fail";
    cell.detail = join(turn_failures);
  } else if (!cell.record_usable) {
    cell.status = "fail";
    cell.detail = "record: " + join(cell.record_gaps);
  } else {
    cell.status = driver_pass ? "pass (driver)" : "pass";
  }
  // Attack failures also report the record's gaps (evidence).
  if (cell.status == "fail" && !cell.record_usable && cell.detail.rfind("record:", 0) != 0) {
    cell.detail += "; record: " + join(cell.record_gaps);
  }
  return std::move(cell);
}

}  // namespace

Cell Grade(const RowRun& run, Deployment& deployment, const std::string& column,
           const std::string& namespace_id, bool mcp) {
  Grading grading(run, deployment, namespace_id, mcp);
  grading.cell.column = column;
  grading.completeness = run.row.value("recordCompleteness", false);
  grading.grant_prefix = absl::StrCat("r", Pad(run.row["row"].get<int>()), "-");
  ReadRecords(grading);
  for (const Attempt& attempt : run.attempts) GradeAttempt(attempt, grading);
  for (const auto& [n, turn] : run.turns) {
    if (!turn.opened) continue;
    GradeTurnEnding(n, turn, grading);
    GradeEscalation(n, turn, grading);
    GradeCatalogue(n, turn, grading);
  }
  GradeRejectedOpens(grading);
  RecordEvidence(grading);
  return Verdict(grading);
}

}  // namespace sharedos::conformance
