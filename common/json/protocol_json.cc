#include "common/json/protocol_json.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/json/canonical_json.h"
#include "common/json/proto_json.h"
#include "common/status/status_macros.h"
#include "common/time/proto_time.h"
#include "common/time/rfc3339.h"

namespace sharedos::common {
namespace {

using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::Capability;
using ::sharedos::protocol::v1::CapabilityConstraints;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::CapabilityRequest;
using Json = nlohmann::json;

Json StringArray(const google::protobuf::RepeatedPtrField<std::string>& items) {
  Json array = Json::array();
  for (const std::string& item : items) array.push_back(item);
  return array;
}

Json CapabilitiesToJson(const google::protobuf::RepeatedPtrField<Capability>& capabilities) {
  Json array = Json::array();
  for (const Capability& capability : capabilities) {
    array.push_back(CapabilityToJson(capability));
  }
  return array;
}

// ---- The canonical grant writer: keys written in code-unit order, values as CanonicalJson
// writes them. ----

void AppendString(absl::string_view text, std::string* out) { AppendJsonStringTo(text, out); }

void AppendStrings(const google::protobuf::RepeatedPtrField<std::string>& items, std::string* out) {
  out->push_back('[');
  for (int i = 0; i < items.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendString(items[i], out);
  }
  out->push_back(']');
}

// {"agentId"|"conversationId"} < "kind" < {"serviceId"|"userId"}.
void AppendAddress(const Address& address, std::string* out) {
  switch (address.kind_case()) {
    case Address::kHumanUserId:
      out->append(R"({"kind":"human","userId":)");
      AppendString(address.human_user_id(), out);
      break;
    case Address::kAgentId:
      out->append(R"({"agentId":)");
      AppendString(address.agent_id(), out);
      out->append(R"(,"kind":"agent")");
      break;
    case Address::kGroupConversationId:
      out->append(R"({"conversationId":)");
      AppendString(address.group_conversation_id(), out);
      out->append(R"(,"kind":"group")");
      break;
    case Address::kServiceId:
      out->append(R"({"kind":"service","serviceId":)");
      AppendString(address.service_id(), out);
      break;
    case Address::KIND_NOT_SET:
      out->append("{");
      break;
  }
  out->push_back('}');
}

// {"actions","resource":{"namespace","owner"?,"path"},"scope"}.
void AppendCapability(const Capability& capability, std::string* out) {
  out->append(R"({"actions":)");
  AppendStrings(capability.actions(), out);
  const auto& resource = capability.resource();
  out->append(R"(,"resource":{"namespace":)");
  AppendString(resource.namespace_(), out);
  if (resource.has_owner()) {
    out->append(R"(,"owner":)");
    AppendAddress(resource.owner(), out);
  }
  out->append(R"(,"path":)");
  AppendStrings(resource.path(), out);
  out->append(R"(},"scope":)");
  AppendString(ScopeName(capability.scope()), out);
  out->push_back('}');
}

absl::Status AppendTimestamp(const google::protobuf::Timestamp& timestamp, std::string* out) {
  ASSIGN_OR_RETURN(const std::string text, TimestampToJsonText(timestamp));
  AppendString(text, out);
  return absl::OkStatus();
}

// {"delegationDepth"?,"expiresAt"?,"maxUses"?,"notBefore"?,"purposes"?}. The timestamps are
// rendered notBefore first, as CapabilityConstraintsToJson does, so the same error comes first.
absl::Status AppendConstraints(const CapabilityConstraints& constraints, std::string* out) {
  std::string not_before, expires_at;
  if (constraints.has_not_before()) {
    ASSIGN_OR_RETURN(not_before, TimestampToJsonText(constraints.not_before()));
  }
  if (constraints.has_expires_at()) {
    ASSIGN_OR_RETURN(expires_at, TimestampToJsonText(constraints.expires_at()));
  }
  out->push_back('{');
  bool first = true;
  const auto key = [&](absl::string_view name) {
    if (!first) out->push_back(',');
    first = false;
    AppendString(name, out);
    out->push_back(':');
  };
  if (constraints.has_delegation_depth()) {
    key("delegationDepth");
    absl::StrAppend(out, constraints.delegation_depth());
  }
  if (constraints.has_expires_at()) {
    key("expiresAt");
    AppendString(expires_at, out);
  }
  if (constraints.has_max_uses()) {
    key("maxUses");
    absl::StrAppend(out, constraints.max_uses());
  }
  if (constraints.has_not_before()) {
    key("notBefore");
    AppendString(not_before, out);
  }
  if (!constraints.purposes().empty()) {
    key("purposes");
    AppendStrings(constraints.purposes(), out);
  }
  out->push_back('}');
  return absl::OkStatus();
}

}  // namespace

absl::string_view ScopeName(protocol::v1::Scope scope) {
  switch (scope) {
    case protocol::v1::SCOPE_EXACT:
      return "exact";
    case protocol::v1::SCOPE_DESCENDANTS:
      return "descendants";
    default:
      return "";
  }
}

absl::string_view ToolResultStatusName(protocol::v1::ToolResultStatus status) {
  switch (status) {
    case protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED:
      return "succeeded";
    case protocol::v1::TOOL_RESULT_STATUS_DENIED:
      return "denied";
    case protocol::v1::TOOL_RESULT_STATUS_FAILED:
      return "failed";
    default:
      return "unspecified";
  }
}

absl::string_view ExecutionStatusName(protocol::v1::ExecutionStatus status) {
  switch (status) {
    case protocol::v1::EXECUTION_STATUS_SUCCEEDED:
      return "succeeded";
    case protocol::v1::EXECUTION_STATUS_DENIED:
      return "denied";
    case protocol::v1::EXECUTION_STATUS_FAILED:
      return "failed";
    case protocol::v1::EXECUTION_STATUS_CANCELLED:
      return "cancelled";
    case protocol::v1::EXECUTION_STATUS_ESCALATED:
      return "escalated";
    default:
      return "unspecified";
  }
}

Json AddressToJson(const Address& address) {
  switch (address.kind_case()) {
    case Address::kHumanUserId:
      return Json{{"kind", "human"}, {"userId", address.human_user_id()}};
    case Address::kAgentId:
      return Json{{"kind", "agent"}, {"agentId", address.agent_id()}};
    case Address::kGroupConversationId:
      return Json{{"kind", "group"}, {"conversationId", address.group_conversation_id()}};
    case Address::kServiceId:
      return Json{{"kind", "service"}, {"serviceId", address.service_id()}};
    case Address::KIND_NOT_SET:
      break;
  }
  return Json::object();
}

Json ResourceRefToJson(const protocol::v1::ResourceRef& resource) {
  Json json = {{"namespace", resource.namespace_()}, {"path", StringArray(resource.path())}};
  if (resource.has_owner()) json["owner"] = AddressToJson(resource.owner());
  return json;
}

Json CapabilityToJson(const Capability& capability) {
  return Json{{"resource", ResourceRefToJson(capability.resource())},
              {"actions", StringArray(capability.actions())},
              {"scope", std::string(ScopeName(capability.scope()))}};
}

Json CapabilityRequirementToJson(const protocol::v1::CapabilityRequirement& requirement) {
  return Json{{"resource", ResourceRefToJson(requirement.resource())},
              {"action", requirement.action()}};
}

Json ResourceReachToJson(const protocol::v1::ResourceReach& reach) {
  return Json{{"namespace", reach.namespace_()},
              {"path", StringArray(reach.path())},
              {"actions", StringArray(reach.actions())},
              {"scope", std::string(ScopeName(reach.scope()))}};
}

absl::StatusOr<std::string> TimestampToJsonText(const google::protobuf::Timestamp& timestamp) {
  ASSIGN_OR_RETURN(const absl::Time time, FromProtoTimestamp(timestamp));
  return FormatRfc3339(time);
}

absl::StatusOr<Json> CapabilityConstraintsToJson(const CapabilityConstraints& constraints) {
  Json json = Json::object();
  if (!constraints.purposes().empty()) json["purposes"] = StringArray(constraints.purposes());
  if (constraints.has_not_before()) {
    ASSIGN_OR_RETURN(json["notBefore"], TimestampToJsonText(constraints.not_before()));
  }
  if (constraints.has_expires_at()) {
    ASSIGN_OR_RETURN(json["expiresAt"], TimestampToJsonText(constraints.expires_at()));
  }
  if (constraints.has_max_uses()) json["maxUses"] = constraints.max_uses();
  if (constraints.has_delegation_depth()) {
    json["delegationDepth"] = constraints.delegation_depth();
  }
  return json;
}

absl::StatusOr<Json> CapabilityGrantToJson(const CapabilityGrant& grant) {
  Json json = {{"id", grant.id()},
               {"namespaceId", grant.namespace_id()},
               {"subject", AddressToJson(grant.subject())},
               {"issuer", AddressToJson(grant.issuer())},
               {"capabilities", CapabilitiesToJson(grant.capabilities())}};
  ASSIGN_OR_RETURN(json["constraints"], CapabilityConstraintsToJson(grant.constraints()));
  ASSIGN_OR_RETURN(json["issuedAt"], TimestampToJsonText(grant.issued_at()));
  if (grant.has_revoked_at()) {
    ASSIGN_OR_RETURN(json["revokedAt"], TimestampToJsonText(grant.revoked_at()));
  }
  if (!grant.parent_grant_id().empty()) json["parentGrantId"] = grant.parent_grant_id();
  if (grant.has_metadata()) {
    ASSIGN_OR_RETURN(json["metadata"], ProtoStructToJson(grant.metadata()));
  }
  return json;
}

// Keys: capabilities, constraints, id, issuedAt, issuer, metadata?, namespaceId,
// parentGrantId?, revokedAt?, subject. Errors are CapabilityGrantToJson's, checked in its order
// (constraints' timestamps, issuedAt, revokedAt, metadata).
absl::StatusOr<std::string> CanonicalCapabilityGrantJson(const CapabilityGrant& grant) {
  std::string out;
  out.reserve(512);
  out.append(R"({"capabilities":[)");
  for (int i = 0; i < grant.capabilities_size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendCapability(grant.capabilities(i), &out);
  }
  out.append(R"(],"constraints":)");
  RETURN_IF_ERROR(AppendConstraints(grant.constraints(), &out));
  out.append(R"(,"id":)");
  AppendString(grant.id(), &out);
  out.append(R"(,"issuedAt":)");
  RETURN_IF_ERROR(AppendTimestamp(grant.issued_at(), &out));
  out.append(R"(,"issuer":)");
  AppendAddress(grant.issuer(), &out);
  if (grant.has_revoked_at()) {
    // Checked before metadata, as CapabilityGrantToJson does; written after namespaceId.
    RETURN_IF_ERROR(TimestampToJsonText(grant.revoked_at()).status());
  }
  if (grant.has_metadata()) {
    ASSIGN_OR_RETURN(const Json metadata, ProtoStructToJson(grant.metadata()));
    out.append(R"(,"metadata":)");
    out.append(CanonicalJson(metadata));
  }
  out.append(R"(,"namespaceId":)");
  AppendString(grant.namespace_id(), &out);
  if (!grant.parent_grant_id().empty()) {
    out.append(R"(,"parentGrantId":)");
    AppendString(grant.parent_grant_id(), &out);
  }
  if (grant.has_revoked_at()) {
    out.append(R"(,"revokedAt":)");
    RETURN_IF_ERROR(AppendTimestamp(grant.revoked_at(), &out));
  }
  out.append(R"(,"subject":)");
  AppendAddress(grant.subject(), &out);
  out.push_back('}');
  return out;
}

absl::StatusOr<Json> CapabilityRequestIdentityToJson(const CapabilityRequest& request) {
  Json json = {{"namespaceId", request.namespace_id()},
               {"requester", AddressToJson(request.requester())},
               {"owner", AddressToJson(request.owner())},
               {"capabilities", CapabilitiesToJson(request.capabilities())},
               {"purpose", request.purpose()}};
  if (request.has_constraints()) {
    ASSIGN_OR_RETURN(json["constraints"], CapabilityConstraintsToJson(request.constraints()));
  }
  return json;
}

absl::StatusOr<Json> CapabilityRequestToJson(const CapabilityRequest& request) {
  ASSIGN_OR_RETURN(Json json, CapabilityRequestIdentityToJson(request));
  json["id"] = request.id();
  ASSIGN_OR_RETURN(json["requestedAt"], TimestampToJsonText(request.requested_at()));
  if (request.has_metadata()) {
    ASSIGN_OR_RETURN(json["metadata"], ProtoStructToJson(request.metadata()));
  }
  return json;
}

absl::StatusOr<Json> PublishedToolDefinitionToJson(
    const protocol::v1::PublishedToolDefinition& tool) {
  Json json = {{"name", tool.name()}, {"description", tool.description()}};
  ASSIGN_OR_RETURN(json["inputSchema"], ProtoStructToJson(tool.input_schema()));
  if (tool.has_output_schema()) {
    ASSIGN_OR_RETURN(json["outputSchema"], ProtoStructToJson(tool.output_schema()));
  }
  if (tool.has_annotations()) {
    const auto& annotations = tool.annotations();
    Json hints = Json::object();
    if (annotations.has_read_only_hint()) hints["readOnlyHint"] = annotations.read_only_hint();
    if (annotations.has_destructive_hint()) {
      hints["destructiveHint"] = annotations.destructive_hint();
    }
    if (annotations.has_idempotent_hint()) {
      hints["idempotentHint"] = annotations.idempotent_hint();
    }
    if (annotations.has_open_world_hint()) {
      hints["openWorldHint"] = annotations.open_world_hint();
    }
    json["annotations"] = std::move(hints);
  }
  if (tool.has_metadata()) {
    Json metadata = Json::object();
    if (!tool.metadata().namespace_().empty()) metadata["namespace"] = tool.metadata().namespace_();
    if (!tool.metadata().source().empty()) metadata["source"] = tool.metadata().source();
    json["metadata"] = std::move(metadata);
  }
  return json;
}

protocol::v1::PublishedToolDefinition PublishToolDefinition(
    const protocol::v1::ToolDefinition& tool) {
  protocol::v1::PublishedToolDefinition published;
  published.set_name(tool.name());
  published.set_description(tool.description());
  *published.mutable_input_schema() = tool.input_schema();
  if (tool.has_output_schema()) *published.mutable_output_schema() = tool.output_schema();
  auto* hints = published.mutable_annotations();
  const auto& declared = tool.annotations();
  hints->set_read_only_hint(declared.has_read_only()
                                ? declared.read_only()
                                : tool.read_write() == protocol::v1::READ_WRITE_READ);
  if (declared.has_destructive()) hints->set_destructive_hint(declared.destructive());
  if (declared.has_idempotent()) hints->set_idempotent_hint(declared.idempotent());
  published.mutable_metadata()->set_namespace_(tool.namespace_());
  published.mutable_metadata()->set_source(tool.source());
  return published;
}

}  // namespace sharedos::common
