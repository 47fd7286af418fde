#include "grantstore_svc/client/operator_requests.h"

#include <cstdint>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grantstore_svc/client/operator_names.h"

namespace sharedos::grantstore::client {
namespace {

namespace gs = ::sharedos::grantstore::v1;
namespace av1 = ::sharedos::audit::v1;

}  // namespace

absl::StatusOr<av1::AuditFilter> BuildAuditFilter(const AuditFilterFields& fields) {
  av1::AuditFilter filter;
  filter.set_namespace_id(fields.namespace_id);
  filter.set_trace_id(fields.trace);
  filter.set_execution_id(fields.execution);
  filter.set_reason(fields.reason);
  if (!fields.type.empty()) {
    auto type = ParseRecordType(fields.type, filter);
    if (!type.ok()) return type.status();
  }
  if (!fields.outcome.empty()) {
    auto outcome = ParseAuditOutcome(fields.outcome);
    if (!outcome.ok()) return outcome.status();
    filter.set_outcome(*outcome);
  }
  if (!fields.source.empty()) {
    auto source = ParseAuditSource(fields.source);
    if (!source.ok()) return source.status();
    filter.set_source(*source);
  }
  if (!fields.actor.empty()) {
    auto actor = ParseAddress(fields.actor);
    if (!actor.ok()) return actor.status();
    *filter.mutable_actor() = *std::move(actor);
  }
  if (!fields.since.empty()) {
    auto since = ParseTimestamp(fields.since);
    if (!since.ok()) return since.status();
    *filter.mutable_from() = *since;
  }
  if (!fields.until.empty()) {
    auto until = ParseTimestamp(fields.until);
    if (!until.ok()) return until.status();
    *filter.mutable_to() = *until;
  }
  return filter;
}

absl::StatusOr<gs::ResolveEscalationRequest> BuildResolveEscalation(
    const ResolveEscalationFields& fields, gs::EscalationDecision decision) {
  gs::ResolveEscalationRequest request;
  request.set_escalation_id(fields.id);
  request.set_decision(decision);
  // The decider is the credential's principal; a reviewer, when given, must name it.
  if (!fields.reviewer.empty()) {
    auto reviewer = ParseAddress(fields.reviewer);
    if (!reviewer.ok()) return reviewer.status();
    *request.mutable_reviewer() = *reviewer;
  }
  request.set_on_behalf_of_reviewer(fields.on_behalf);
  if (!fields.expires_at.empty()) {
    auto expires_at = ParseTimestamp(fields.expires_at);
    if (!expires_at.ok()) return expires_at.status();
    *request.mutable_narrowing()->mutable_expires_at() = *expires_at;
  }
  if (!fields.max_uses.empty()) {
    int64_t max_uses = 0;
    if (!absl::SimpleAtoi(fields.max_uses, &max_uses)) {
      return absl::InvalidArgumentError(absl::StrCat(fields.field_prefix, "max_uses: \"",
                                                     fields.max_uses, "\" is not an integer"));
    }
    if (max_uses < 1) {
      return absl::InvalidArgumentError(absl::StrCat(fields.field_prefix, "max_uses must be >= 1"));
    }
    request.mutable_narrowing()->set_max_uses(max_uses);
  }
  request.set_grant_id(fields.grant_id);
  request.set_note(fields.note);
  return request;
}

}  // namespace sharedos::grantstore::client
