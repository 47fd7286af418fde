// What a conformance row left behind, shared by the runner (suite.cc) and the graders
// (grade*.cc): the attempts and turns of one row on one column, and the reads of the system's
// own record the graders take their evidence from (the audit log through AuditLog.Query, the
// grant store's escalations). Internal to //tests/conformance:suite.

#ifndef SHAREDOS_TESTS_CONFORMANCE_ROW_RUN_H_
#define SHAREDOS_TESTS_CONFORMANCE_ROW_RUN_H_

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "google/protobuf/generated_enum_reflection.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"
#include "tests/conformance/deployment.h"

namespace sharedos::conformance {

// ------------------------------------------------------------------ observations

// One declared step that asks something of SharedOS (a call, resume, resource, send, approve or
// probe), and what it was answered.
struct Attempt {
  nlohmann::json declared;
  std::string id, role;
  int turn = 1;
  bool issued = false;
  // Structurally unreachable: declared so, or its turn ended before the runtime started.
  std::string unreachable;
  // succeeded | denied | failed | rpc:<CODE> | (empty: not issued)
  std::string status;
  std::string code;
  std::string message;
  nlohmann::json details;  // ToolResult error details / probe findings
  nlohmann::json output;   // ToolResult output
};

// One turn of a row: how it was opened, what it was shown and how it ended.
struct Turn {
  int number = 0;
  std::string execution_id;
  // Each turn runs under its own trace ("<world trace>-r<row>-t<turn>"): the audit record of a
  // turn is read back by it.
  std::string trace_id;
  std::string turn_id;
  bool opened = false;         // OpenTurn answered OK
  bool ended_at_open = false;  // admission ended it
  bool finished = false;       // a result was answered
  protocol::v1::ExecutionResult result;
  nlohmann::json expect_turn;
  std::vector<std::string> catalogue;
  nlohmann::json expect_catalogue;
  std::string serialized;  // every answer of this turn, for the grant-material scan
  // MCP: the session is live; the turn's execution token.
  bool mcp_connected = false;
  std::string execution_token;
  std::string mcp_url;
  // The row declares that this turn ends at admission (its expectTurn is on the open step).
  bool ending_at_open_expected = false;
  // FinishTurnResponse.escalation_id.
  std::string escalation_id;
  // The context's owner and authority (world.json's owner and orchestrator unless the open step
  // names others): whose escalation it raises, under whose authority an approval issues.
  protocol::v1::Address owner;
  protocol::v1::Address authority;
};

// Everything one row did on one column: its attempts and turns, and what the harness itself
// could not do.
struct RowRun {
  nlohmann::json row;
  std::vector<Attempt> attempts;
  std::map<int, Turn> turns;
  std::vector<std::string> harness_errors;
  std::vector<std::string> grant_ids;
  // Execution ids that must have left nothing in the audit log.
  std::vector<std::string> unrecorded_executions;
};

// ------------------------------------------------------------------ helpers

// `value[key]` when it is a string, else `fallback`.
std::string Str(const nlohmann::json& value, const char* key, const std::string& fallback = "");
// A row number as two digits ("07"), as grant ids are prefixed ("r07-").
std::string Pad(int row);
// A client context bearing `token`, a 30 s deadline, waiting for the channel to be ready.
std::unique_ptr<grpc::ClientContext> As(const std::string& token);
absl::Status FromGrpc(const grpc::Status& status);

// The word the protocol spells a status, outcome or source with ("succeeded", "denied",
// "kernel", …): the enum value's generated name without the enum's prefix, lower case
// ("unspecified" for the zero value). One mapping for every enum the grader compares.
template <typename Enum>
std::string Word(Enum value, absl::string_view prefix) {
  const google::protobuf::EnumValueDescriptor* described =
      google::protobuf::GetEnumDescriptor<Enum>()->FindValueByNumber(value);
  if (described == nullptr) return "unspecified";
  return absl::AsciiStrToLower(absl::StripPrefix(described->name(), prefix));
}

std::string StatusName(protocol::v1::ToolResultStatus status);
std::string TurnStatusName(protocol::v1::ExecutionStatus status);
std::string OutcomeName(protocol::v1::AuditOutcome outcome);
// Empty when the event names no boundary.
std::string SourceName(const protocol::v1::AuditEvent& event);

// The escalation the grant store holds for `execution_id` (any status), or none. Errors: the
// ListEscalations call's.
absl::Status StoredEscalation(Deployment& deployment, const std::string& namespace_id,
                              const std::string& execution_id,
                              std::optional<grantstore::v1::EscalationRecord>* found);

// ------------------------------------------------------------------ the record

// Every audit event of one execution, read through AuditLog.Query. Post-effect records are
// delivered by the writers' outboxes, so this polls until the turn's turn.ended is present
// (`want_ended`) — and, for an escalated turn, its escalation.requested, which the authorizer's
// writer delivers independently (`want_escalation`) — bounded by a deadline.
std::vector<protocol::v1::AuditEvent> ReadRecord(Deployment& deployment,
                                                 const std::string& namespace_id,
                                                 const std::string& trace_id, bool want_ended,
                                                 bool want_escalation = false);

}  // namespace sharedos::conformance

#endif  // SHAREDOS_TESTS_CONFORMANCE_ROW_RUN_H_
