#include "common/server/access_policy.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharedos::common::server {
namespace {

// Row shorthands, so the table below reads as a table.
Access Admin(Rule rule) { return {Role::kAdmin, rule, {}}; }
Access Host(Rule rule) { return {Role::kHost, rule, {}}; }
Access Reviewer(Rule rule) { return {Role::kReviewer, rule, {}}; }
Access Services(std::vector<std::string> services) {
  return {Role::kService, Rule::kService, std::move(services)};
}
const std::string kAuthorizer(kAuthorizerService);
const std::string kEnvelope(kEnvelopeService);
const std::string kGrantstore(kGrantstoreService);
const std::string kAudit(kAuditService);
// The reviewer console run as its own process (console/console_main.cc): it only looks up the
// credentials people sign in with; every page calls the services with the person's own.
const std::string kConsole("service:console");

constexpr char kAuditLog[] = "sharedos.audit.v1.AuditLog/";
constexpr char kGrantStore[] = "sharedos.grantstore.v1.GrantStore/";
constexpr char kAuthorizerApi[] = "sharedos.authorizer.v1.Authorizer/";
constexpr char kEnvelopeApi[] = "sharedos.envelope.v1.Envelope/";
constexpr char kRoutes[] = "sharedos.envelope.v1.MessageRoutes/";
constexpr char kPeerTransport[] = "sharedos.envelope.v1.MessageTransport/";
constexpr char kStatus[] = "sharedos.status.v1.Status/";

// THE POLICY. A row per RPC (and console page): who may call it, and on what.
std::vector<MethodPolicy> BuildTable() {
  const Access administers = Admin(Rule::kAdministers);
  const Access operator_only = Admin(Rule::kOperator);
  const Access host_of = Host(Rule::kHostOf);
  const Access addressee = Reviewer(Rule::kAddressee);
  auto rpc = [](const char* service, const char* method) { return absl::StrCat(service, method); };
  return {
      // --- grantstore_svc, control plane: operators of the grant's namespace ---------------------
      {rpc(kGrantStore, "IssueGrant"), {administers}, "grant.namespace_id"},
      {rpc(kGrantStore, "DeriveGrant"), {administers}, "namespace_id"},
      {rpc(kGrantStore, "RevokeGrant"), {administers}, "namespace_id"},
      {rpc(kGrantStore, "GetGrant"), {administers}, "namespace_id"},
      {rpc(kGrantStore, "ListGrants"), {administers}, "filter.namespace_id"},
      {rpc(kGrantStore, "PutHostPolicy"), {administers}, "policy.namespace_id"},
      {rpc(kGrantStore, "GetHostPolicy"), {administers}, "namespace_id"},
      // Escalations: each record judged on its namespace and its owner (the reviewer it is
      // addressed to); a host reads only the status of those its scope covers.
      {rpc(kGrantStore, "ListEscalations"),
       {administers, addressee, host_of},
       "namespace_id, then each escalation (namespace, reviewer)"},
      {rpc(kGrantStore, "GetEscalation"),
       {administers, addressee, host_of},
       "the escalation (namespace, reviewer); out of reach: NOT_FOUND"},
      {rpc(kGrantStore, "ResolveEscalation"),
       {addressee, administers},
       "the escalation (namespace, reviewer); an admin only on_behalf_of_reviewer"},
      // Credentials: an admin manages those wholly within its namespaces (host and reviewer
      // roles); admin and service credentials, and those with no namespace, only the operator.
      // Anyone may rotate the credential it authenticated with (its secret then set by itself).
      {rpc(kGrantStore, "IssueCredential"), {administers}, "scope.namespaces (each)"},
      {rpc(kGrantStore, "ListCredentials"), {administers}, "each credential's namespaces"},
      {rpc(kGrantStore, "RevokeCredential"), {administers}, "the credential's namespaces"},
      {rpc(kGrantStore, "RotateCredential"),
       {administers, Admin(Rule::kSelf), Host(Rule::kSelf), Reviewer(Rule::kSelf)},
       "the credential's namespaces; never a human's reviewer credential but by itself"},
      // A store restored behind the audit log is accepted by the operator alone (docs/adr/0021).
      {rpc(kGrantStore, "AcceptRestore"), {operator_only}, "the whole store"},
      // --- grantstore_svc, data plane: the authorizer (and credential lookups) ----------------
      {rpc(kGrantStore, "LoadAuthority"), {Services({kAuthorizer})}, ""},
      {rpc(kGrantStore, "ResolveGrant"), {Services({kAuthorizer})}, ""},
      {rpc(kGrantStore, "TryConsume"), {Services({kAuthorizer})}, ""},
      // How many uses a bounded grant has spent: the authorizer's, and its namespace's admins'.
      {rpc(kGrantStore, "GetUsage"), {Services({kAuthorizer}), administers}, "namespace_id"},
      {rpc(kGrantStore, "CheckRevocations"), {Services({kAuthorizer})}, ""},
      {rpc(kGrantStore, "RecordEscalation"), {Services({kAuthorizer})}, ""},
      {rpc(kGrantStore, "AuthenticateCredential"),
       {Services({kAuthorizer, kEnvelope, kAudit, kConsole})},
       ""},
      // --- audit_svc: writers append (each only its own record types, audit_svc/core
      // writer_policy.h); operators read ------------------------------------------------------
      {rpc(kAuditLog, "Append"), {Services({kAuthorizer, kEnvelope, kGrantstore})}, "writer"},
      // The grant store reads its own control-plane records back (docs/adr/0021): only with
      // filter.control_plane_type set (audit_svc/server/audit_service.cc).
      {rpc(kAuditLog, "Query"),
       {administers, Services({kGrantstore})},
       "filter.namespace_id; service:grantstore: control-plane records only"},
      {rpc(kAuditLog, "Tail"), {administers}, "filter.namespace_id"},
      {rpc(kAuditLog, "Verify"), {operator_only}, "the whole chain"},
      {rpc(kAuditLog, "Checkpoint"), {operator_only}, "the whole chain"},
      // --- authorizer_svc: the envelope ---------------------------------------------------------
      {rpc(kAuthorizerApi, "OpenTurnAuthority"), {Services({kEnvelope})}, ""},
      {rpc(kAuthorizerApi, "CloseTurnAuthority"), {Services({kEnvelope})}, ""},
      {rpc(kAuthorizerApi, "Authorize"), {Services({kEnvelope})}, ""},
      {rpc(kAuthorizerApi, "Discover"), {Services({kEnvelope})}, ""},
      {rpc(kAuthorizerApi, "AdmitTurn"), {Services({kEnvelope})}, ""},
      {rpc(kAuthorizerApi, "Reach"), {Services({kEnvelope})}, ""},
      {rpc(kAuthorizerApi, "RecordEscalation"), {Services({kEnvelope})}, ""},
      // --- envelope_svc: hosts, within the turn's namespace, owner and authority --------------
      {rpc(kEnvelopeApi, "OpenTurn"), {host_of}, "execution_request.context"},
      {rpc(kEnvelopeApi, "InvokeTool"), {host_of}, "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "FinishTurn"), {host_of}, "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "CancelTurn"), {host_of}, "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "GetTurn"), {host_of}, "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "WatchTurn"), {host_of}, "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "SendMessage"), {host_of}, "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "InvokeResource"),
       {host_of},
       "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "ListToolNamespaces"),
       {host_of},
       "the turn's context; out of reach: NOT_FOUND"},
      {rpc(kEnvelopeApi, "UpdateToolNamespaces"),
       {host_of},
       "the turn's context; out of reach: NOT_FOUND"},
      // The built-in transport's host side: a world's messages and routes, each of one owner
      // (the sending turn's).
      {rpc(kRoutes, "Receive"), {host_of}, "namespace_id, owner (each message's)"},
      {rpc(kRoutes, "RevokeRoute"), {host_of}, "namespace_id, owner (the route's)"},
      // Envelope replicas to each other (ADR 0013).
      {rpc(kPeerTransport, "Send"), {Services({kEnvelope})}, ""},
      {rpc(kPeerTransport, "AwaitReply"), {Services({kEnvelope})}, ""},
      // --- every process ------------------------------------------------------------------------
      {rpc(kStatus, "GetStatus"), {operator_only}, "the process"},
      // --- the reviewer console (console/): sign-in, then the pages, each calling the RPCs above
      // with the signed-in credential
      // --------------------------------------------------------------
      {"console sign-in", {Admin(Rule::kSelf), Reviewer(Rule::kSelf)}, "the credential"},
      {"console /queue", {administers, addressee}, "as GrantStore/ListEscalations"},
      {"console /decide", {addressee, administers}, "as GrantStore/ResolveEscalation"},
      {"console /record", {administers}, "as AuditLog/Query (the chain's Verify: the operator)"},
      {"console /turn", {administers}, "as AuditLog/Query"},
      {"console /explain",
       {administers, addressee},
       "as GrantStore/GetEscalation (an escalation) or AuditLog/Query (a record)"},
  };
}

