#include "tools/sharedosctl/credential_commands.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/text/terminal_safe.h"
#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_render.h"
#include "grpcpp/grpcpp.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::FormatAddress;
using ::sharedos::grantstore::client::ParseAddress;
using ::sharedos::grantstore::client::ToJson;

namespace {

namespace gs = ::sharedos::grantstore::v1;

absl::StatusOr<gs::CredentialRole> ParseRole(const std::string& text) {
  if (text == "admin") return gs::CREDENTIAL_ROLE_ADMIN;
  if (text == "host") return gs::CREDENTIAL_ROLE_HOST;
  if (text == "reviewer") return gs::CREDENTIAL_ROLE_REVIEWER;
  if (text == "service") return gs::CREDENTIAL_ROLE_SERVICE;
  return absl::InvalidArgumentError("--role must be admin, host, reviewer or service");
}

std::string RoleText(gs::CredentialRole role) {
  std::string name = gs::CredentialRole_Name(role);
  return absl::AsciiStrToLower(absl::StripPrefix(name, "CREDENTIAL_ROLE_"));
}

// "<id>  <role>  <principal>  namespaces=<…>  owners=<…>  [revoked]"
std::string Line(const gs::Credential& credential) {
  using common::text::TerminalSafe;
  std::string line =
      absl::StrCat(TerminalSafe(credential.credential_id()), "  ", RoleText(credential.role()),
                   "  ", TerminalSafe(FormatAddress(credential.principal())));
  if (credential.scope().namespaces_size() > 0) {
    absl::StrAppend(
        &line, "  namespaces=", TerminalSafe(absl::StrJoin(credential.scope().namespaces(), ",")));
  }
  if (credential.scope().owners_size() > 0) {
    absl::StrAppend(&line,
                    "  owners=", TerminalSafe(absl::StrJoin(credential.scope().owners(), ",")));
  }
  if (credential.has_revoked_at()) absl::StrAppend(&line, "  revoked");
  return line + "\n";
}

// The credential and, once, its secret (JSON: the whole response).
int PrintWithSecret(const gs::Credential& credential, const std::string& secret,
                    const google::protobuf::Message& response, const GlobalOptions& globals,
                    std::ostream& out) {
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "credential " << Line(credential);
    out << "secret: " << secret << "\n";
    out << "(shown once: only its SHA-256 is stored; send it as \"authorization: Bearer <secret>\")"
        << "\n";
  }
  return kExitOk;
}

}  // namespace

absl::StatusOr<gs::IssueCredentialRequest> BuildIssueCredential(const Invocation& inv) {
  gs::IssueCredentialRequest request;
  request.set_credential_id(inv.Get("id"));
  auto role = ParseRole(inv.Get("role"));
  if (!role.ok()) return role.status();
  request.set_role(*role);
  auto principal = ParseAddress(inv.Get("principal"));
  if (!principal.ok()) return principal.status();
  *request.mutable_principal() = *std::move(principal);
  gs::CredentialScope* scope = request.mutable_scope();
  for (const auto& [flag, list] :
       {std::pair<const char*, google::protobuf::RepeatedPtrField<std::string>*>{
            "namespace", scope->mutable_namespaces()},
        {"owner", scope->mutable_owners()},
        {"authority", scope->mutable_authorities()}}) {
    if (!inv.Has(flag)) continue;
    for (absl::string_view value : absl::StrSplit(inv.Get(flag), ',', absl::SkipEmpty())) {
      *list->Add() = std::string(absl::StripAsciiWhitespace(value));
    }
  }
  if (scope->namespaces().empty() && scope->owners().empty() && scope->authorities().empty()) {
    request.clear_scope();
  }
  return request;
}

int CredentialsIssue(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                     std::ostream& out, std::ostream& err) {
  auto request = BuildIssueCredential(inv);
  if (!request.ok()) return UsageError(err, request.status());
  gs::IssueCredentialResponse response;
  grpc::Status status =
      clients.grants->IssueCredential(Context(clients, globals).get(), *request, &response);
  if (!status.ok()) return CallError(err, status);
  return PrintWithSecret(response.credential(), response.secret(), response, globals, out);
}

int CredentialsList(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                    std::ostream& out, std::ostream& err) {
  gs::ListCredentialsRequest request;
  request.set_include_revoked(inv.Has("include_revoked"));
  gs::ListCredentialsResponse all;
  while (true) {
    gs::ListCredentialsResponse page;
    grpc::Status status =
        clients.grants->ListCredentials(Context(clients, globals).get(), request, &page);
    if (!status.ok()) return CallError(err, status);
    for (auto& credential : *page.mutable_credentials()) {
      *all.add_credentials() = std::move(credential);
    }
    if (page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  if (globals.json) {
    out << ToJson(all);
  } else {
    for (const gs::Credential& credential : all.credentials()) out << Line(credential);
  }
  return kExitOk;
}

int CredentialsRevoke(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                      std::ostream& out, std::ostream& err) {
  gs::RevokeCredentialRequest request;
  request.set_credential_id(inv.Get("id"));
  gs::RevokeCredentialResponse response;
  grpc::Status status =
      clients.grants->RevokeCredential(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  if (globals.json) {
    out << ToJson(response);
  } else {
    out << "credential " << Line(response.credential());
  }
  return kExitOk;
}

int CredentialsRotate(const Invocation& inv, const GlobalOptions& globals, const Clients& clients,
                      std::ostream& out, std::ostream& err) {
  gs::RotateCredentialRequest request;
  request.set_credential_id(inv.Get("id"));
  gs::RotateCredentialResponse response;
  grpc::Status status =
      clients.grants->RotateCredential(Context(clients, globals).get(), request, &response);
  if (!status.ok()) return CallError(err, status);
  return PrintWithSecret(response.credential(), response.secret(), response, globals, out);
}

}  // namespace sharedos::sharedosctl
