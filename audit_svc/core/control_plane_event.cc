#include "audit_svc/core/control_plane_event.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/status_macros.h"
#include "common/validation/bounds.h"
#include "common/validation/protocol.h"
#include "common/validation/unknown_fields.h"

namespace sharedos::audit::core {
namespace {

namespace v1 = ::sharedos::audit::v1;
namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::validation::CheckIdentifier;
using ::sharedos::common::validation::CheckJsonObject;
using ::sharedos::common::validation::CheckOptionalIdentifier;
using ::sharedos::common::validation::CheckPurpose;
using ::sharedos::common::validation::CheckTimestamp;
using ::sharedos::common::validation::FieldPath;
using ::sharedos::common::validation::ValidateAddress;

constexpr std::pair<v1::ControlPlaneEventType, absl::string_view> kNames[] = {
    {v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED, "grant.issued"},
    {v1::CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED, "grant.derived"},
    {v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED, "grant.revoked"},
    {v1::CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED, "host_policy.updated"},
    {v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED, "escalation.recorded"},
    {v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED, "escalation.resolved"},
    {v1::CONTROL_PLANE_EVENT_TYPE_CREDENTIAL_CHANGED, "credential.changed"},
    {v1::CONTROL_PLANE_EVENT_TYPE_RESTORE_ACCEPTED, "store.restore_accepted"},
    {v1::CONTROL_PLANE_EVENT_TYPE_CHECKPOINT_WITNESSED, "checkpoint.witnessed"},
};

absl::Status Required(bool present, pb::Address* address, const std::string& path) {
  if (!present) return absl::InvalidArgumentError(absl::StrCat(path, ": required"));
  return ValidateAddress(address, path);
}

}  // namespace

absl::Status ValidateControlPlaneEvent(v1::ControlPlaneEvent* event, absl::string_view path) {
  RETURN_IF_ERROR(common::validation::RejectUnknownFields(*event, path));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_id(), FieldPath(path, "id")));
  if (ControlPlaneEventTypeName(event->type()).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(FieldPath(path, "type"), ": unspecified or unknown"));
  }
  if (event->outcome() == pb::AUDIT_OUTCOME_UNSPECIFIED ||
      !pb::AuditOutcome_IsValid(event->outcome())) {
    return absl::InvalidArgumentError(
        absl::StrCat(FieldPath(path, "outcome"), ": unspecified or unknown"));
  }
  if (!event->has_at()) {
    return absl::InvalidArgumentError(absl::StrCat(FieldPath(path, "at"), ": required"));
  }
  RETURN_IF_ERROR(CheckTimestamp(event->at(), FieldPath(path, "at")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_trace_id(), FieldPath(path, "trace_id")));
  RETURN_IF_ERROR(CheckIdentifier(event->mutable_namespace_id(), FieldPath(path, "namespace_id")));
  RETURN_IF_ERROR(Required(event->has_actor(), event->mutable_actor(), FieldPath(path, "actor")));
  RETURN_IF_ERROR(
      Required(event->has_authority(), event->mutable_authority(), FieldPath(path, "authority")));
  RETURN_IF_ERROR(Required(event->has_owner(), event->mutable_owner(), FieldPath(path, "owner")));
  RETURN_IF_ERROR(CheckPurpose(event->mutable_purpose(), FieldPath(path, "purpose")));
  RETURN_IF_ERROR(CheckOptionalIdentifier(event->mutable_grant_id(), FieldPath(path, "grant_id")));
  RETURN_IF_ERROR(
      CheckOptionalIdentifier(event->mutable_operation_id(), FieldPath(path, "operation_id")));
  if (event->has_metadata()) {
    RETURN_IF_ERROR(CheckJsonObject(event->metadata(), FieldPath(path, "metadata")));
  }
  return absl::OkStatus();
}

absl::string_view ControlPlaneEventTypeName(v1::ControlPlaneEventType type) {
  for (const auto& [value, name] : kNames) {
    if (value == type) return name;
  }
  return "";
}

std::optional<v1::ControlPlaneEventType> ParseControlPlaneEventType(absl::string_view name) {
  for (const auto& [value, known] : kNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

}  // namespace sharedos::audit::core