const absl::flat_hash_map<std::string, const MethodPolicy*>& Index() {
  static const auto* index = [] {
    auto* map = new absl::flat_hash_map<std::string, const MethodPolicy*>();
    for (const MethodPolicy& row : AccessTable()) map->emplace(row.method, &row);
    return map;
  }();
  return *index;
}

// The caller's Access row for `method`, or null.
const Access* AccessOf(const MethodPolicy& policy, const Principal& caller) {
  for (const Access& access : policy.access) {
    if (access.role != caller.role) continue;
    if (access.rule == Rule::kService) {
      for (const std::string& service : access.services) {
        if (service == caller.address) return &access;
      }
      continue;
    }
    return &access;
  }
  return nullptr;
}

absl::Status Denied(absl::string_view method, const Principal& caller) {
  return absl::PermissionDeniedError(absl::StrCat("a ", RoleName(caller.role), " credential (",
                                                  caller.address, ") may not call ", method));
}

// `rule` against `target`; an empty answer when met, else what lies outside.
std::string Outside(Rule rule, const Principal& caller, const Target& target) {
  const Scope& scope = caller.scope;
  switch (rule) {
    case Rule::kAdministers:
      if (ScopeCovers(scope.namespaces, target.namespace_id)) return "";
      if (target.namespace_id.empty()) {
        return absl::StrCat(
            "namespace_id: required — name one of the namespaces this admin "
            "credential administers (",
            absl::StrJoin(scope.namespaces, ", "), ")");
      }
      return absl::StrCat("namespace \"", target.namespace_id,
                          "\" is not administered by this credential");
    case Rule::kOperator:
      if (std::find(scope.namespaces.begin(), scope.namespaces.end(), "*") !=
          scope.namespaces.end()) {
        return "";
      }
      return "only an admin of every namespace (\"*\") reads the whole chain and the process";
    case Rule::kHostOf:
      if (!ScopeCovers(scope.namespaces, target.namespace_id)) {
        return absl::StrCat("namespace \"", target.namespace_id,
                            "\" is outside this host credential's scope");
      }
      if (!target.owner.empty() && !ScopeCovers(scope.owners, target.owner)) {
        return absl::StrCat("owner \"", target.owner, "\" is outside this host credential's scope");
      }
      if (!target.authority.empty() &&
          !ScopeCovers(scope.authorities.empty() ? scope.owners : scope.authorities,
                       target.authority)) {
        return absl::StrCat("authority \"", target.authority,
                            "\" is outside this host credential's scope (its authorities, or "
                            "without them its owners)");
      }
      return "";
    case Rule::kAddressee:
      if (!ScopeCovers(scope.namespaces, target.namespace_id)) {
        return absl::StrCat("namespace \"", target.namespace_id,
                            "\" is outside this reviewer credential's scope");
      }
      if (target.owner != caller.address) {
        return "the escalation is addressed to another reviewer";
      }
      return "";
    case Rule::kSelf:
    case Rule::kService:
      return "";
  }
  return "unknown rule";
}

}  // namespace

