#include "common/validation/protocol.h"

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/json/protocol_json.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/limits.h"
#include "common/validation/protocol_internal.h"
#include "common/validation/unknown_fields.h"
#include "google/protobuf/repeated_ptr_field.h"

namespace sharedos::common::validation {
namespace internal {

namespace pb = ::sharedos::protocol::v1;
using ::google::protobuf::RepeatedPtrField;
using ::google::protobuf::Struct;
using ::google::protobuf::Timestamp;
using ::google::protobuf::Value;

// ---- Helpers ----

absl::Status Missing(const PathRef& path) { return InvalidArgumentAt(path, "required"); }

// A required enum: neither X_UNSPECIFIED nor a number this build does not know
// (proto3 keeps unknown enum numbers in the field rather than in the unknown
// field set).
absl::Status CheckEnum(int value, bool (*is_valid)(int), const PathRef& path) {
  if (value == 0) return InvalidArgumentAt(path, "unspecified");
  if (!is_valid(value)) {
    return InvalidArgumentAt(path, absl::StrCat("unknown value ", value));
  }
  return absl::OkStatus();
}

absl::Status RequiredTimestamp(bool has, const Timestamp& value, const PathRef& path) {
  if (!has) return Missing(path);
  return CheckTimestamp(value, path);
}

absl::Status OptionalTimestamp(bool has, const Timestamp& value, const PathRef& path) {
  if (!has) return absl::OkStatus();
  return CheckTimestamp(value, path);
}

absl::Status RequiredJsonObject(bool has, const Struct& value, const PathRef& path) {
  if (!has) return Missing(path);
  return CheckJsonObject(value, path);
}

absl::Status OptionalJsonObject(bool has, const Struct& value, const PathRef& path) {
  if (!has) return absl::OkStatus();
  return CheckJsonObject(value, path);
}

absl::Status RequiredJsonValue(bool has, const Value& value, const PathRef& path) {
  if (!has) return Missing(path);
  return CheckJsonValue(value, path);
}

// count ≤ max (min 0), then `check` on each element.
absl::Status CheckIdentifiers(RepeatedPtrField<std::string>* values, size_t max_count,
                              const PathRef& path) {
  RETURN_IF_ERROR(CheckCount(values->size(), 0, max_count, path));
  for (int i = 0; i < values->size(); ++i) {
    RETURN_IF_ERROR(CheckIdentifier(values->Mutable(i), path.Index(i)));
  }
  return absl::OkStatus();
}

absl::Status CheckPath(const RepeatedPtrField<std::string>& segments, const PathRef& path) {
  RETURN_IF_ERROR(CheckCount(segments.size(), 0, kMaxPathSegments, path));
  for (int i = 0; i < segments.size(); ++i) {
    RETURN_IF_ERROR(CheckPathSegment(segments[i], path.Index(i)));
  }
  return absl::OkStatus();
}

absl::Status CheckActions(RepeatedPtrField<std::string>* actions, const PathRef& path) {
  RETURN_IF_ERROR(CheckCount(actions->size(), 1, kMaxActions, path));
  for (int i = 0; i < actions->size(); ++i) {
    RETURN_IF_ERROR(CheckAction(actions->Mutable(i), path.Index(i)));
  }
  return absl::OkStatus();
}

// The outcome oneof must hold `expected` (a field name; empty = nothing
// allowed, or anything absent when `optional`). `actual` is the set field's
// name, empty when none is set.
absl::Status CheckOutcome(absl::string_view actual, absl::string_view expected, bool optional,
                          absl::string_view status_name, const PathRef& path) {
  if (actual == expected) return absl::OkStatus();
  if (actual.empty()) {
    if (optional) return absl::OkStatus();
    return InvalidArgumentAt(path.Field(expected),
                             absl::StrCat("required when status is ", status_name));
  }
  return InvalidArgumentAt(path.Field(actual),
                           absl::StrCat("not allowed when status is ", status_name));
}

// ---- common.proto ----

absl::Status CheckAddress(pb::Address* address, const PathRef& path) {
  switch (address->kind_case()) {
    case pb::Address::kHumanUserId:
      return CheckIdentifier(address->mutable_human_user_id(), path.Field("human_user_id"));
    case pb::Address::kAgentId:
      return CheckIdentifier(address->mutable_agent_id(), path.Field("agent_id"));
    case pb::Address::kGroupConversationId:
      return CheckIdentifier(address->mutable_group_conversation_id(),
                             path.Field("group_conversation_id"));
    case pb::Address::kServiceId:
      return CheckIdentifier(address->mutable_service_id(), path.Field("service_id"));
    case pb::Address::KIND_NOT_SET:
      break;
  }
  return InvalidArgumentAt(path, "no kind set");
}

absl::Status CheckResourceRef(pb::ResourceRef* ref, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(ref->mutable_namespace_(), path.Field("namespace")));
  RETURN_IF_ERROR(CheckPath(ref->path(), path.Field("path")));
  return Optional(ref->has_owner() ? ref->mutable_owner() : nullptr, CheckAddress,
                  path.Field("owner"));
}

absl::Status CheckCapability(pb::Capability* capability, const PathRef& path) {
  RETURN_IF_ERROR(Required(capability->has_resource() ? capability->mutable_resource() : nullptr,
                           CheckResourceRef, path.Field("resource")));
  RETURN_IF_ERROR(CheckActions(capability->mutable_actions(), path.Field("actions")));
  return CheckEnum(capability->scope(), pb::Scope_IsValid, path.Field("scope"));
}

absl::Status CheckCapabilities(RepeatedPtrField<pb::Capability>* capabilities,
                               const PathRef& path) {
  RETURN_IF_ERROR(CheckCount(capabilities->size(), 1, kMaxCapabilities, path));
  for (int i = 0; i < capabilities->size(); ++i) {
    RETURN_IF_ERROR(CheckCapability(capabilities->Mutable(i), path.Index(i)));
  }
  return absl::OkStatus();
}

absl::Status CheckCapabilityConstraints(pb::CapabilityConstraints* constraints,
                                        const PathRef& path) {
  // A repeated field cannot be absent: no purposes means "unconstrained".
  const PathRef purposes = path.Field("purposes");
  RETURN_IF_ERROR(CheckCount(constraints->purposes_size(), 0, kMaxPurposes, purposes));
  for (int i = 0; i < constraints->purposes_size(); ++i) {
    RETURN_IF_ERROR(CheckPurpose(constraints->mutable_purposes(i), purposes.Index(i)));
  }
  RETURN_IF_ERROR(OptionalTimestamp(constraints->has_not_before(), constraints->not_before(),
                                    path.Field("not_before")));
  RETURN_IF_ERROR(OptionalTimestamp(constraints->has_expires_at(), constraints->expires_at(),
                                    path.Field("expires_at")));
  if (constraints->has_not_before() && constraints->has_expires_at()) {
    const Timestamp& from = constraints->not_before();
    const Timestamp& to = constraints->expires_at();
    if (from.seconds() > to.seconds() ||
        (from.seconds() == to.seconds() && from.nanos() > to.nanos())) {
      return InvalidArgumentAt(path.Field("not_before"), "later than expires_at");
    }
  }
  if (constraints->has_max_uses() && constraints->max_uses() <= 0) {
    return InvalidArgumentAt(path.Field("max_uses"), "must be positive");
  }
  if (constraints->has_delegation_depth() && constraints->delegation_depth() < 0) {
    return InvalidArgumentAt(path.Field("delegation_depth"), "must be non-negative");
  }
  return absl::OkStatus();
}

absl::Status CheckCapabilityRequirement(pb::CapabilityRequirement* requirement,
                                        const PathRef& path) {
  RETURN_IF_ERROR(Required(requirement->has_resource() ? requirement->mutable_resource() : nullptr,
                           CheckResourceRef, path.Field("resource")));
  return CheckAction(requirement->mutable_action(), path.Field("action"));
}

absl::Status CheckProtocolError(pb::ProtocolError* error, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(error->mutable_code(), path.Field("code")));
  RETURN_IF_ERROR(CheckString(error->message(), 1, kMaxErrorMessageLength, path.Field("message")));
  return OptionalJsonObject(error->has_details(), error->details(), path.Field("details"));
}

