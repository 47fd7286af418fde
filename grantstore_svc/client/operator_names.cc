#include "grantstore_svc/client/operator_names.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "audit_svc/core/control_plane_event.h"
#include "capability/address.h"

namespace sharedos::grantstore::client {
namespace {

using protocol::v1::AuditEventType;
using protocol::v1::AuditOutcome;

constexpr std::pair<const char*, AuditEventType> kEventTypes[] = {
    {"authority.resolved", protocol::v1::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED},
    {"authorization.checked", protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED},
    {"escalation.requested", protocol::v1::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED},
    {"escalation.auto_decided", protocol::v1::AUDIT_EVENT_TYPE_ESCALATION_AUTO_DECIDED},
    {"resource.invoked", protocol::v1::AUDIT_EVENT_TYPE_RESOURCE_INVOKED},
    {"tool.catalog.listed", protocol::v1::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED},
    {"tool.namespace.catalog.listed", protocol::v1::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_CATALOG_LISTED},
    {"tool.namespace.selection.updated",
     protocol::v1::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_SELECTION_UPDATED},
    {"tool.invoked", protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED},
    {"message.sent", protocol::v1::AUDIT_EVENT_TYPE_MESSAGE_SENT},
    {"turn.ended", protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED},
};

constexpr std::pair<const char*, AuditOutcome> kOutcomes[] = {
    {"allowed", protocol::v1::AUDIT_OUTCOME_ALLOWED},
    {"denied", protocol::v1::AUDIT_OUTCOME_DENIED},
    {"succeeded", protocol::v1::AUDIT_OUTCOME_SUCCEEDED},
    {"failed", protocol::v1::AUDIT_OUTCOME_FAILED},
    {"escalated", protocol::v1::AUDIT_OUTCOME_ESCALATED},
    {"interrupted", protocol::v1::AUDIT_OUTCOME_INTERRUPTED},
};

constexpr std::pair<const char*, protocol::v1::AuditSource> kSources[] = {
    {"kernel", protocol::v1::AUDIT_SOURCE_KERNEL},
    {"envelope", protocol::v1::AUDIT_SOURCE_ENVELOPE},
};

constexpr std::pair<const char*, grantstore::v1::EscalationRecordStatus> kStatuses[] = {
    {"pending", grantstore::v1::ESCALATION_RECORD_STATUS_PENDING},
    {"approved", grantstore::v1::ESCALATION_RECORD_STATUS_APPROVED},
    {"denied", grantstore::v1::ESCALATION_RECORD_STATUS_DENIED},
};

template <typename Enum, size_t N>
absl::StatusOr<Enum> Lookup(const std::pair<const char*, Enum> (&table)[N], absl::string_view name,
                            absl::string_view what) {
  std::vector<std::string> known;
  for (const auto& [text, value] : table) {
    if (name == text) return value;
    known.push_back(text);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ", what, " \"", name, "\" (one of: ", absl::StrJoin(known, ", "), ")"));
}

template <typename Enum, size_t N>
std::string NameOf(const std::pair<const char*, Enum> (&table)[N], Enum value) {
  for (const auto& [text, candidate] : table) {
    if (candidate == value) return text;
  }
  return "unspecified";
}

}  // namespace

absl::StatusOr<protocol::v1::Address> ParseAddress(absl::string_view text) {
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos || colon + 1 == text.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "address \"", text, "\" must be kind:id (human:…, agent:…, group:…, service:…)"));
  }
  std::optional<protocol::v1::Address> address = capability::AddressFromKey(text);
  if (!address.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("address \"", text, "\": unknown kind \"",
                                                   text.substr(0, colon),
                                                   "\" (human, agent, group or service)"));
  }
  return *std::move(address);
}

std::string FormatAddress(const protocol::v1::Address& address) {
  const std::string key = capability::AddressKey(address);
  return key.empty() ? "-" : key;
}

absl::StatusOr<AuditEventType> ParseAuditEventType(absl::string_view name) {
  return Lookup(kEventTypes, name, "audit event type");
}

std::string AuditEventTypeName(AuditEventType type) { return NameOf(kEventTypes, type); }

absl::StatusOr<audit::v1::ControlPlaneEventType> ParseRecordType(absl::string_view name,
                                                                 audit::v1::AuditFilter& filter) {
  if (auto control_plane = audit::core::ParseControlPlaneEventType(name)) {
    filter.set_control_plane_type(*control_plane);
    return *control_plane;
  }
  absl::StatusOr<AuditEventType> type = ParseAuditEventType(name);
  if (!type.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        type.status().message(),
        "; or a control-plane type: grant.issued, grant.derived, "
        "grant.revoked, host_policy.updated, escalation.recorded, escalation.resolved"));
  }
  filter.set_type(*type);
  return audit::v1::CONTROL_PLANE_EVENT_TYPE_UNSPECIFIED;
}

std::string ControlPlaneEventTypeName(audit::v1::ControlPlaneEventType type) {
  const absl::string_view name = audit::core::ControlPlaneEventTypeName(type);
  return name.empty() ? "unspecified" : std::string(name);
}

absl::StatusOr<AuditOutcome> ParseAuditOutcome(absl::string_view name) {
  return Lookup(kOutcomes, name, "audit outcome");
}

std::string AuditOutcomeName(AuditOutcome outcome) { return NameOf(kOutcomes, outcome); }

absl::StatusOr<protocol::v1::AuditSource> ParseAuditSource(absl::string_view name) {
  return Lookup(kSources, name, "audit source");
}

std::string AuditSourceName(protocol::v1::AuditSource source) { return NameOf(kSources, source); }

absl::StatusOr<grantstore::v1::EscalationRecordStatus> ParseEscalationStatus(
    absl::string_view name) {
  return Lookup(kStatuses, name, "escalation status");
}

std::string EscalationStatusName(grantstore::v1::EscalationRecordStatus status) {
  return NameOf(kStatuses, status);
}

absl::StatusOr<google::protobuf::Timestamp> ParseTimestamp(absl::string_view text) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("timestamp \"", text, "\" is not RFC 3339: ", error));
  }
  google::protobuf::Timestamp timestamp;
  const absl::Duration since_epoch = time - absl::UnixEpoch();
  const int64_t seconds = absl::ToInt64Seconds(since_epoch);
  timestamp.set_seconds(seconds);
  timestamp.set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(since_epoch - absl::Seconds(seconds))));
  return timestamp;
}

std::string FormatTimestamp(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() == 0 && timestamp.nanos() == 0) return "-";
  const absl::Time time =
      absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
  return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", time, absl::UTCTimeZone());
}

}  // namespace sharedos::grantstore::client
