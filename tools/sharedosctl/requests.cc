#include "tools/sharedosctl/requests.h"

#include <utility>

#include "grantstore_svc/client/operator_names.h"
#include "grantstore_svc/client/operator_requests.h"

namespace sharedos::sharedosctl {

using ::sharedos::grantstore::client::ParseAddress;

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
  grantstore::client::AuditFilterFields fields;
  fields.namespace_id = inv.Get("namespace");
  fields.trace = inv.Get("trace");
  fields.execution = inv.Get("execution");
  fields.reason = inv.Get("reason");
  fields.type = inv.Get("type");
  fields.outcome = inv.Get("outcome");
  fields.source = inv.Get("source");
  fields.actor = inv.Get("actor");
  fields.since = inv.Get("since");
  fields.until = inv.Get("until");
  return grantstore::client::BuildAuditFilter(fields);
}

absl::StatusOr<gs::ResolveEscalationRequest> BuildResolveEscalation(
    const Invocation& inv, gs::EscalationDecision decision) {
  grantstore::client::ResolveEscalationFields fields;
  fields.id = inv.Get("id");
  fields.reviewer = inv.Get("reviewer");
  fields.on_behalf = inv.Has("on_behalf");
  fields.expires_at = inv.Get("expires_at");
  fields.max_uses = inv.Get("max_uses");
  fields.grant_id = inv.Get("grant_id");
  fields.note = inv.Get("note");
  fields.field_prefix = "--";
  return grantstore::client::BuildResolveEscalation(fields, decision);
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