// ---- context.proto ----

absl::Status CheckAccessContext(pb::AccessContext* context, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(context->mutable_namespace_id(), path.Field("namespace_id")));
  RETURN_IF_ERROR(Required(context->has_actor() ? context->mutable_actor() : nullptr, CheckAddress,
                           path.Field("actor")));
  RETURN_IF_ERROR(Required(context->has_authority() ? context->mutable_authority() : nullptr,
                           CheckAddress, path.Field("authority")));
  RETURN_IF_ERROR(Required(context->has_owner() ? context->mutable_owner() : nullptr, CheckAddress,
                           path.Field("owner")));
  RETURN_IF_ERROR(CheckPurpose(context->mutable_purpose(), path.Field("purpose")));
  RETURN_IF_ERROR(CheckIdentifier(context->mutable_trace_id(), path.Field("trace_id")));
  const PathRef enabled = path.Field("enabled_tool_namespaces");
  RETURN_IF_ERROR(CheckIdentifiers(context->mutable_enabled_tool_namespaces(),
                                   kMaxEnabledToolNamespaces, enabled));
  absl::flat_hash_set<absl::string_view> seen;
  for (int i = 0; i < context->enabled_tool_namespaces_size(); ++i) {
    const std::string& name = context->enabled_tool_namespaces(i);
    if (!seen.insert(name).second) {
      return InvalidArgumentAt(enabled.Index(i), absl::StrCat("duplicate \"", name, "\""));
    }
  }
  return RequiredTimestamp(context->has_now(), context->now(), path.Field("now"));
}

