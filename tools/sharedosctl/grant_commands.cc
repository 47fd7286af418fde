#include "tools/sharedosctl/grant_commands.h"

#include <utility>

#include "common/text/terminal_safe.h"
#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_render.h"
#include "grpcpp/grpcpp.h"
#include "tools/sharedosctl/inputs.h"
#include "tools/sharedosctl/requests.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::FormatTimestamp;
using ::sharedos::grantstore::client::RenderGrant;
using ::sharedos::grantstore::client::RenderGrants;
using ::sharedos::grantstore::client::RenderPolicy;
using ::sharedos::grantstore::client::ToJson;

namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;
namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;
using common::text::TerminalSafe;

}  // namespace

int GrantsIssue(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                std::ostream& out, std::ostream& err) {
  gs::IssueGrantRequest request;
  if (absl::Status loaded = LoadMessageFile(inv.Get("file"), request.mutable_grant());
      !loaded.ok()) {
    return UsageError(err, loaded);
  }
  request.set_idempotency_key(inv.Get("idempotency_key"));
  request.set_any_owner(inv.Has("any_owner"));
  gs::IssueGrantResponse response;
  grpc::Status status =
      clients.grants->IssueGrant(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "issued grant " << TerminalSafe(response.grant().id()) << " at revision "
        << response.revision() << "\n";
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
    err << "sharedosctl: derivation refused: " << TerminalSafe(response.refusal().code()) << "\n";
    return kExitFailed;
  }
  if (!globals.json) {
    out << "derived grant " << TerminalSafe(response.granted().grant().id()) << " from "
        << TerminalSafe(request.parent_grant_id()) << " at revision "
        << response.granted().revision() << "\n";
  }
  return kExitOk;
}

int GrantsAcceptRestore(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                        std::ostream& out, std::ostream& err) {
  gs::AcceptRestoreRequest request;
  request.set_reason(inv.Get("reason"));
  gs::AcceptRestoreResponse response;
  grpc::Status status =
      clients.grants->AcceptRestore(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
    return kExitOk;
  }
  if (!response.accepted()) {
    out << TerminalSafe(response.notice()) << "\n";
    return kExitOk;
  }
  out << "accepted the restore: the store was at revision " << response.restored_revision()
      << ", the audit log at revision " << response.log_revision()
      << "; the acceptance is revision " << response.revision() << " (store.restore_accepted)\n";
  for (const std::string& grant : response.reapplied_grant_revocations()) {
    out << "revoked again: grant " << TerminalSafe(grant) << "\n";
  }
  for (const std::string& credential : response.revoked_credentials()) {
    out << "revoked again: credential " << TerminalSafe(credential) << "\n";
  }
  out << "reason: " << TerminalSafe(request.reason()) << "\n";
  out << TerminalSafe(response.notice()) << "\n";
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
    out << "revoked grant " << TerminalSafe(request.grant_id()) << " at "
        << FormatTimestamp(response.revoked_at()) << " (revision " << response.revision() << ")\n";
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
    out << "host policy of " << TerminalSafe(response.policy().namespace_id()) << " is version "
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
    out << "namespace " << TerminalSafe(request.namespace_id()) << " has no host policy\n";
  }
  return kExitOk;
}

}  // namespace sharedos::sharedosctl