const std::vector<MethodPolicy>& AccessTable() {
  static const auto* table = new std::vector<MethodPolicy>(BuildTable());
  return *table;
}

const MethodPolicy* PolicyFor(absl::string_view method) {
  // absl's string-keyed map looks a string_view up as it is: no key string built per call.
  auto it = Index().find(method);
  return it == Index().end() ? nullptr : it->second;
}

absl::Status Admit(absl::string_view method, const Principal& caller) {
  const MethodPolicy* policy = PolicyFor(method);
  if (policy == nullptr || AccessOf(*policy, caller) == nullptr) return Denied(method, caller);
  return absl::OkStatus();
}

absl::Status CheckTarget(absl::string_view method, const Principal& caller, const Target& target) {
  const MethodPolicy* policy = PolicyFor(method);
  if (policy == nullptr) return Denied(method, caller);
  // A role may hold several rows (e.g. an admin's own-credential and namespace rows): any met.
  std::string outside;
  bool admitted = false;
  for (const Access& access : policy->access) {
    if (access.role != caller.role) continue;
    if (access.rule == Rule::kService && std::find(access.services.begin(), access.services.end(),
                                                   caller.address) == access.services.end()) {
      continue;
    }
    admitted = true;
    std::string why = Outside(access.rule, caller, target);
    if (why.empty()) return absl::OkStatus();
    if (outside.empty()) outside = std::move(why);
  }
  if (!admitted) return Denied(method, caller);
  return absl::PermissionDeniedError(outside);
}

bool MayReach(absl::string_view method, const Principal& caller, const Target& target) {
  return CheckTarget(method, caller, target).ok();
}

bool HostCovers(const Scope& scope, const Target& target) {
  Principal host;
  host.role = Role::kHost;
  host.scope = scope;
  return Outside(Rule::kHostOf, host, target).empty();
}

}  // namespace sharedos::common::server