// ---- grant.proto ----

absl::Status CheckCapabilityGrant(pb::CapabilityGrant* grant, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(grant->mutable_id(), path.Field("id")));
  RETURN_IF_ERROR(CheckIdentifier(grant->mutable_namespace_id(), path.Field("namespace_id")));
  RETURN_IF_ERROR(Required(grant->has_subject() ? grant->mutable_subject() : nullptr, CheckAddress,
                           path.Field("subject")));
  RETURN_IF_ERROR(Required(grant->has_issuer() ? grant->mutable_issuer() : nullptr, CheckAddress,
                           path.Field("issuer")));
  RETURN_IF_ERROR(CheckCapabilities(grant->mutable_capabilities(), path.Field("capabilities")));
  RETURN_IF_ERROR(Required(grant->has_constraints() ? grant->mutable_constraints() : nullptr,
                           CheckCapabilityConstraints, path.Field("constraints")));
  RETURN_IF_ERROR(
      RequiredTimestamp(grant->has_issued_at(), grant->issued_at(), path.Field("issued_at")));
  RETURN_IF_ERROR(
      OptionalTimestamp(grant->has_revoked_at(), grant->revoked_at(), path.Field("revoked_at")));
  const PathRef parent = path.Field("parent_grant_id");
  RETURN_IF_ERROR(CheckOptionalIdentifier(grant->mutable_parent_grant_id(), parent));
  if (!grant->parent_grant_id().empty() && grant->parent_grant_id() == grant->id()) {
    return InvalidArgumentAt(parent, "must differ from id");
  }
  return OptionalJsonObject(grant->has_metadata(), grant->metadata(), path.Field("metadata"));
}

absl::Status CheckCapabilityRequest(pb::CapabilityRequest* request, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(request->mutable_id(), path.Field("id")));
  RETURN_IF_ERROR(CheckIdentifier(request->mutable_namespace_id(), path.Field("namespace_id")));
  RETURN_IF_ERROR(Required(request->has_requester() ? request->mutable_requester() : nullptr,
                           CheckAddress, path.Field("requester")));
  RETURN_IF_ERROR(Required(request->has_owner() ? request->mutable_owner() : nullptr, CheckAddress,
                           path.Field("owner")));
  RETURN_IF_ERROR(CheckCapabilities(request->mutable_capabilities(), path.Field("capabilities")));
  RETURN_IF_ERROR(CheckPurpose(request->mutable_purpose(), path.Field("purpose")));
  RETURN_IF_ERROR(Optional(request->has_constraints() ? request->mutable_constraints() : nullptr,
                           CheckCapabilityConstraints, path.Field("constraints")));
  RETURN_IF_ERROR(RequiredTimestamp(request->has_requested_at(), request->requested_at(),
                                    path.Field("requested_at")));
  return OptionalJsonObject(request->has_metadata(), request->metadata(), path.Field("metadata"));
}

