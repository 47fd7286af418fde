#include "tools/sharedosctl/commands.h"

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status/grpc_status.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "sharedosd/demo_turn.h"
#include "tools/sharedosctl/names.h"
#include "tools/sharedosctl/table.h"

namespace sharedos::sharedosctl {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;

constexpr char kDemoNotes[] = "Workspace/notes.txt";
constexpr char kDemoSummary[] = "Workspace/summary.txt";

std::unique_ptr<grpc::ClientContext> Context(const Clients& clients, const GlobalOptions& globals,
                                             bool deadline = true) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("authorization", "Bearer " + clients.token);
  if (deadline) {
    context->set_deadline(std::chrono::system_clock::now() +
                          absl::ToChronoMilliseconds(globals.timeout));
  }
  return context;
}

int UsageError(std::ostream& err, const absl::Status& status) {
  err << "sharedosctl: " << status.message() << "\n(see sharedosctl --help)\n";
  return kExitUsage;
}

int CallError(std::ostream& err, const absl::Status& status) {
  err << "sharedosctl: " << absl::StatusCodeToString(status.code()) << ": " << status.message()
      << "\n";
  return kExitFailed;
}

int CallError(std::ostream& err, const grpc::Status& status) {
  return CallError(err, common::FromGrpcStatus(status));
}

absl::Status LoadMessageFile(const std::string& path, google::protobuf::Message* message) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read --file ", path));
  std::stringstream content;
  content << in.rdbuf();
  return ParseMessageText(path, content.str(), message);
}

