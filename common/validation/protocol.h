// Strict validation of every protocol "1" object (semantics §1, §6.11;
// architecture §5).
//
// Each Validate<Type>(msg, path) first rejects unknown fields anywhere in the
// tree, then normalises `*msg` in place (trims Identifier, Purpose, Action and
// reason strings, as the reference's schemas do) and checks every bound. It
// returns OK or the first problem found as INVALID_ARGUMENT "<path>.<field
// path>: <problem>", for example
//   context.purpose: longer than 512
//   request.version: must be "1"
//   grant.capabilities[0].scope: unspecified
//   call.tool: empty
//   request.context.actor: unknown field 9
// Problems: "unknown field N", "required" (absent message), "empty", "longer
// than N", "more than N" (repeated), "invalid UTF-8", "unspecified" / "unknown
// value N" (enums), "must be \"1\"", "duplicate \"x\"", and field-specific
// text. On error `*msg` may be partly normalised. A null `msg` is "<path>:
// required". Functions are thread-safe for distinct messages.
//
// Presence: proto3 scalars without `optional` cannot be absent, so an empty
// optional string (parent_grant_id, reply_to, AuditEvent.action, …) means
// absent, while "  " is rejected. A required message field (Address, Timestamp,
// constraints, input_schema, arguments, the JSON payloads) must be set, even to
// an empty message: the reference rejects a missing one.

#ifndef SHAREDOS_COMMON_VALIDATION_PROTOCOL_H_
#define SHAREDOS_COMMON_VALIDATION_PROTOCOL_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/validation/bounds.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/context.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/message.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::common::validation {

// ---- common.proto ----

// Exactly one kind set ("no kind set"); its id an Identifier.
absl::Status ValidateAddress(::sharedos::protocol::v1::Address* address, const PathRef& path);
// namespace Identifier; path ≤ 64 segments, each a path segment; owner valid
// when present.
absl::Status ValidateResourceRef(::sharedos::protocol::v1::ResourceRef* ref, const PathRef& path);
// resource required; actions 1..64, each an Action; scope set.
absl::Status ValidateCapability(::sharedos::protocol::v1::Capability* capability,
                                const PathRef& path);
// purposes ≤ 64 (empty = absent), each a Purpose; timestamps valid; not_before
// ≤ expires_at; max_uses > 0 and delegation_depth ≥ 0 when present.
absl::Status ValidateCapabilityConstraints(
    ::sharedos::protocol::v1::CapabilityConstraints* constraints, const PathRef& path);
// resource required; action an Action.
absl::Status ValidateCapabilityRequirement(
    ::sharedos::protocol::v1::CapabilityRequirement* requirement, const PathRef& path);
// code Identifier; message 1..4096 (not trimmed); details JSON.
absl::Status ValidateProtocolError(::sharedos::protocol::v1::ProtocolError* error,
                                   const PathRef& path);

// ---- context.proto ----

// namespace_id, actor, authority, owner, purpose, trace_id, now required;
// enabled_tool_namespaces ≤ 256 unique Identifiers.
absl::Status ValidateAccessContext(::sharedos::protocol::v1::AccessContext* context,
                                   const PathRef& path);

// ---- grant.proto ----

// id, namespace_id, subject, issuer, capabilities 1..64, constraints (may be
// empty) and issued_at required; revoked_at valid; parent_grant_id an
// Identifier ≠ id when set.
absl::Status ValidateCapabilityGrant(::sharedos::protocol::v1::CapabilityGrant* grant,
                                     const PathRef& path);
// id, namespace_id, requester, owner, capabilities 1..64, purpose, requested_at
// required; constraints valid when present.
absl::Status ValidateCapabilityRequest(::sharedos::protocol::v1::CapabilityRequest* request,
                                       const PathRef& path);
// reason_code Identifier; matched_grant_id and required_authority valid when
// present.
absl::Status ValidateAuthorizationDecision(
    ::sharedos::protocol::v1::AuthorizationDecision* decision, const PathRef& path);
// reason trimmed 1..512; reviewer, requested_at required; status set;
// requested_authority valid when present.
absl::Status ValidateEscalation(::sharedos::protocol::v1::Escalation* escalation,
                                const PathRef& path);
