#include "tools/sharedosctl/audit_commands.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/core/witness.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_render.h"
#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/export.h"
#include "tools/sharedosctl/requests.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::RenderAuditRecords;
using ::sharedos::grantstore::client::RenderVerify;
using ::sharedos::grantstore::client::ToJson;

namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;

// Checkpoints per Verify call (the server's bound); a longer file is checked in several calls.
constexpr int kCheckpointsPerCall = 10000;
constexpr size_t kMaxCheckpointFileBytes = 64 << 20;

absl::StatusOr<std::string> ReadSmallFile(const std::string& flag, const std::string& path,
                                          size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read ", path));
  std::string text(limit + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > limit) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", path, " is too large"));
  }
  return text;
}

// Verify against `checkpoints`, in calls of at most kCheckpointsPerCall; the answer of the first
// call that fails (its detail's "checkpoints[i]" counted from the first of the list), or of the
// last. `public_key_pem` empty: the server's own key.
absl::StatusOr<av1::VerifyResponse> VerifyCheckpoints(
    const std::vector<av1::SignedCheckpoint>& checkpoints, const std::string& public_key_pem,
    const GlobalOptions& globals, const Clients& clients, size_t& first_of_failing_call) {
  av1::VerifyRequest request;
  request.set_checkpoint_public_key_pem(public_key_pem);
  av1::VerifyResponse response;
  int64_t verified = 0;
  for (size_t first = 0; first < checkpoints.size(); first += kCheckpointsPerCall) {
    request.clear_checkpoints();
    const size_t end = std::min(checkpoints.size(), first + kCheckpointsPerCall);
    for (size_t i = first; i < end; ++i) *request.add_checkpoints() = checkpoints[i];
    grpc::Status status =
        clients.audit->Verify(Context(clients, globals).get(), request, &response);
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    verified += response.checkpoints_verified();
    first_of_failing_call = first;
    if (!response.ok()) break;
  }
  response.set_checkpoints_verified(verified);
  return response;
}

// The index the server's detail names ("checkpoints[i] ..."), or -1.
int64_t FaultIndex(const std::string& detail) {
  constexpr absl::string_view kPrefix = "checkpoints[";
  if (!absl::StartsWith(detail, kPrefix)) return -1;
  const size_t close = detail.find(']');
  int64_t index = -1;
  if (close == std::string::npos ||
      !absl::SimpleAtoi(detail.substr(kPrefix.size(), close - kPrefix.size()), &index)) {
    return -1;
  }
  return index;
}

// audit verify --checkpoints=LOG --public_key=PEM: the checkpoints of the exported log lines,
// in order of sequence (so the first fault is the lowest checkpoint the log no longer extends),
// under the pinned key. On a fault, a line naming the checkpoint's log line and the last
// checkpoint below it that still verifies: what changed lies between the two.
int VerifyLoggedCheckpoints(const Invocation& inv, const GlobalOptions& globals,
                            const Clients& clients, std::ostream& out, std::ostream& err) {
  if (!inv.Has("public_key")) {
    return UsageError(err, absl::InvalidArgumentError(
                               "--public_key: required with --checkpoints (the PEM public key "
                               "printed at the server's first start, kept apart)"));
  }
  absl::StatusOr<std::string> pem =
      ReadSmallFile("public_key", inv.Get("public_key"), audit::core::kMaxCheckpointKeyFileBytes);
  if (!pem.ok()) return UsageError(err, pem.status());
  absl::StatusOr<std::vector<LoggedCheckpoint>> logged =
      ReadCheckpointLogFile(inv.Get("checkpoints"));
  if (!logged.ok()) return UsageError(err, logged.status());
  std::stable_sort(logged->begin(), logged->end(),
                   [](const LoggedCheckpoint& a, const LoggedCheckpoint& b) {
                     return a.checkpoint.sequence() < b.checkpoint.sequence();
                   });
  std::vector<av1::SignedCheckpoint> checkpoints;
  checkpoints.reserve(logged->size());
  for (const LoggedCheckpoint& entry : *logged) checkpoints.push_back(entry.checkpoint);
  size_t first_of_call = 0;
  absl::StatusOr<av1::VerifyResponse> checked =
      VerifyCheckpoints(checkpoints, *pem, globals, clients, first_of_call);
  if (!checked.ok()) return CallError(err, checked.status());
  out << (globals.json ? ToJson(*checked) : RenderVerify(*checked));
  if (checked->ok()) return kExitOk;
  const int64_t index = FaultIndex(checked->detail());
  if (!globals.json && index >= 0 && first_of_call + index < logged->size()) {
    const LoggedCheckpoint& bad = (*logged)[first_of_call + index];
    out << "the checkpoint of sequence " << bad.checkpoint.sequence() << " (line " << bad.line
        << " of " << inv.Get("checkpoints") << ") is the first one the log does not extend";
    if (first_of_call + index > 0) {
      const int64_t good = (*logged)[first_of_call + index - 1].checkpoint.sequence();
      out << "; it extends the one of sequence " << good << ": records " << good + 1 << ".."
          << bad.checkpoint.sequence() << " were rewritten, removed or rolled back";
    }
    out << "\n";
  }
  return kExitFailed;
}

}  // namespace