std::string Constraints(const protocol::v1::CapabilityConstraints& constraints) {
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

// --- grants ---

int GrantsIssue(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err) {
  gs::IssueGrantRequest request;
  if (absl::Status loaded = LoadMessageFile(inv.Get("file"), request.mutable_grant());
      !loaded.ok()) {
    return UsageError(err, loaded);
  }
  request.set_idempotency_key(inv.Get("idempotency_key"));
  gs::IssueGrantResponse response;
  grpc::Status status =
      clients.grants->IssueGrant(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "issued grant " << response.grant().id() << " at revision " << response.revision()
        << "\n";
  }
  return kExitOk;
}

int GrantsDerive(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                 std::ostream& out, std::ostream& err) {
  gs::DeriveGrantRequest request;
  request.set_namespace_id(inv.Get("namespace"));
  request.set_parent_grant_id(inv.Get("parent"));
  if (absl::Status loaded = LoadMessageFile(inv.Get("file"), request.mutable_child());
      !loaded.ok()) {
    return UsageError(err, loaded);
  }
  gs::DeriveGrantResponse response;
  grpc::Status status =
      clients.grants->DeriveGrant(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) out << ToJson(response);
  if (response.has_refusal()) {
    err << "sharedosctl: derivation refused: " << response.refusal().code() << "\n";
    return kExitFailed;
  }
  if (!globals.json) {
    out << "derived grant " << response.granted().grant().id() << " from "
        << request.parent_grant_id() << " at revision " << response.granted().revision()
        << "\n";
  }
  return kExitOk;
}

int GrantsRevoke(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                 std::ostream& out, std::ostream& err) {
  gs::RevokeGrantRequest request;
  request.set_namespace_id(inv.Get("namespace"));
  request.set_grant_id(inv.Get("id"));
  gs::RevokeGrantResponse response;
  grpc::Status status =
      clients.grants->RevokeGrant(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "revoked grant " << request.grant_id() << " at "
        << FormatTimestamp(response.revoked_at()) << " (revision " << response.revision()
        << ")\n";
  }
  return kExitOk;
}

int GrantsList(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err) {
  auto request = BuildListGrants(inv);
  if (!request.ok()) return UsageError(err, request.status());
  gs::ListGrantsResponse all;
  while (true) {
    gs::ListGrantsResponse page;
    grpc::Status status =
        clients.grants->ListGrants(Context(clients, globals).get(), *request, &page);
    if (!status.ok()) return CallError(err, status);
    for (auto& grant : *page.mutable_grants()) *all.add_grants() = std::move(grant);
    if (page.next_page_token().empty()) break;
    request->set_page_token(page.next_page_token());
  }
  if (globals.json) {
    out << ToJson(all);
  } else {
    out << RenderGrants({all.grants().begin(), all.grants().end()});
  }
  return kExitOk;
}

int GrantsShow(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err) {
  gs::GetGrantRequest request;
  request.set_namespace_id(inv.Get("namespace"));
  request.set_grant_id(inv.Get("id"));
  gs::GetGrantResponse response;
  grpc::Status status =
      clients.grants->GetGrant(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  out << (globals.json ? ToJson(response) : RenderGrant(response.grant()));
  return kExitOk;
}

// --- policy ---

int PolicyPut(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
              std::ostream& out, std::ostream& err) {
  gs::PutHostPolicyRequest request;
  if (absl::Status loaded = LoadMessageFile(inv.Get("file"), request.mutable_policy());
      !loaded.ok()) {
    return UsageError(err, loaded);
  }
  gs::PutHostPolicyResponse response;
  grpc::Status status =
      clients.grants->PutHostPolicy(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "host policy of " << response.policy().namespace_id() << " is version "
        << response.policy().version() << " (" << response.policy().rules_size()
        << " rules, revision " << response.revision() << ")\n";
  }
  return kExitOk;
}

int PolicyGet(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
              std::ostream& out, std::ostream& err) {
  gs::GetHostPolicyRequest request;
  request.set_namespace_id(inv.Get("namespace"));
  gs::GetHostPolicyResponse response;
  grpc::Status status =
      clients.grants->GetHostPolicy(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else if (response.has_policy()) {
    out << RenderPolicy(response.policy());
  } else {
    out << "namespace " << request.namespace_id() << " has no host policy\n";
  }
  return kExitOk;
}

// --- escalations ---

int EscalationsList(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err) {
  gs::ListEscalationsRequest request;
  request.set_namespace_id(inv.Get("namespace"));
  if (inv.Has("status")) {
    auto status = ParseEscalationStatus(inv.Get("status"));
    if (!status.ok()) return UsageError(err, status.status());
    request.set_status(*status);
  }
  gs::ListEscalationsResponse all;
  while (true) {
    gs::ListEscalationsResponse page;
    grpc::Status status =
        clients.grants->ListEscalations(Context(clients, globals).get(), request, &page);
    if (!status.ok()) return CallError(err, status);
    for (auto& record : *page.mutable_escalations()) *all.add_escalations() = std::move(record);
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  if (globals.json) {
    out << ToJson(all);
  } else {
    out << RenderEscalations({all.escalations().begin(), all.escalations().end()});
  }
  return kExitOk;
}

int EscalationsShow(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err) {
  gs::GetEscalationRequest request;
  request.set_escalation_id(inv.Get("id"));
  gs::GetEscalationResponse response;
  grpc::Status status =
      clients.grants->GetEscalation(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    // The full record (requested authority included) in protobuf text format.
    out << RenderEscalations({response.escalation()});
    std::string text;
    google::protobuf::TextFormat::PrintToString(response.escalation().escalation(), &text);
    out << "\n" << text;
  }
  return kExitOk;
}

int EscalationsResolve(const Invocation& inv, const GlobalOptions& globals,
                       const Clients& clients, std::ostream& out, std::ostream& err,
                       gs::EscalationDecision decision) {
  auto request = BuildResolveEscalation(inv, decision);
  if (!request.ok()) return UsageError(err, request.status());
  gs::ResolveEscalationResponse response;
  grpc::Status status =
      clients.grants->ResolveEscalation(Context(clients, globals).get(), *request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "escalation " << response.escalation().escalation_id() << " is "
        << EscalationStatusName(response.escalation().status());
    if (response.has_grant()) out << "; issued grant " << response.grant().id();
    out << "\n";
  }
  return kExitOk;
}

// --- audit ---

int AuditQuery(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err) {
  auto filter = BuildAuditFilter(inv);
  if (!filter.ok()) return UsageError(err, filter.status());
  int64_t limit = 0;  // 0: every record
  if (inv.Has("limit")) {
    auto parsed = ParseInt("limit", inv.Get("limit"));
    if (!parsed.ok()) return UsageError(err, parsed.status());
    if (*parsed < 1) return UsageError(err, absl::InvalidArgumentError("--limit must be >= 1"));
    limit = *parsed;
  }
  av1::QueryRequest request;
  *request.mutable_filter() = *filter;
  av1::QueryResponse all;
  while (limit == 0 || all.records_size() < limit) {
    if (limit > 0) {
      request.set_limit(static_cast<int32_t>(std::min<int64_t>(1000, limit - all.records_size())));
    }
    av1::QueryResponse page;
    grpc::Status status = clients.audit->Query(Context(clients, globals).get(), request, &page);
    if (!status.ok()) return CallError(err, status);
    for (auto& record : *page.mutable_records()) {
      if (limit > 0 && all.records_size() >= limit) break;
      *all.add_records() = std::move(record);
    }
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  if (globals.json) {
    out << ToJson(all);
  } else {
    out << RenderAuditRecords({all.records().begin(), all.records().end()});
  }
  return kExitOk;
}

int AuditTail(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
              std::ostream& out, std::ostream& err) {
  auto filter = BuildAuditFilter(inv);
  if (!filter.ok()) return UsageError(err, filter.status());
  av1::TailRequest request;
  *request.mutable_filter() = *filter;
  if (inv.Has("from")) {
    auto from = ParseInt("from", inv.Get("from"));
    if (!from.ok()) return UsageError(err, from.status());
    request.set_from_sequence(*from);
  }
  // No deadline: follows until the server ends the stream or the operator presses Ctrl-C.
  auto context = Context(clients, globals, /*deadline=*/false);
  auto reader = clients.audit->Tail(context.get(), request);
  av1::TailResponse response;
  bool first = true;
  while (reader->Read(&response)) {
    if (globals.json) {
      out << ToJson(response, /*compact=*/true);
    } else {
      const std::string table = RenderAuditRecords({response.record()});
      // The header once, then one line per record.
      out << (first ? table : table.substr(table.find('\n') + 1));
    }
    first = false;
    out.flush();
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return CallError(err, status);
  return kExitOk;
}

int AuditVerify(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err) {
  auto request = BuildVerify(inv);
  if (!request.ok()) return UsageError(err, request.status());
  av1::VerifyResponse response;
  grpc::Status status = clients.audit->Verify(Context(clients, globals).get(), *request, &response);
  if (!status.ok()) return CallError(err, status);
  out << (globals.json ? ToJson(response) : RenderVerify(response));
  return response.ok() ? kExitOk : kExitFailed;
}

// --- turn ---

// "succeeded", "denied", … (the enum name without its prefix, lower case).
std::string Lower(const std::string& enum_name, const std::string& prefix) {
  return absl::AsciiStrToLower(absl::StartsWith(enum_name, prefix)
                                   ? enum_name.substr(prefix.size())
                                   : enum_name);
}

std::string ToolStatus(const pb::ToolResult& result) {
  return Lower(pb::ToolResultStatus_Name(result.status()), "TOOL_RESULT_STATUS_");
}

std::string ExecutionStatus(const pb::ExecutionResult& result) {
  return Lower(pb::ExecutionStatus_Name(result.status()), "EXECUTION_STATUS_");
}

absl::StatusOr<pb::ToolResult> CallTool(const Clients& clients, const std::string& turn_id,
                                        const std::string& call_id, const std::string& tool,
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

// Ends a turn that went off script; best effort.
void Cancel(const Clients& clients, const std::string& turn_id) {
  ev1::CancelTurnRequest request;
  request.set_turn_id(turn_id);
  clients.envelope->CancelTurn(request).IgnoreError();
}

int Turn(const Invocation&, const GlobalOptions& globals, const Clients& clients,
         std::ostream& out, std::ostream& err) {
  if (clients.envelope == nullptr) {
    err << "sharedosctl: no Envelope client\n";
    return kExitFailed;
  }
  // Progress lines; with --json only the ExecutionResult is printed.
  std::ostringstream discard;
  std::ostream& log = globals.json ? discard : out;
  const absl::Time now = absl::Now();
  const std::string execution_id = absl::StrCat("exec-demo-", absl::ToUnixMicros(now));
  google::protobuf::Timestamp timestamp;
  timestamp.set_seconds(absl::ToUnixSeconds(now));
  absl::StatusOr<ev1::OpenTurnResponse> open =
      clients.envelope->OpenTurn(BuildDemoTurn(execution_id, timestamp));
  if (!open.ok()) return CallError(err, open.status());
  const ev1::OpenTurnResponse& opened = *open;
  if (opened.has_result()) {
    if (globals.json) out << ToJson(opened.result());
    err << "sharedosctl: the turn ended at admission: " << ExecutionStatus(opened.result())
        << " " << opened.result().error().code() << ": " << opened.result().error().message()
        << "\n";
    return kExitFailed;
  }
  log << "turn " << opened.turn_id() << " opened (execution " << execution_id << ", "
      << opened.catalog().tools_size() << " tools)\n";

  auto read = CallTool(clients, opened.turn_id(), "call-read", "files.read",
                       absl::StrCat(R"({"path": ")", kDemoNotes, R"("})"));
  if (!read.ok()) {
    err << "sharedosctl: files.read: " << read.status() << "\n";
    Cancel(clients, opened.turn_id());
    return kExitFailed;
  }
  log << "files.read " << kDemoNotes << ": " << ToolStatus(*read);
  if (read->status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) {
    log << " " << read->error().code() << ": " << read->error().message() << "\n";
    Cancel(clients, opened.turn_id());
    log << "turn: cancelled (off script)\n";
    return kExitFailed;
  }
  log << "\n";

  auto write = CallTool(
      clients, opened.turn_id(), "call-write", "files.create",
      absl::StrCat(R"({"path": ")", kDemoSummary, R"(", "content": "summary: buy milk\n"})"));
  if (!write.ok()) {
    err << "sharedosctl: files.create: " << write.status() << "\n";
    Cancel(clients, opened.turn_id());
    return kExitFailed;
  }
  log << "files.create " << kDemoSummary << ": " << ToolStatus(*write);
  ev1::FinishTurnRequest finish;
  finish.set_turn_id(opened.turn_id());
  if (write->status() == pb::TOOL_RESULT_STATUS_SUCCEEDED) {
    log << "\n";
    finish.mutable_complete()->mutable_output()->set_string_value("summary written");
  } else if (write->status() == pb::TOOL_RESULT_STATUS_DENIED &&
             write->error().code() == "no_matching_grant") {
    log << " " << write->error().code() << "\n";
    auto required = RequiredAuthority(*write);
    if (!required.ok()) {
      err << "sharedosctl: the denial names no authority: " << required.status().message()
          << "\n";
      Cancel(clients, opened.turn_id());
      return kExitFailed;
    }
    for (const pb::Capability& capability : required->capabilities()) {
      log << "  requires " << FormatCapability(capability) << "\n";
    }
    finish.mutable_escalate()->set_reason("The assistant needs to write its summary.");
    *finish.mutable_escalate()->mutable_requested_authority() = *required;
  } else {
    log << " " << write->error().code() << ": " << write->error().message() << "\n";
    Cancel(clients, opened.turn_id());
    log << "turn: cancelled (off script)\n";
    return kExitFailed;
  }

  absl::StatusOr<ev1::FinishTurnResponse> finished = clients.envelope->FinishTurn(finish);
  if (!finished.ok()) return CallError(err, finished.status());
  const pb::ExecutionResult& result = finished->result();
  if (globals.json) out << ToJson(result);
  log << "turn: " << ExecutionStatus(result) << "\n";
  if (finish.has_complete()) {
    return result.status() == pb::EXECUTION_STATUS_SUCCEEDED ? kExitOk : kExitFailed;
  }
  if (result.status() != pb::EXECUTION_STATUS_ESCALATED) return kExitFailed;

  // The escalation's id: the pending record of this execution naming the same authority.
  gs::ListEscalationsRequest list;
  list.set_namespace_id(BuildDemoTurn("", timestamp).execution_request().context().namespace_id());
  list.set_status(gs::ESCALATION_RECORD_STATUS_PENDING);
  std::vector<gs::EscalationRecord> pending;
  while (true) {
    gs::ListEscalationsResponse page;
    grpc::Status status =
        clients.grants->ListEscalations(Context(clients, globals).get(), list, &page);
    if (!status.ok()) return CallError(err, status);
    pending.insert(pending.end(), page.escalations().begin(), page.escalations().end());
    if (page.next_page_token().empty()) break;
    list.set_page_token(page.next_page_token());
  }
  const std::string id = FindEscalationId(pending, execution_id,
                                          result.escalation().requested_authority().id());
  if (id.empty()) {
    err << "sharedosctl: the escalation of " << execution_id << " is not listed\n";
    return kExitFailed;
  }
  log << "escalation: " << id << "\n";
  return kExitOk;
}

}  // namespace

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
    return absl::InvalidArgumentError(
        absl::StrCat("requiredAuthority is not a CapabilityRequest: ",
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

absl::StatusOr<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read the token file ", path));
  }
  std::string token(absl::StripAsciiWhitespace(line));
  if (token.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("the token file ", path, " is empty"));
  }
  return token;
}

absl::Status ParseMessageText(const std::string& path, const std::string& text,
                              google::protobuf::Message* message) {
  const std::string trimmed(absl::StripLeadingAsciiWhitespace(text));
  if (absl::EndsWith(path, ".json") || absl::StartsWith(trimmed, "{")) {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(text, message, options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a JSON ",
                                                     message->GetTypeName(), ": ",
                                                     std::string(status.message())));
    }
    return absl::OkStatus();
  }
  // Collect the parser's complaints instead of logging them.
  class Collector : public google::protobuf::io::ErrorCollector {
   public:
    void AddError(int line, int column, const std::string& message) override {
      if (first.empty()) first = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
    }
    std::string first;
  } collector;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  if (!parser.ParseFromString(text, message)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a textproto ",
                                                   message->GetTypeName(), ": ",
                                                   collector.first));
  }
  return absl::OkStatus();
}

absl::StatusOr<gs::ListGrantsRequest> BuildListGrants(const Invocation& inv) {
  gs::ListGrantsRequest request;
  request.mutable_filter()->set_namespace_id(inv.Get("namespace"));
  if (inv.Has("subject")) {
    auto subject = ParseAddress(inv.Get("subject"));
    if (!subject.ok()) return subject.status();
    *request.mutable_filter()->mutable_subject() = *subject;
  }
  if (inv.Has("issuer")) {
    auto issuer = ParseAddress(inv.Get("issuer"));
    if (!issuer.ok()) return issuer.status();
    *request.mutable_filter()->mutable_issuer() = *issuer;
  }
  request.mutable_filter()->set_include_revoked(inv.GetBool("include_revoked"));
  return request;
}

absl::StatusOr<av1::AuditFilter> BuildAuditFilter(const Invocation& inv) {
  av1::AuditFilter filter;
  filter.set_namespace_id(inv.Get("namespace"));
  filter.set_trace_id(inv.Get("trace"));
  filter.set_execution_id(inv.Get("execution"));
  filter.set_reason(inv.Get("reason"));
  if (inv.Has("type")) {
    auto type = ParseAuditEventType(inv.Get("type"));
    if (!type.ok()) return type.status();
    filter.set_type(*type);
  }
  if (inv.Has("outcome")) {
    auto outcome = ParseAuditOutcome(inv.Get("outcome"));
    if (!outcome.ok()) return outcome.status();
    filter.set_outcome(*outcome);
  }
  if (inv.Has("source")) {
    auto source = ParseAuditSource(inv.Get("source"));
    if (!source.ok()) return source.status();
    filter.set_source(*source);
  }
  if (inv.Has("actor")) {
    auto actor = ParseAddress(inv.Get("actor"));
    if (!actor.ok()) return actor.status();
    *filter.mutable_actor() = *std::move(actor);
  }
  if (inv.Has("since")) {
    auto since = ParseTimestamp(inv.Get("since"));
    if (!since.ok()) return since.status();
    *filter.mutable_from() = *since;
  }
  if (inv.Has("until")) {
    auto until = ParseTimestamp(inv.Get("until"));
    if (!until.ok()) return until.status();
    *filter.mutable_to() = *until;
  }
  return filter;
}

absl::StatusOr<gs::ResolveEscalationRequest> BuildResolveEscalation(
    const Invocation& inv, gs::EscalationDecision decision) {
  gs::ResolveEscalationRequest request;
  request.set_escalation_id(inv.Get("id"));
  request.set_decision(decision);
  auto reviewer = ParseAddress(inv.Get("reviewer"));
  if (!reviewer.ok()) return reviewer.status();
  *request.mutable_reviewer() = *reviewer;
  if (inv.Has("expires_at")) {
    auto expires_at = ParseTimestamp(inv.Get("expires_at"));
    if (!expires_at.ok()) return expires_at.status();
    *request.mutable_narrowing()->mutable_expires_at() = *expires_at;
  }
  if (inv.Has("max_uses")) {
    auto max_uses = ParseInt("max_uses", inv.Get("max_uses"));
    if (!max_uses.ok()) return max_uses.status();
    if (*max_uses < 1) return absl::InvalidArgumentError("--max_uses must be >= 1");
    request.mutable_narrowing()->set_max_uses(*max_uses);
  }
  request.set_grant_id(inv.Get("grant_id"));
  return request;
}

absl::StatusOr<av1::VerifyRequest> BuildVerify(const Invocation& inv) {
  av1::VerifyRequest request;
  if (inv.Has("from")) {
    auto from = ParseInt("from", inv.Get("from"));
    if (!from.ok()) return from.status();
    request.set_from_sequence(*from);
  }
  if (inv.Has("to")) {
    auto to = ParseInt("to", inv.Get("to"));
    if (!to.ok()) return to.status();
    request.set_to_sequence(*to);
  }
  return request;
}

std::string FormatCapability(const protocol::v1::Capability& capability) {
  std::string resource =
      absl::StrCat(capability.resource().namespace_(), ":",
                   absl::StrJoin(capability.resource().path(), "/"));
  if (capability.scope() == protocol::v1::SCOPE_DESCENDANTS) absl::StrAppend(&resource, "/**");
  if (capability.resource().has_owner()) {
    absl::StrAppend(&resource, "@", FormatAddress(capability.resource().owner()));
  }
  return absl::StrCat(resource, " [", absl::StrJoin(capability.actions(), ","), "]");
}

std::string RenderGrants(const std::vector<protocol::v1::CapabilityGrant>& grants) {
  Table table({"ID", "SUBJECT", "ISSUER", "CAPABILITIES", "PARENT", "REVOKED"});
  for (const auto& grant : grants) {
    std::vector<std::string> capabilities;
    for (const auto& capability : grant.capabilities()) {
      capabilities.push_back(FormatCapability(capability));
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
    table.AddRow({"capability", FormatCapability(capability)});
  }
  table.AddRow({"constraints", Constraints(grant.constraints())});
  table.AddRow({"issued_at", FormatTimestamp(grant.issued_at())});
  table.AddRow({"revoked_at", grant.has_revoked_at() ? FormatTimestamp(grant.revoked_at()) : ""});
  table.AddRow({"parent", grant.parent_grant_id()});
  return table.Render();
}

std::string RenderAuditRecords(const std::vector<av1::AuditRecord>& records) {
  // What was tried (TOOL), who refused it (SOURCE: the kernel's mediation or the envelope's turn
  // layer), with which code (REASON; "(fail closed)" for infrastructure refusals) and the
  // situation behind it (CAUSE).
  Table table({"SEQ", "AT", "TYPE", "OUTCOME", "NAMESPACE", "ACTOR", "TOOL", "GRANT", "SOURCE",
               "REASON", "CAUSE"});
  for (const auto& record : records) {
    const auto& event = record.event();
    std::string reason = event.reason();
    if (event.fail_closed()) absl::StrAppend(&reason, " (fail closed)");
    table.AddRow({absl::StrCat(record.sequence()), FormatTimestamp(event.at()),
                  AuditEventTypeName(event.type()), AuditOutcomeName(event.outcome()),
                  event.namespace_id(),
                  event.has_actor() ? FormatAddress(event.actor()) : "", event.tool(),
                  event.grant_id(), event.has_source() ? AuditSourceName(event.source()) : "",
                  reason, event.cause()});
  }
  return table.Render();
}

std::string RenderEscalations(const std::vector<gs::EscalationRecord>& escalations) {
  Table table({"ID", "STATUS", "NAMESPACE", "EXECUTION", "REASON", "REVIEWER", "GRANT"});
  for (const auto& record : escalations) {
    table.AddRow({record.escalation_id(), EscalationStatusName(record.status()),
                  record.namespace_id(), record.execution_id(), record.escalation().reason(),
                  record.has_reviewer() ? FormatAddress(record.reviewer()) : "",
                  record.grant_id()});
  }
  return table.Render();
}

std::string RenderPolicy(const gs::HostPolicy& policy) {
  std::string out = absl::StrCat("namespace ", policy.namespace_id(), ", version ",
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
  if (verify.ok()) {
    return absl::StrCat("ok: ", verify.checked(), " records verify; head ", verify.head_hash(),
                        "\n");
  }
  return absl::StrCat("BROKEN: first bad sequence ", verify.first_bad_sequence(), " (",
                      verify.checked(), " records checked): ", verify.detail(), "\n");
}

std::string ToJson(const google::protobuf::Message& message, bool compact) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = !compact;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) return absl::StrCat("{\"error\": \"cannot print as JSON\"}\n");
  if (json.empty() || json.back() != '\n') json += '\n';
  return json;
}

int RunCommand(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               std::ostream& out, std::ostream& err) {
  using Handler = int (*)(const Invocation&, const GlobalOptions&, const Clients&, std::ostream&,
                          std::ostream&);
  static const std::pair<const char*, Handler> kHandlers[] = {
      {"grants issue", GrantsIssue},
      {"grants derive", GrantsDerive},
      {"grants revoke", GrantsRevoke},
      {"grants list", GrantsList},
      {"grants show", GrantsShow},
      {"policy put", PolicyPut},
      {"policy get", PolicyGet},
      {"escalations list", EscalationsList},
      {"escalations show", EscalationsShow},
      {"escalations approve",
       [](const Invocation& i, const GlobalOptions& g, const Clients& c, std::ostream& o,
          std::ostream& e) {
         return EscalationsResolve(i, g, c, o, e, gs::ESCALATION_DECISION_APPROVE);
       }},
      {"escalations deny",
       [](const Invocation& i, const GlobalOptions& g, const Clients& c, std::ostream& o,
          std::ostream& e) {
         return EscalationsResolve(i, g, c, o, e, gs::ESCALATION_DECISION_DENY);
       }},
      {"audit query", AuditQuery},
      {"audit tail", AuditTail},
      {"audit verify", AuditVerify},
      {"turn", Turn},
  };
  for (const auto& [name, handler] : kHandlers) {
    if (inv.command == name) return handler(inv, globals, clients, out, err);
  }
  return UsageError(err, absl::InvalidArgumentError(
                             absl::StrCat("unknown command \"", inv.command, "\"")));
}

}  // namespace sharedos::sharedosctl
