#include "tools/sharedosctl/audit_commands.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/names.h"
#include "tools/sharedosctl/render.h"
#include "tools/sharedosctl/requests.h"

namespace sharedos::sharedosctl {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;

}  // namespace

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

}  // namespace sharedos::sharedosctl
