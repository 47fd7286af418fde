// "Why was this refused?": `sharedosctl explain <sequence | event id | escalation id>` and the
// reviewer console's explain page. Given a record of the audit log (by sequence or event id) or
// an escalation, it says which boundary refused (source), the reason and cause and what they
// mean, the grants the decision considered and why each did not match (the decision record's
// rejectedGrants, each grant read back when the caller may), the host ceiling and policy and the
// namespace settings that applied, the authority that would have allowed it (the requirement,
// and the escalation's requested authority), and the next step (issue a grant, approve the
// escalation, change the host policy, enable a namespace, raise a budget, the dependency that
// was down).
//
// It reads only through the public RPCs — AuditLog.Tail/Query, GrantStore.GetEscalation,
// GetGrant and GetHostPolicy — with the caller's own credential, so whatever the services refuse
// that caller is refused here too (or, for the details of a decision, shown as not readable).
// Reads are bounded (kMaxTracePages pages of the turn's trace; kMaxScanPages when an event id
// has to be found). Not thread-safe per call; the functions hold no state.
#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_EXPLAIN_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_EXPLAIN_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::client {

// Pages of 1000 records read to gather a turn's records (its trace).
inline constexpr int kMaxTracePages = 5;
// Pages of 1000 records read to find a record by its event id.
inline constexpr int kMaxScanPages = 100;

struct ExplainClients {
  grantstore::v1::GrantStore::StubInterface* grants = nullptr;
  audit::v1::AuditLog::StubInterface* audit = nullptr;
  // A fresh context per call: the caller's credential and deadline.
  std::function<std::unique_ptr<grpc::ClientContext>()> context;
};

// What an explanation says, in order: a title, labelled facts, then the next steps. Values are
// raw (they may hold what an agent or a host chose): renderers escape them.
struct Explanation {
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;
  std::vector<std::string> next_steps;
};

// Explains `id`: all digits — the record at that sequence; "esc-…" — that escalation and the
// denial that led to it; anything else — the record with that event id (or control-plane id).
// Errors: INVALID_ARGUMENT (an empty or over-long id, naming "id"); NOT_FOUND (no such record or
// escalation for this caller); the RPCs' own errors (PERMISSION_DENIED, UNAVAILABLE, …).
absl::StatusOr<Explanation> Explain(const ExplainClients& clients, absl::string_view id);

// A control-plane record of the log (a grant store mutation), explained from the record alone:
// its actor, authority, owner, grant and every metadata field (an escalation.resolved's
// idpIssuer, idpSubject and breakGlass among them). Pure.
Explanation ExplainControlPlaneRecord(const audit::v1::AuditRecord& record);

// As text: "<title>\n", one "  <label>: <value>" line per fact, then "next:" and the steps,
// every label and value through common::text::TerminalSafe.
std::string RenderExplanation(const Explanation& explanation);
// As one JSON object {title, facts: [{label, value}], nextSteps: […]} (--json).
std::string ExplanationJson(const Explanation& explanation);

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_EXPLAIN_H_
