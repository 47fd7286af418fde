#include "audit_svc/core/writer_policy.h"

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "audit_svc/core/control_plane_event.h"
#include "capability/address.h"
#include "common/server/access_policy.h"

namespace sharedos::audit::core {
namespace {

namespace pb = ::sharedos::protocol::v1;

// The protocol "1" types each data-plane writer produces.
const std::set<pb::AuditEventType>* EventTypesOf(absl::string_view writer) {
  static const auto* authorizer = new std::set<pb::AuditEventType>{
      pb::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED, pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,
      pb::AUDIT_EVENT_TYPE_ESCALATION_REQUESTED};
  static const auto* envelope =
      new std::set<pb::AuditEventType>{pb::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED,
                                       pb::AUDIT_EVENT_TYPE_TOOL_CATALOG_LISTED,
                                       pb::AUDIT_EVENT_TYPE_TOOL_INVOKED,
                                       pb::AUDIT_EVENT_TYPE_RESOURCE_INVOKED,
                                       pb::AUDIT_EVENT_TYPE_MESSAGE_SENT,
                                       pb::AUDIT_EVENT_TYPE_TURN_ENDED,
                                       pb::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_CATALOG_LISTED,
                                       pb::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_SELECTION_UPDATED};
  if (writer == common::server::kAuthorizerService) return authorizer;
  if (writer == common::server::kEnvelopeService) return envelope;
  return nullptr;
}

}  // namespace

absl::Status CheckWriter(absl::string_view writer, const v1::LogEntry& entry,
                         absl::string_view path) {
  if (entry.has_control_plane()) {
    // A witnessed checkpoint is the audit service's own record (a witness, docs/adr/0023); every
    // other control-plane record is the grant store's.
    const bool witnessed =
        entry.control_plane().type() == v1::CONTROL_PLANE_EVENT_TYPE_CHECKPOINT_WITNESSED;
    const absl::string_view owner =
        witnessed ? common::server::kAuditService : common::server::kGrantstoreService;
    if (writer == owner) return absl::OkStatus();
    return absl::PermissionDeniedError(absl::StrCat(
        path, ": ", writer, " writes no control-plane record (",
        ControlPlaneEventTypeName(entry.control_plane().type()), "); only ", owner, " does"));
  }
  const pb::AuditEventType type = entry.event().type();
  const std::set<pb::AuditEventType>* types = EventTypesOf(writer);
  if (types != nullptr && types->count(type) > 0) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(path, ".type: ", writer, " writes no ",
                                                  pb::AuditEventType_Name(type), " record"));
}

absl::Status StampWriter(absl::string_view writer, v1::LogEntry& entry) {
  if (entry.has_control_plane()) {
    std::optional<pb::Address> address = capability::AddressFromKey(writer);
    if (!address.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat("writer: not an address key: ", writer));
    }
    *entry.mutable_control_plane()->mutable_writer() = *std::move(address);
    return absl::OkStatus();
  }
  (*entry.mutable_event()->mutable_metadata()->mutable_fields())["writer"].set_string_value(
      std::string(writer));
  return absl::OkStatus();
}

}  // namespace sharedos::audit::core
