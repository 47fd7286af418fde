// Protocol "1" messages in the reference's JSON shapes (semantics §1): camelCase keys,
// Address as {"kind":"agent","agentId":…}, scope "exact" | "descendants", timestamps as
// RFC 3339 UTC text (FormatRfc3339), optional fields omitted when absent. These shapes are
// what content hashes and deterministic ids are computed over (§10.2–§10.4), never proto bytes.
// Presence: an optional message field counts as present when set (even if empty); an optional
// string (parent_grant_id) or list (purposes) when non-empty; `optional` scalars when set.
// Stateless; thread-safe.

#ifndef SHAREDOS_COMMON_JSON_PROTOCOL_JSON_H_
#define SHAREDOS_COMMON_JSON_PROTOCOL_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/protocol/v1/common.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/grant.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::common {

// "exact" | "descendants"; empty for SCOPE_UNSPECIFIED.
absl::string_view ScopeName(protocol::v1::Scope scope);

// The reference's names of the status enums: "succeeded" | "denied" | "failed" (tool results),
// plus "cancelled" | "escalated" (executions); "unspecified" for UNSPECIFIED.
absl::string_view ToolResultStatusName(protocol::v1::ToolResultStatus status);
absl::string_view ExecutionStatusName(protocol::v1::ExecutionStatus status);

// {"kind":"human","userId"} | {"kind":"agent","agentId"} | {"kind":"group","conversationId"}
// | {"kind":"service","serviceId"}; {} when no kind is set.
nlohmann::json AddressToJson(const protocol::v1::Address& address);

// {namespace, path, owner?}.
nlohmann::json ResourceRefToJson(const protocol::v1::ResourceRef& resource);

// {resource, actions, scope}.
nlohmann::json CapabilityToJson(const protocol::v1::Capability& capability);

// {resource, action}.
nlohmann::json CapabilityRequirementToJson(const protocol::v1::CapabilityRequirement& requirement);

// {namespace, path, actions, scope}.
nlohmann::json ResourceReachToJson(const protocol::v1::ResourceReach& reach);

// The errors below are INVALID_ARGUMENT for a timestamp outside the Timestamp range or JSON a
// Struct cannot be converted from (ProtoStructToJson).

// {purposes?, notBefore?, expiresAt?, maxUses?, delegationDepth?}.
absl::StatusOr<nlohmann::json> CapabilityConstraintsToJson(
    const protocol::v1::CapabilityConstraints& constraints);

// {id, namespaceId, subject, issuer, capabilities, constraints, issuedAt, revokedAt?,
// parentGrantId?, metadata?}; constraints is {} when unset.
absl::StatusOr<nlohmann::json> CapabilityGrantToJson(const protocol::v1::CapabilityGrant& grant);

// CanonicalJson(*CapabilityGrantToJson(grant)), written straight from the message (no JSON
// document in between; a grant's metadata Struct, when present, still goes through one).
// Byte-identical to that path, errors included (canonical_grant_json_test keeps it so).
absl::StatusOr<std::string> CanonicalCapabilityGrantJson(
    const protocol::v1::CapabilityGrant& grant);

// {id, namespaceId, requester, owner, capabilities, purpose, constraints?, requestedAt,
// metadata?}.
absl::StatusOr<nlohmann::json> CapabilityRequestToJson(
    const protocol::v1::CapabilityRequest& request);

// The identity a capreq- id is derived from (semantics §10.2 step 2): {namespaceId, requester,
// owner, capabilities, purpose, constraints?} — never id, requestedAt or metadata.
absl::StatusOr<nlohmann::json> CapabilityRequestIdentityToJson(
    const protocol::v1::CapabilityRequest& request);

// {name, description, inputSchema, outputSchema?, annotations?: {readOnlyHint?,
// destructiveHint?, idempotentHint?, openWorldHint?}, metadata?: {namespace?, source?}}
// (metadata ids when non-empty). An unset inputSchema is {}.
absl::StatusOr<nlohmann::json> PublishedToolDefinitionToJson(
    const protocol::v1::PublishedToolDefinition& tool);

// `publishToolDefinition` (semantics §10.4): name, description, inputSchema, outputSchema
// only if set, annotations {readOnlyHint: declared readOnly, else readWrite == read;
// destructiveHint and idempotentHint only if declared}, metadata {namespace, source}.
// Everything else (the ceiling, grants, handler, tool metadata) is left out.
protocol::v1::PublishedToolDefinition PublishToolDefinition(
    const protocol::v1::ToolDefinition& tool);

// RFC 3339 UTC text of `timestamp`.
// Errors: INVALID_ARGUMENT outside the Timestamp range.
absl::StatusOr<std::string> TimestampToJsonText(const google::protobuf::Timestamp& timestamp);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_JSON_PROTOCOL_JSON_H_
