#include "tools/sharedosctl/audit_commands.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/status/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/export.h"
#include "tools/sharedosctl/names.h"
#include "tools/sharedosctl/render.h"
#include "tools/sharedosctl/requests.h"

namespace sharedos::sharedosctl {
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

// Verify against the checkpoints of --checkpoint, in calls of at most kCheckpointsPerCall; the
// answer of the first call that fails, or of the last.
absl::StatusOr<av1::VerifyResponse> VerifyCheckpoints(const Invocation& inv,
                                                      const GlobalOptions& globals,
                                                      const Clients& clients) {
  ASSIGN_OR_RETURN(std::vector<av1::SignedCheckpoint> checkpoints,
                   ReadCheckpointFile(inv.Get("checkpoint")));
  av1::VerifyRequest request;
  if (inv.Has("checkpoint_public_key")) {
    ASSIGN_OR_RETURN(
        *request.mutable_checkpoint_public_key_pem(),
        ReadSmallFile("checkpoint_public_key", inv.Get("checkpoint_public_key"), 64 * 1024));
  }
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
    if (!response.ok()) break;
  }
  response.set_checkpoints_verified(verified);
  return response;
}

}  // namespace

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
  if (inv.Has("checkpoint")) {
    if (request->has_from_sequence() || request->has_to_sequence()) {
      return UsageError(err, absl::InvalidArgumentError(
                                 "--checkpoint: not with --from or --to (the whole chain)"));
    }
    absl::StatusOr<av1::VerifyResponse> checked = VerifyCheckpoints(inv, globals, clients);
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

}  // namespace sharedos::sharedosctl
