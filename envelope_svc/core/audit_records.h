// The audit records envelope_svc writes itself (semantics §5.1–§5.2, seed ADR 0023): the
// catalogue listing (pre-effect), a discovery denial's decision at invocation (pre-effect),
// tool.invoked for every call — source kernel for mediation, source envelope for the turn
// layer's refusals — and turn.ended (post-effect). Every record is stamped from the turn's
// trusted context; none ever carries arguments, results, payloads or provider text.
// Stateless; thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_AUDIT_RECORDS_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_AUDIT_RECORDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core {

// What one tool.invoked record states.
struct ToolInvokedFacts {
  protocol::v1::AuditSource source = protocol::v1::AUDIT_SOURCE_KERNEL;
  // The call's result status (its outcome: succeeded, denied or failed).
  protocol::v1::ToolResultStatus status = protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED;
  // The code the caller was given (empty when it succeeded).
  std::string reason;
  // The specific situation behind a coarse reason (not_offered, not_registered, …).
  std::string cause;
  bool fail_closed = false;
  // The matched (or overridden / exhausted) grant.
  std::string grant_id;
  // The requirement decided on, when one was (resource and action).
  std::optional<protocol::v1::CapabilityRequirement> requirement;
  std::string authority_hash;
  // metadata.catalogHash (ADR 0026).
  std::string catalog_hash;
};

// A record of `type` and `outcome` stamped from `context` (version "1", trace, namespace, actor,
// authority, owner, purpose) at `at`; the writer mints its id.
protocol::v1::AuditEvent StampedEvent(const protocol::v1::AccessContext& context, absl::Time at,
                                      protocol::v1::AuditEventType type,
                                      protocol::v1::AuditOutcome outcome);

// tool.invoked (post-effect): operation_id = the call id, tool = the call's tool name, `at` the
// operation instant.
protocol::v1::AuditEvent ToolInvokedEvent(const protocol::v1::AccessContext& context, absl::Time at,
                                          const protocol::v1::ToolCall& call,
                                          const ToolInvokedFacts& facts);

// What the turn's catalogue listing states (tool.catalog.listed, pre-effect, source kernel).
struct CatalogListedFacts {
  // succeeded, or denied when the listing itself failed closed (authority unavailable).
  protocol::v1::AuditOutcome outcome = protocol::v1::AUDIT_OUTCOME_SUCCEEDED;
  std::string authority_hash;
  std::string catalog_hash;
  int withheld_count = 0;
  std::optional<std::string> host_policy_version;
  // Something was withheld by an outage rather than by a decision.
  bool fail_closed = false;
  // On a failed listing: authority_unavailable.
  std::string reason;
};

// tool.catalog.listed: fields authorityHash, source kernel, failClosed?, reason?; metadata
// {catalogHash, enabledNamespaces (the context's list), hostPolicyVersion?, withheldCount}.
// Identifiers and a count, never tool names.
protocol::v1::AuditEvent CatalogListedEvent(const protocol::v1::AccessContext& context,
                                            absl::Time at, const CatalogListedFacts& facts);

// authorization.checked for a discovery denial at invocation (semantics §3.9 step 6): the
// declared ceiling's resource and action, consumed false, the denial's reason, operation_id =
// the call id, tool, failClosed for an infrastructure code. Immediately precedes the call's
// tool.invoked (tool_unavailable, cause = this reason).
protocol::v1::AuditEvent DiscoveryDeniedEvent(const protocol::v1::AccessContext& context,
                                              absl::Time at,
                                              const protocol::v1::CapabilityRequirement& ceiling,
                                              absl::string_view call_id, absl::string_view tool,
                                              absl::string_view reason, bool fail_closed,
                                              absl::string_view authority_hash);

// turn.ended (post-effect, no source): outcome = the result's status except cancelled →
// failed with reason turn_cancelled; reason = the terminal code (escalation_requested for an
// escalated turn, none for a succeeded one); ended_by on failed (and cancelled) turns;
// failClosed when `fail_closed` (the verdict that ended the turn, carried by its Settlement;
// never derived from the code); operation_id = the execution id; `at` = completed_at.
// A turn whose MCP escalation latch engaged (its metadata has escalationAsked) also records
// metadata harnessOutcome, harnessErrorCode?, callsAfterEscalation, escalationRequirement? and
// escalationRecorded? (docs/adr/0018), never the harness's reason text.
protocol::v1::AuditEvent TurnEndedEvent(const protocol::v1::AccessContext& context,
                                        const protocol::v1::ExecutionResult& result,
                                        std::optional<protocol::v1::EndedBy> ended_by,
                                        bool fail_closed);

}  // namespace sharedos::envelope::core

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_AUDIT_RECORDS_H_
