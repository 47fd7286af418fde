// The audit events authorizer_svc writes (semantics §5.2, "newest rule: kernel-stated facts are
// fields"): authority.resolved and authorization.checked (pre-effect) and escalation.requested
// (post-effect). Each is stamped from the trusted context; the writer adds version and id.
// Pure functions; thread-safe.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_AUDIT_RECORDS_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_AUDIT_RECORDS_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "authorizer_svc/core/capability_authorizer.h"
#include "authorizer_svc/core/host_policy.h"
#include "authorizer_svc/core/resolved_authority.h"
#include "capability/reason_codes.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"

namespace sharedos::authorizer::core {

// The outcome of one authority load, as authority.resolved records it.
struct ResolutionFacts {
  // Set when resolved.
  const AuthoritySnapshot* snapshot = nullptr;
  // When not resolved: the internal code (authority_unavailable is what callers see).
  capability::AuthorityCode code = capability::AuthorityCode::kGrantSourceFailed;
  // How the host policy came out; nullopt when the store did not answer at all.
  std::optional<HostPolicyState::Status> host_policy;
};

// authority.resolved: succeeded {authorityHash; metadata grantIds, grantCount} or failed
// {reason authority_unavailable, failClosed; metadata authority = internal code}; metadata
// hostCeiling "installed"|"absent" and hostPolicy "loaded"|"unavailable"|"absent" when the store
// answered, and turnId (the lease's turn) when there is one. `at` = context.now.
protocol::v1::AuditEvent AuthorityResolvedEvent(const protocol::v1::AccessContext& context,
                                                absl::string_view turn_id,
                                                const ResolutionFacts& facts);

// One decision as the caller receives it, with what only the host may see.
struct Verdict {
  protocol::v1::AuthorizationDecision decision;
  bool fail_closed = false;
  // A bounded use was spent.
  bool consumed = false;
  // Invocation denials only.
  std::optional<AuthorizationExplanation> explanation;
};

// The Verdict of a core result (the agent-facing decision, fail_closed, explanation).
Verdict VerdictOf(AuthorizationResult result);
// A fail-closed denial with `code` (audit_unavailable, or authority_unavailable with the
// internal code in metadata `authority`).
Verdict FailClosedVerdict(absl::string_view code,
                          std::optional<capability::AuthorityCode> authority);

// What an authorization.checked record is about.
struct CheckFacts {
  const protocol::v1::AccessContext* context = nullptr;
  const protocol::v1::CapabilityRequirement* requirement = nullptr;
  // Empty when the authority is unavailable (relaxed for fail-closed decisions, §5.4).
  absl::string_view authority_hash;
  // The operation instant (the admission instant when the caller gave none).
  google::protobuf::Timestamp at;
  absl::string_view operation_id;
  absl::string_view tool;
  // "reserved" when the decision allows on a bounded grant whose use is spent only after this
  // record is durable (ADR 0029's order; consumed stays false on the record).
  absl::string_view usage_state;
  // Set when this record replaces a reservation that was not honoured (the use went to a
  // concurrent caller, or the counter failed): the grant whose reservation is released.
  absl::string_view released_grant_id;
};

// authorization.checked: outcome allowed|denied; fields resource, action, authorityHash,
// operationId, tool, grantId, reason (denials), consumed, failClosed (infrastructure denials
// only), source kernel; metadata = the decision's metadata (delegation {code, grantId},
// hostPolicy {ruleId, version}, authority {code}) plus the explanation (grantsResolved,
// rejectedGrants [{grantId, reason}], missingDependency) and usageState / releasedGrantId.
protocol::v1::AuditEvent AuthorizationCheckedEvent(const CheckFacts& facts, const Verdict& verdict);

// escalation.requested: outcome escalated, reason escalation_requested, requestedAuthority
// when asked; metadata {detail: reason, reviewer, reviewerAssumed: true, resolution: "pending",
// executionId, escalationId}. `at` = the escalation's requested_at.
protocol::v1::AuditEvent EscalationRequestedEvent(const protocol::v1::AccessContext& context,
                                                  const protocol::v1::Escalation& escalation,
                                                  absl::string_view execution_id,
                                                  absl::string_view escalation_id);

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_AUDIT_RECORDS_H_
