// Grading one row on one column (cases.md "Grades"), one family of rows per file, through one
// dispatch (`Grade`, grade.cc):
//
//   grade.cc                  the dispatch: the row's record read once and attributed to its
//                             attempts, every attempt and every turn handed to its family, the
//                             verdict drawn from what they found
//   grade_answers.cc          what every attempt was answered against its declared expectation
//                             (statuses, reason codes, rpc errors, the capreq- authority), and a
//                             probe's findings
//   grade_calls.cc            tool calls and resumes (rows 1-11, 14-25, 28-30, 38, 43 and every
//                             call step): exactly one tool.invoked with the answer's outcome and
//                             code, its boundary, cause, failClosed, grant and authority hash,
//                             the decision before it (row 38) and record completeness (row 30)
//   grade_host_operations.cc  messaging and resources (rows 40, 42): a host step's
//                             message.sent / resource.invoked, held to the same facts
//   grade_turn_endings.cc     every turn's ending: one turn.ended agreeing with the answer, the
//                             declared status and reason code, failClosed (rows 12-13)
//   grade_escalation.cc       escalation (rows 26-27, 31-33, 35, 37, 44, 46-47): audited or not,
//                             the id FinishTurn answered, the MCP latch's facts, the requested
//                             authority equal to the denial's in the answer, the record and the
//                             grant store
//   grade_admission.cc        admission and what a turn is offered (rows 2-3, 20, 22-27, 29,
//                             32, 37-39, 41, 47): the catalogue's absent and present tools; a
//                             rejected open that left no record (rows 34, 45)
//   grade_evidence.cc         the cell's evidence: what each step and turn observed
//
// A family is the rows whose declarations ask for its facts; a row may ask several (row 47: calls,
// catalogue, escalation, turn ending). Rows with no facts of their own (tenancy 44-45, limits and
// bounds) are graded by the families their steps belong to. Grading reads the answers the column
// received and the system's own record only. Internal to
// //tests/conformance:suite; not thread-safe (one Grading per cell).

#ifndef SHAREDOS_TESTS_CONFORMANCE_GRADING_H_
#define SHAREDOS_TESTS_CONFORMANCE_GRADING_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sharedos/protocol/v1/audit.pb.h"
#include "tests/conformance/deployment.h"
#include "tests/conformance/row_run.h"
#include "tests/conformance/suite.h"

namespace sharedos::conformance {

// One cell being graded: the row's run, where its record is read, the cell and the lists its
// verdict is drawn from, and the row's record attributed to its attempts.
struct Grading {
  Grading(const RowRun& run, Deployment& deployment, const std::string& namespace_id, bool mcp)
      : run(run), deployment(deployment), namespace_id(namespace_id), mcp(mcp) {}

  const RowRun& run;
  Deployment& deployment;
  const std::string& namespace_id;
  // The MCP columns: tool.invoked records are attributed to calls by order.
  const bool mcp;
  // Record completeness (row 30): a kernel refusal's decision is in the record too.
  bool completeness = false;
  // The row's grant ids' prefix ("r07-").
  std::string grant_prefix;

  Cell cell;
  // What the verdict is drawn from (Verdict, grade.cc), besides cell.record_gaps.
  std::vector<std::string> unmet_controls, unmet_attacks, not_exercised, turn_failures;
  bool driver_pass = false;

  // The record of every opened turn, by turn number.
  std::map<int, std::vector<protocol::v1::AuditEvent>> records;
  // The tool.invoked records of each call, by attempt id (by operation id on the gRPC seat; by
  // order on the MCP seat, whose call ids the front door mints); "(unattributed)": no call's.
  std::map<std::string, std::vector<const protocol::v1::AuditEvent*>> invoked_of;
  // The host steps' own records: "resource:<operation id>", "send:<message id>" (a
  // SendMessage's message.sent has no call id).
  std::map<std::string, std::vector<const protocol::v1::AuditEvent*>> host_operation_of;
};

// The dispatch (grade.cc): one cell of `run` on `column`.
Cell Grade(const RowRun& run, Deployment& deployment, const std::string& column,
           const std::string& namespace_id, bool mcp);

// grade_answers.cc: what `attempt` (issued) was answered, against its expectation.
void GradeAnswer(const Attempt& attempt, Grading& grading);

// grade_calls.cc: the tool.invoked record of a call or resume.
void GradeCallRecord(const Attempt& attempt, Grading& grading);
// The audit facts one issued operation must have left (a tool call's tool.invoked, a host
// step's resource.invoked / message.sent); shared by the calls and host-operation families.
void CheckCallRecord(const Attempt& attempt,
                     const std::vector<const protocol::v1::AuditEvent*>& invoked,
                     const std::vector<protocol::v1::AuditEvent>& events, bool completeness,
                     const std::string& grant_prefix, std::vector<std::string>* gaps,
                     std::set<std::string>* refused_by);

// grade_host_operations.cc: the record of a host step (`resource`, `send`).
void GradeHostOperationRecord(const Attempt& attempt, Grading& grading);

// grade_turn_endings.cc: turn `n`'s ending, answered and recorded.
void GradeTurnEnding(int n, const Turn& turn, Grading& grading);

// grade_escalation.cc: turn `n`'s declared escalation facts.
void GradeEscalation(int n, const Turn& turn, Grading& grading);

// grade_admission.cc: turn `n`'s catalogue; the rejected opens' (absent) records.
void GradeCatalogue(int n, const Turn& turn, Grading& grading);
void GradeRejectedOpens(Grading& grading);

// grade_evidence.cc: cell.observed, step by step and turn by turn.
void RecordEvidence(Grading& grading);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_GRADING_H_
