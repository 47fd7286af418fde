#include "tools/sharedosctl/requests.h"

#include <utility>

#include "tools/sharedosctl/names.h"

namespace sharedos::sharedosctl {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;

}  // namespace

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
    auto type = ParseRecordType(inv.Get("type"), filter);
    if (!type.ok()) return type.status();
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
  // The decider is the credential's principal; --reviewer, when given, must name it.
  if (inv.Has("reviewer")) {
    auto reviewer = ParseAddress(inv.Get("reviewer"));
    if (!reviewer.ok()) return reviewer.status();
    *request.mutable_reviewer() = *reviewer;
  }
  request.set_on_behalf_of_reviewer(inv.Has("on_behalf"));
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
  // Sent as given; the grant store bounds it (INVALID_ARGUMENT "note: ...").
  request.set_note(inv.Get("note"));
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

}  // namespace sharedos::sharedosctl
