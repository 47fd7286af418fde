#include "tools/sharedosctl/turn_command.h"

#include <optional>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status/grpc_status.h"
#include "common/text/terminal_safe.h"
#include "google/protobuf/util/json_util.h"
#include "grantstore_svc/client/operator_render.h"
#include "grpcpp/grpcpp.h"
#include "sharedosd/demo_turn.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::FormatCapability;
using ::sharedos::grantstore::client::ToJson;

namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;
using common::text::TerminalSafe;

constexpr char kDemoNotes[] = "Workspace/notes.txt";
constexpr char kDemoSummary[] = "Workspace/summary.txt";

// "succeeded", "denied", … (the enum name without its prefix, lower case).
std::string Lower(const std::string& enum_name, const std::string& prefix) {
  return absl::AsciiStrToLower(absl::StartsWith(enum_name, prefix) ? enum_name.substr(prefix.size())
                                                                   : enum_name);
}

std::string ToolStatus(const pb::ToolResult& result) {
  return Lower(pb::ToolResultStatus_Name(result.status()), "TOOL_RESULT_STATUS_");
}

std::string ExecutionStatus(const pb::ExecutionResult& result) {
  return Lower(pb::ExecutionStatus_Name(result.status()), "EXECUTION_STATUS_");
}

absl::StatusOr<pb::ToolResult> CallTool(const Clients& clients, const GlobalOptions& globals,
                                        const std::string& turn_id, const std::string& call_id,
                                        const std::string& tool,
                                        const std::string& arguments_json) {
  ev1::InvokeToolRequest request;
  request.set_turn_id(turn_id);
  pb::ToolCall* call = request.mutable_call();
  call->set_id(call_id);
  call->set_tool(tool);
  call->set_trace_id("trace-quickstart");
  if (!google::protobuf::util::JsonStringToMessage(arguments_json, call->mutable_arguments())
           .ok()) {
    return absl::InternalError("bad tool arguments");
  }
  const absl::Time now = absl::Now();
  call->mutable_requested_at()->set_seconds(absl::ToUnixSeconds(now));
  absl::StatusOr<ev1::InvokeToolResponse> response = clients.envelope->InvokeTool(request);
  if (!response.ok()) return response.status();
  return response->result();
}

// One run of the demo turn: its streams, its execution and the opened turn. Each step answers
// false when the run ends there (having said why, and cancelled a turn left open). Used by one
// thread.
class DemoTurn {
 public:
  DemoTurn(const Clients& clients, const GlobalOptions& globals, std::ostream& out,
           std::ostream& err)
      : clients_(clients),
        globals_(globals),
        out_(out),
        err_(err),
        // Progress lines; with --json only the ExecutionResult is printed.
        log_(globals.json ? discard_ : out),
        now_(absl::Now()),
        execution_id_(absl::StrCat("exec-demo-", absl::ToUnixMicros(now_))) {
    timestamp_.set_seconds(absl::ToUnixSeconds(now_));
  }

  bool Open() {
    absl::StatusOr<ev1::OpenTurnResponse> open =
        clients_.envelope->OpenTurn(BuildDemoTurn(execution_id_, timestamp_));
    if (!open.ok()) {
      CallError(err_, open.status());
      return false;
    }
    const ev1::OpenTurnResponse& opened = *open;
    if (opened.has_result()) {
      if (globals_.json) out_ << ToJson(opened.result());
      err_ << "sharedosctl: the turn ended at admission: " << ExecutionStatus(opened.result())
           << " " << TerminalSafe(opened.result().error().code()) << ": "
           << TerminalSafe(opened.result().error().message()) << "\n";
      return false;
    }
    turn_id_ = opened.turn_id();
    log_ << "turn " << TerminalSafe(turn_id_) << " opened (execution " << execution_id_ << ", "
         << opened.catalog().tools_size() << " tools)\n";
    return true;
  }

  bool ReadNotes() {
    auto read = CallTool(clients_, globals_, turn_id_, "call-read", "files.read",
                         absl::StrCat(R"({"path": ")", kDemoNotes, R"("})"));
    if (!read.ok()) {
      err_ << "sharedosctl: files.read: " << TerminalSafe(read.status().ToString()) << "\n";
      Cancel();
      return false;
    }
    log_ << "files.read " << kDemoNotes << ": " << ToolStatus(*read);
    if (read->status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      log_ << " " << TerminalSafe(read->error().code()) << ": "
           << TerminalSafe(read->error().message()) << "\n";
      GoOffScript();
      return false;
    }
    log_ << "\n";
    return true;
  }

  // The FinishTurn the write's answer calls for: complete when it succeeded, escalate with the
  // authority a no_matching_grant denial names.
  std::optional<ev1::FinishTurnRequest> WriteSummary() {
    auto write = CallTool(
        clients_, globals_, turn_id_, "call-write", "files.create",
        absl::StrCat(R"({"path": ")", kDemoSummary, R"(", "content": "summary: buy milk\n"})"));
    if (!write.ok()) {
      err_ << "sharedosctl: files.create: " << TerminalSafe(write.status().ToString()) << "\n";
      Cancel();
      return std::nullopt;
    }
    log_ << "files.create " << kDemoSummary << ": " << ToolStatus(*write);
    ev1::FinishTurnRequest finish;
    finish.set_turn_id(turn_id_);
    if (write->status() == pb::TOOL_RESULT_STATUS_SUCCEEDED) {
      log_ << "\n";
      finish.mutable_complete()->mutable_output()->set_string_value("summary written");
      return finish;
    }
    if (write->status() != pb::TOOL_RESULT_STATUS_DENIED ||
        write->error().code() != "no_matching_grant") {
      log_ << " " << TerminalSafe(write->error().code()) << ": "
           << TerminalSafe(write->error().message()) << "\n";
      GoOffScript();
      return std::nullopt;
    }
    log_ << " " << TerminalSafe(write->error().code()) << "\n";
    auto required = RequiredAuthority(*write);
    if (!required.ok()) {
      err_ << "sharedosctl: the denial names no authority: "
           << TerminalSafe(required.status().message()) << "\n";
      Cancel();
      return std::nullopt;
    }
    for (const pb::Capability& capability : required->capabilities()) {
      log_ << "  requires " << TerminalSafe(FormatCapability(capability)) << "\n";
    }
    finish.mutable_escalate()->set_reason("The assistant needs to write its summary.");
    *finish.mutable_escalate()->mutable_requested_authority() = *required;
    return finish;
  }