absl::Status CheckAuthorizationDecision(pb::AuthorizationDecision* decision, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(decision->mutable_reason_code(), path.Field("reason_code")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(decision->mutable_matched_grant_id(),
                                          path.Field("matched_grant_id")));
  RETURN_IF_ERROR(Optional(
      decision->has_required_authority() ? decision->mutable_required_authority() : nullptr,
      CheckCapabilityRequest, path.Field("required_authority")));
  return OptionalJsonObject(decision->has_metadata(), decision->metadata(), path.Field("metadata"));
}

absl::Status CheckEscalation(pb::Escalation* escalation, const PathRef& path) {
  RETURN_IF_ERROR(CheckTrimmedString(escalation->mutable_reason(), kMaxEscalationReasonLength,
                                     path.Field("reason")));
  RETURN_IF_ERROR(Required(escalation->has_reviewer() ? escalation->mutable_reviewer() : nullptr,
                           CheckAddress, path.Field("reviewer")));
  RETURN_IF_ERROR(RequiredTimestamp(escalation->has_requested_at(), escalation->requested_at(),
                                    path.Field("requested_at")));
  RETURN_IF_ERROR(Optional(
      escalation->has_requested_authority() ? escalation->mutable_requested_authority() : nullptr,
      CheckCapabilityRequest, path.Field("requested_authority")));
  return CheckEnum(escalation->status(), pb::EscalationStatus_IsValid, path.Field("status"));
}

absl::Status CheckResourceReach(pb::ResourceReach* reach, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(reach->mutable_namespace_(), path.Field("namespace")));
  RETURN_IF_ERROR(CheckPath(reach->path(), path.Field("path")));
  RETURN_IF_ERROR(CheckActions(reach->mutable_actions(), path.Field("actions")));
  return CheckEnum(reach->scope(), pb::Scope_IsValid, path.Field("scope"));
}

absl::Status CheckReachResult(pb::ReachResult* result, const PathRef& path) {
  RETURN_IF_ERROR(CheckEnum(result->status(), pb::ReachStatus_IsValid, path.Field("status")));
  const PathRef reach = path.Field("reach");
  const PathRef reason = path.Field("reason_code");
  if (result->status() == pb::REACH_STATUS_COMPUTED) {
    RETURN_IF_ERROR(CheckCount(result->reach_size(), 0, kMaxReachEntries, reach));
    for (int i = 0; i < result->reach_size(); ++i) {
      RETURN_IF_ERROR(CheckResourceReach(result->mutable_reach(i), reach.Index(i)));
    }
    if (!result->reason_code().empty()) {
      return InvalidArgumentAt(reason, "not allowed when status is computed");
    }
    return absl::OkStatus();
  }
  if (result->reach_size() > 0) {
    return InvalidArgumentAt(reach, "not allowed when status is unavailable");
  }
  RETURN_IF_ERROR(CheckIdentifier(result->mutable_reason_code(), reason));
  if (result->reason_code() != "authority_unavailable" &&
      result->reason_code() != "usage_store_unavailable") {
    return InvalidArgumentAt(reason, "must be authority_unavailable or usage_store_unavailable");
  }
  return absl::OkStatus();
}

// ---- message.proto ----

absl::Status CheckMessageProvenance(pb::MessageProvenance* provenance, const PathRef& path) {
  RETURN_IF_ERROR(CheckIdentifier(provenance->mutable_source(), path.Field("source")));
  RETURN_IF_ERROR(
      CheckIdentifiers(provenance->mutable_parent_ids(), kMaxParentIds, path.Field("parent_ids")));
  return OptionalJsonObject(provenance->has_metadata(), provenance->metadata(),
                            path.Field("metadata"));
}