absl::StatusOr<std::vector<LoggedCheckpoint>> ReadCheckpointLogFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("--checkpoints: cannot read ", path));
  std::vector<LoggedCheckpoint> checkpoints;
  std::string line;
  int64_t number = 0;
  auto end_of_line = [&]() -> absl::Status {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    absl::StatusOr<std::optional<av1::SignedCheckpoint>> parsed =
        audit::core::ParseCheckpointLogLine(line);
    line.clear();
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--checkpoints: ", path, " line ", number, ": ", parsed.status().message()));
    }
    if (!parsed->has_value()) return absl::OkStatus();
    if (checkpoints.size() >= kMaxCheckpointLogLines) {
      return absl::InvalidArgumentError(absl::StrCat("--checkpoints: ", path, " holds more than ",
                                                     kMaxCheckpointLogLines,
                                                     " audit.checkpoint lines; split it"));
    }
    checkpoints.push_back({**std::move(parsed), number});
    return absl::OkStatus();
  };
  std::string buffer(64 * 1024, '\0');
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    const size_t got = static_cast<size_t>(in.gcount());
    for (size_t i = 0; i < got; ++i) {
      if (buffer[i] == '\n') {
        RETURN_IF_ERROR(end_of_line());
      } else if (line.size() <= audit::core::kMaxCheckpointLogLineBytes) {
        line.push_back(buffer[i]);
      }
    }
  }
  if (!line.empty()) RETURN_IF_ERROR(end_of_line());
  if (checkpoints.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--checkpoints: ", path, " holds no audit.checkpoint line"));
  }
  return checkpoints;
}