  std::optional<pb::ExecutionResult> Finish(const ev1::FinishTurnRequest& finish) {
    absl::StatusOr<ev1::FinishTurnResponse> answered = clients_.envelope->FinishTurn(finish);
    if (!answered.ok()) {
      CallError(err_, answered.status());
      return std::nullopt;
    }
    const ev1::FinishTurnResponse& finished = *answered;
    if (globals_.json) out_ << ToJson(finished.result());
    log_ << "turn: " << ExecutionStatus(finished.result()) << "\n";
    return finished.result();
  }

  // The escalation's id: the pending record of this execution naming the same authority.
  bool ReportEscalation(const pb::ExecutionResult& result) {
    gs::ListEscalationsRequest list;
    list.set_namespace_id(
        BuildDemoTurn("", timestamp_).execution_request().context().namespace_id());
    list.set_status(gs::ESCALATION_RECORD_STATUS_PENDING);
    std::vector<gs::EscalationRecord> pending;
    while (true) {
      gs::ListEscalationsResponse page;
      grpc::Status status =
          clients_.grants->ListEscalations(Context(clients_, globals_).get(), list, &page);
      if (!status.ok()) {
        CallError(err_, status);
        return false;
      }
      pending.insert(pending.end(), page.escalations().begin(), page.escalations().end());
      if (page.next_page_token().empty()) break;
      list.set_page_token(page.next_page_token());
    }
    const std::string id =
        FindEscalationId(pending, execution_id_, result.escalation().requested_authority().id());
    if (id.empty()) {
      err_ << "sharedosctl: the escalation of " << execution_id_ << " is not listed\n";
      return false;
    }
    log_ << "escalation: " << TerminalSafe(id) << "\n";
    return true;
  }

 private:
  // Ends a turn that went off script; best effort.
  void Cancel() {
    ev1::CancelTurnRequest request;
    request.set_turn_id(turn_id_);
    clients_.envelope->CancelTurn(request).IgnoreError();
  }
  void GoOffScript() {
    Cancel();
    log_ << "turn: cancelled (off script)\n";
  }

  const Clients& clients_;
  const GlobalOptions& globals_;
  std::ostream& out_;
  std::ostream& err_;
  std::ostringstream discard_;
  std::ostream& log_;
  const absl::Time now_;
  const std::string execution_id_;
  google::protobuf::Timestamp timestamp_;
  std::string turn_id_;
};

}  // namespace

int RunDemoTurn(const Invocation&, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err) {
  if (clients.envelope == nullptr) {
    err << "sharedosctl: no Envelope client\n";
    return kExitFailed;
  }
  DemoTurn demo(clients, globals, out, err);
  if (!demo.Open() || !demo.ReadNotes()) return kExitFailed;
  const std::optional<ev1::FinishTurnRequest> finish = demo.WriteSummary();
  if (!finish.has_value()) return kExitFailed;
  const std::optional<pb::ExecutionResult> result = demo.Finish(*finish);
  if (!result.has_value()) return kExitFailed;
  if (finish->has_complete()) {
    return result->status() == pb::EXECUTION_STATUS_SUCCEEDED ? kExitOk : kExitFailed;
  }
  if (result->status() != pb::EXECUTION_STATUS_ESCALATED) return kExitFailed;
  return demo.ReportEscalation(*result) ? kExitOk : kExitFailed;
}

ev1::OpenTurnRequest BuildDemoTurn(const std::string& execution_id,
                                   const google::protobuf::Timestamp& now) {
  return sharedosd::DemoTurnRequest(ev1::RUNTIME_DRIVER, execution_id, "trace-quickstart", now);
}

absl::StatusOr<pb::CapabilityRequest> RequiredAuthority(const pb::ToolResult& denial) {
  const auto& fields = denial.error().details().fields();
  auto it = fields.find("requiredAuthority");
  if (it == fields.end() || !it->second.has_struct_value()) {
    return absl::NotFoundError("no error.details.requiredAuthority");
  }
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(it->second.struct_value(), &json).ok()) {
    return absl::InvalidArgumentError("requiredAuthority is not JSON");
  }
  pb::CapabilityRequest request;
  auto status = google::protobuf::util::JsonStringToMessage(json, &request);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("requiredAuthority is not a CapabilityRequest: ",
                                                   std::string(status.message())));
  }
  return request;
}

std::string FindEscalationId(const std::vector<gs::EscalationRecord>& escalations,
                             const std::string& execution_id,
                             const std::string& requested_authority_id) {
  for (const gs::EscalationRecord& record : escalations) {
    if (record.execution_id() == execution_id &&
        record.escalation().requested_authority().id() == requested_authority_id) {
      return record.escalation_id();
    }
  }
  return "";
}

}  // namespace sharedos::sharedosctl