absl::Status CheckMessageEnvelope(pb::MessageEnvelope* envelope, const PathRef& path) {
  RETURN_IF_ERROR(CheckProtocolVersion(envelope->version(), path.Field("version")));
  RETURN_IF_ERROR(CheckIdentifier(envelope->mutable_id(), path.Field("id")));
  RETURN_IF_ERROR(Required(envelope->has_sender() ? envelope->mutable_sender() : nullptr,
                           CheckAddress, path.Field("sender")));
  RETURN_IF_ERROR(Required(envelope->has_receiver() ? envelope->mutable_receiver() : nullptr,
                           CheckAddress, path.Field("receiver")));
  RETURN_IF_ERROR(CheckPurpose(envelope->mutable_purpose(), path.Field("purpose")));
  RETURN_IF_ERROR(
      RequiredJsonValue(envelope->has_payload(), envelope->payload(), path.Field("payload")));
  RETURN_IF_ERROR(CheckIdentifier(envelope->mutable_trace_id(), path.Field("trace_id")));
  RETURN_IF_ERROR(RequiredTimestamp(envelope->has_created_at(), envelope->created_at(),
                                    path.Field("created_at")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(envelope->mutable_reply_to(), path.Field("reply_to")));
  return Optional(envelope->has_provenance() ? envelope->mutable_provenance() : nullptr,
                  CheckMessageProvenance, path.Field("provenance"));
}

}  // namespace internal

namespace pb = ::sharedos::protocol::v1;

absl::Status ValidateAddress(pb::Address* address, const PathRef& path) {
  return internal::Strict(address, internal::CheckAddress, path);
}
absl::Status ValidateResourceRef(pb::ResourceRef* ref, const PathRef& path) {
  return internal::Strict(ref, internal::CheckResourceRef, path);
}
absl::Status ValidateCapability(pb::Capability* capability, const PathRef& path) {
  return internal::Strict(capability, internal::CheckCapability, path);
}
absl::Status ValidateCapabilityConstraints(pb::CapabilityConstraints* constraints,
                                           const PathRef& path) {
  return internal::Strict(constraints, internal::CheckCapabilityConstraints, path);
}
absl::Status ValidateCapabilityRequirement(pb::CapabilityRequirement* requirement,
                                           const PathRef& path) {
  return internal::Strict(requirement, internal::CheckCapabilityRequirement, path);
}
absl::Status ValidateProtocolError(pb::ProtocolError* error, const PathRef& path) {
  return internal::Strict(error, internal::CheckProtocolError, path);
}
absl::Status ValidateAccessContext(pb::AccessContext* context, const PathRef& path) {
  return internal::Strict(context, internal::CheckAccessContext, path);
}
absl::Status ValidateCapabilityGrant(pb::CapabilityGrant* grant, const PathRef& path) {
  return internal::Strict(grant, internal::CheckCapabilityGrant, path);
}
absl::Status ValidateCapabilityRequest(pb::CapabilityRequest* request, const PathRef& path) {
  return internal::Strict(request, internal::CheckCapabilityRequest, path);
}
absl::Status ValidateAuthorizationDecision(pb::AuthorizationDecision* decision,
                                           const PathRef& path) {
  return internal::Strict(decision, internal::CheckAuthorizationDecision, path);
}
absl::Status ValidateEscalation(pb::Escalation* escalation, const PathRef& path) {
  return internal::Strict(escalation, internal::CheckEscalation, path);
}
absl::Status ValidateResourceReach(pb::ResourceReach* reach, const PathRef& path) {
  return internal::Strict(reach, internal::CheckResourceReach, path);
}
absl::Status ValidateReachResult(pb::ReachResult* result, const PathRef& path) {
  return internal::Strict(result, internal::CheckReachResult, path);
}
absl::Status ValidateMessageProvenance(pb::MessageProvenance* provenance, const PathRef& path) {
  return internal::Strict(provenance, internal::CheckMessageProvenance, path);
}
absl::Status ValidateMessageEnvelope(pb::MessageEnvelope* envelope, const PathRef& path) {
  return internal::Strict(envelope, internal::CheckMessageEnvelope, path);
}
}  // namespace sharedos::common::validation