// namespace Identifier; path segments; actions 1..64; scope set.
absl::Status ValidateResourceReach(::sharedos::protocol::v1::ResourceReach* reach,
                                   const PathRef& path);
// status set; computed: ≤ 16,384 entries, no reason_code; unavailable: no
// entries, reason_code authority_unavailable | usage_store_unavailable.
absl::Status ValidateReachResult(::sharedos::protocol::v1::ReachResult* result,
                                 const PathRef& path);

// ---- message.proto ----

// source Identifier; parent_ids ≤ 64 Identifiers.
absl::Status ValidateMessageProvenance(::sharedos::protocol::v1::MessageProvenance* provenance,
                                       const PathRef& path);
// version "1"; id; sender, receiver; purpose; payload (JSON) required;
// trace_id; created_at; reply_to and provenance valid when present.
absl::Status ValidateMessageEnvelope(::sharedos::protocol::v1::MessageEnvelope* envelope,
                                     const PathRef& path);

// ---- tool.proto ----

// name a tool name; description 1..8192; namespace, source Identifiers;
// read_write set; input_schema and required_capability required; a read tool is
// not destructive, a write tool not read_only.
absl::Status ValidateToolDefinition(::sharedos::protocol::v1::ToolDefinition* tool,
                                    const PathRef& path);
// name a tool name; description 1..8192; input_schema required; metadata ids
// valid.
absl::Status ValidatePublishedToolDefinition(
    ::sharedos::protocol::v1::PublishedToolDefinition* tool, const PathRef& path);
// version "1"; execution_id; catalog_hash 64 lowercase hex; ≤ 512 tools, names
// unique and sorted ascending by code unit.
absl::Status ValidateToolCatalog(::sharedos::protocol::v1::ToolCatalog* catalog,
                                 const PathRef& path);
// id; tool an Identifier (deliberately not a tool name); arguments required;
// trace_id; requested_at.
absl::Status ValidateToolCall(::sharedos::protocol::v1::ToolCall* call, const PathRef& path);
// call_id; tool; status set; output iff succeeded; error iff denied or failed;
// completed_at required.
absl::Status ValidateToolResult(::sharedos::protocol::v1::ToolResult* result, const PathRef& path);

// ---- execution.proto ----

// max_steps 1..1000, max_tool_calls 1..10000, timeout_ms 1..600000, each when
// present.
absl::Status ValidateExecutionOptions(::sharedos::protocol::v1::ExecutionOptions* options,
                                      const PathRef& path);
// version "1"; execution_id; agent an agent address; context and message
// required and valid; tools ≤ 512 tool names; state, metadata JSON; options
// valid when present. (agent = context.actor = message.receiver is a turn
// denial, not a schema check.)
absl::Status ValidateExecutionRequest(::sharedos::protocol::v1::ExecutionRequest* request,
                                      const PathRef& path);
// version "1"; event_id, execution_id, trace_id; sequence ≥ 0; type
// trimmed 1..128; data (JSON) and occurred_at required.
absl::Status ValidateExecutionEvent(::sharedos::protocol::v1::ExecutionEvent* event,
                                    const PathRef& path);
// version "1"; execution_id, trace_id; status set; outcome consistent with
// status (succeeded: output; denied, failed: error; escalated: escalation;
// cancelled: error or nothing); events valid; started_at, completed_at
// required.
absl::Status ValidateExecutionResult(::sharedos::protocol::v1::ExecutionResult* result,
                                     const PathRef& path);
// id, version Identifiers; protocol_version "1".
absl::Status ValidateRuntimeManifest(::sharedos::protocol::v1::RuntimeManifest* manifest,
                                     const PathRef& path);

// ---- audit.proto ----

// version "1"; id; type, outcome set; at; trace_id, namespace_id; actor,
// authority, owner; purpose; optional ids Identifiers when set; resource,
// receiver, requested_authority valid when present; source, ended_by set when
// present.
absl::Status ValidateAuditEvent(::sharedos::protocol::v1::AuditEvent* event, const PathRef& path);

}  // namespace sharedos::common::validation

#endif  // SHAREDOS_COMMON_VALIDATION_PROTOCOL_H_