absl::StatusOr<std::vector<av1::SignedCheckpoint>> ReadCheckpointFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadSmallFile("checkpoint", path, kMaxCheckpointFileBytes));
  std::vector<av1::SignedCheckpoint> checkpoints;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    av1::SignedCheckpoint checkpoint;
    if (!google::protobuf::util::JsonStringToMessage(std::string(line), &checkpoint).ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--checkpoint: ", path, " line ", number, ": not a signed checkpoint"));
    }
    checkpoints.push_back(std::move(checkpoint));
  }
  if (checkpoints.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--checkpoint: ", path, " holds none"));
  }
  return checkpoints;
}

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
  if (inv.Has("checkpoints")) {
    if (request->has_from_sequence() || request->has_to_sequence() || inv.Has("checkpoint") ||
        inv.Has("checkpoint_public_key")) {
      return UsageError(
          err, absl::InvalidArgumentError("--checkpoints: not with --from, --to (the whole chain), "
                                          "--checkpoint or --checkpoint_public_key"));
    }
    return VerifyLoggedCheckpoints(inv, globals, clients, out, err);
  } else if (inv.Has("public_key")) {
    return UsageError(err, absl::InvalidArgumentError("--public_key: needs --checkpoints"));
  }
  if (inv.Has("checkpoint")) {
    if (request->has_from_sequence() || request->has_to_sequence()) {
      return UsageError(err, absl::InvalidArgumentError(
                                 "--checkpoint: not with --from or --to (the whole chain)"));
    }
    absl::StatusOr<av1::VerifyResponse> checked = [&]() -> absl::StatusOr<av1::VerifyResponse> {
      ASSIGN_OR_RETURN(std::vector<av1::SignedCheckpoint> checkpoints,
                       ReadCheckpointFile(inv.Get("checkpoint")));
      std::string pem;
      if (inv.Has("checkpoint_public_key")) {
        ASSIGN_OR_RETURN(pem, ReadSmallFile("checkpoint_public_key",
                                            inv.Get("checkpoint_public_key"), 64 * 1024));
      }
      size_t first_of_call = 0;
      return VerifyCheckpoints(checkpoints, pem, globals, clients, first_of_call);
    }();
    if (!checked.ok()) {
      return checked.status().code() == absl::StatusCode::kInvalidArgument &&
                     absl::StartsWith(checked.status().message(), "--")
                 ? UsageError(err, checked.status())
                 : CallError(err, checked.status());
    }
    out << (globals.json ? ToJson(*checked) : RenderVerify(*checked));
    return checked->ok() ? kExitOk : kExitFailed;
  } else if (inv.Has("checkpoint_public_key")) {
    return UsageError(err,
                      absl::InvalidArgumentError("--checkpoint_public_key: needs --checkpoint"));
  }
  av1::VerifyResponse response;
  grpc::Status status = clients.audit->Verify(Context(clients, globals).get(), *request, &response);
  if (!status.ok()) return CallError(err, status);
  out << (globals.json ? ToJson(response) : RenderVerify(response));
  return response.ok() ? kExitOk : kExitFailed;
}

namespace {

// The records after `since` by Query, page by page (Query has no sequence bound: earlier
// records are read and skipped), then the head signed now when asked.
int ExportOnce(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
               ExportFormat format, int64_t since, std::ostream& out, std::ostream& err) {
  av1::QueryRequest request;
  request.mutable_filter()->set_namespace_id(inv.Get("namespace"));
  request.set_limit(1000);
  while (true) {
    av1::QueryResponse page;
    grpc::Status status = clients.audit->Query(Context(clients, globals).get(), request, &page);
    if (!status.ok()) return CallError(err, status);
    for (const av1::AuditRecord& record : page.records()) {
      if (record.sequence() > since) out << ExportRecordLine(record, format) << "\n";
    }
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  if (inv.GetBool("with_checkpoint")) {
    av1::CheckpointResponse signed_head;
    grpc::Status status = clients.audit->Checkpoint(Context(clients, globals).get(),
                                                    av1::CheckpointRequest(), &signed_head);
    if (!status.ok()) return CallError(err, status);
    out << ExportCheckpointLine(signed_head.checkpoint(), format) << "\n";
  }
  out.flush();
  return kExitOk;
}

// Tail from `since` + 1 with the checkpoints signed meanwhile; an audit log without a
// checkpoint key streams records only (said once on `err`).
int ExportFollow(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                 ExportFormat format, int64_t since, std::ostream& out, std::ostream& err) {
  av1::TailRequest request;
  request.mutable_filter()->set_namespace_id(inv.Get("namespace"));
  request.set_from_sequence(since + 1);
  request.set_include_checkpoints(true);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto context = Context(clients, globals, /*deadline=*/false);
    auto reader = clients.audit->Tail(context.get(), request);
    av1::TailResponse response;
    int64_t lines = 0;
    while (reader->Read(&response)) {
      if (response.has_checkpoint()) {
        out << ExportCheckpointLine(response.checkpoint(), format) << "\n";
      } else if (response.record().sequence() > since) {
        out << ExportRecordLine(response.record(), format) << "\n";
      }
      ++lines;
      out.flush();
    }
    grpc::Status status = reader->Finish();
    if (status.ok()) return kExitOk;
    if (attempt == 0 && lines == 0 &&
        status.error_code() == grpc::StatusCode::FAILED_PRECONDITION &&
        absl::StrContains(status.error_message(), "checkpoint")) {
      err << "sharedosctl: the audit log signs no checkpoints here; exporting records only\n";
      request.set_include_checkpoints(false);
      continue;
    }
    return CallError(err, status);
  }
  return kExitFailed;
}

}  // namespace

