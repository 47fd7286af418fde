#include "tools/sharedosctl/escalation_commands.h"

#include <string>
#include <utility>

#include "absl/strings/str_split.h"
#include "common/text/terminal_safe.h"
#include "google/protobuf/text_format.h"
#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_render.h"
#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/requests.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::EscalationStatusName;
using ::sharedos::grantstore::client::ParseEscalationStatus;
using ::sharedos::grantstore::client::RenderEscalations;
using ::sharedos::grantstore::client::ToJson;

namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;
using common::text::TerminalSafe;

int EscalationsResolve(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                       std::ostream& out, std::ostream& err, gs::EscalationDecision decision) {
  auto request = BuildResolveEscalation(inv, decision);
  if (!request.ok()) return UsageError(err, request.status());
  gs::ResolveEscalationResponse response;
  grpc::Status status =
      clients.grants->ResolveEscalation(Context(clients, globals).get(), *request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "escalation " << TerminalSafe(response.escalation().escalation_id()) << " is "
        << EscalationStatusName(response.escalation().status());
    if (response.has_grant()) out << "; issued grant " << TerminalSafe(response.grant().id());
    if (!response.escalation().note().empty()) out << "; with a note";
    out << "\n";
  }
  return kExitOk;
}

}  // namespace

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
    if (!response.escalation().note().empty()) {
      // The note's own lines, each indented and escaped: a line of it cannot pass for output.
      out << "\nnote:\n";
      for (absl::string_view line : absl::StrSplit(response.escalation().note(), '\n')) {
        out << "  " << TerminalSafe(line) << "\n";
      }
    }
    // Text format escapes every control and non-ASCII byte of a string (C escapes).
    std::string text;
    google::protobuf::TextFormat::PrintToString(response.escalation().escalation(), &text);
    out << "\n" << text;
  }
  return kExitOk;
}

int EscalationsApprove(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                       std::ostream& out, std::ostream& err) {
  return EscalationsResolve(inv, globals, clients, out, err, gs::ESCALATION_DECISION_APPROVE);
}

int EscalationsDeny(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err) {
  return EscalationsResolve(inv, globals, clients, out, err, gs::ESCALATION_DECISION_DENY);
}

}  // namespace sharedos::sharedosctl