int AuditExport(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err) {
  absl::StatusOr<ExportFormat> format = ParseExportFormat(inv.Get("format"));
  if (!format.ok()) return UsageError(err, format.status());
  int64_t since = 0;
  if (inv.Has("since")) {
    absl::StatusOr<int64_t> parsed = ParseInt("since", inv.Get("since"));
    if (!parsed.ok()) return UsageError(err, parsed.status());
    if (*parsed < 0) {
      return UsageError(
          err, absl::InvalidArgumentError("--since: a sequence (0: from the first record)"));
    }
    since = *parsed;
  }
  if (inv.GetBool("follow") && inv.GetBool("with_checkpoint")) {
    return UsageError(err, absl::InvalidArgumentError(
                               "--with_checkpoint: not with --follow (which streams them)"));
  }
  return inv.GetBool("follow") ? ExportFollow(inv, globals, clients, *format, since, out, err)
                               : ExportOnce(inv, globals, clients, *format, since, out, err);
}

int AuditCheckpoint(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err) {
  av1::CheckpointResponse response;
  grpc::Status status = clients.audit->Checkpoint(Context(clients, globals).get(),
                                                  av1::CheckpointRequest(), &response);
  if (!status.ok()) return CallError(err, status);
  if (inv.Has("public_key_out")) {
    std::ofstream key(inv.Get("public_key_out"), std::ios::trunc);
    key << response.public_key_pem();
    if (!key.flush()) {
      return CallError(err, absl::UnavailableError(absl::StrCat("--public_key_out: cannot write ",
                                                                inv.Get("public_key_out"))));
    }
  }
  // One line, the format of --checkpoint_file, so the output can be appended to a file.
  out << (globals.json ? ToJson(response) : ToJson(response.checkpoint(), /*compact=*/true));
  return kExitOk;
}

int AuditWitnessed(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                   std::ostream& out, std::ostream& err) {
  av1::QueryRequest request;
  request.mutable_filter()->set_control_plane_type(
      av1::CONTROL_PLANE_EVENT_TYPE_CHECKPOINT_WITNESSED);
  if (inv.Has("key_id")) {
    const std::string key_id = inv.Get("key_id");
    if (key_id.empty() || key_id.size() > 64) {
      return UsageError(err, absl::InvalidArgumentError("--key_id: 1 to 64 characters"));
    }
    request.mutable_filter()->set_trace_id(audit::core::WitnessTraceId(key_id));
  }
  request.set_limit(1000);
  int64_t printed = 0;
  while (true) {
    av1::QueryResponse page;
    grpc::Status status = clients.audit->Query(Context(clients, globals).get(), request, &page);
    if (!status.ok()) return CallError(err, status);
    for (const av1::AuditRecord& record : page.records()) {
      std::optional<av1::SignedCheckpoint> checkpoint = audit::core::WitnessedCheckpointOf(record);
      if (!checkpoint) continue;
      out << audit::core::CheckpointLogLine(*checkpoint) << "\n";
      ++printed;
    }
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  if (printed == 0) err << "no witnessed checkpoint\n";
  return kExitOk;
}

}  // namespace sharedos::sharedosctl
