// Operator-facing names for protocol values: addresses as `kind:id`, audit event types by their
// reference names ("tool.invoked"), sources, escalation statuses, RFC 3339 timestamps. Pure
// functions, no I/O.
#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_NAMES_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_NAMES_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/timestamp.pb.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/common.pb.h"

namespace sharedos::grantstore::client {

// "human:alice", "agent:a", "group:g", "service:s". Errors: INVALID_ARGUMENT (no colon, unknown
// kind, empty id).
absl::StatusOr<protocol::v1::Address> ParseAddress(absl::string_view text);
// The inverse of ParseAddress; "-" for an address with no kind set.
std::string FormatAddress(const protocol::v1::Address& address);

// "tool.invoked" → AUDIT_EVENT_TYPE_TOOL_INVOKED: the eleven protocol "1" types only.
// Errors: INVALID_ARGUMENT (unknown name).
absl::StatusOr<protocol::v1::AuditEventType> ParseAuditEventType(absl::string_view name);
// The reference name; "unspecified" for UNSPECIFIED or an unknown number.
std::string AuditEventTypeName(protocol::v1::AuditEventType type);

// An audit --type: a protocol "1" type sets filter.type (returns UNSPECIFIED), a control-plane
// type ("grant.issued" … "escalation.resolved") sets filter.control_plane_type (and is returned).
// Errors: INVALID_ARGUMENT (neither; the message lists both vocabularies).
absl::StatusOr<audit::v1::ControlPlaneEventType> ParseRecordType(absl::string_view name,
                                                                 audit::v1::AuditFilter& filter);
// "grant.issued" …; "unspecified" for UNSPECIFIED or an unknown number.
std::string ControlPlaneEventTypeName(audit::v1::ControlPlaneEventType type);

// "allowed", "denied", "succeeded", "failed", "escalated", "interrupted".
absl::StatusOr<protocol::v1::AuditOutcome> ParseAuditOutcome(absl::string_view name);
std::string AuditOutcomeName(protocol::v1::AuditOutcome outcome);

// "kernel" | "envelope".
absl::StatusOr<protocol::v1::AuditSource> ParseAuditSource(absl::string_view name);
// The inverse of ParseAuditSource; "unspecified" for UNSPECIFIED or an unknown number.
std::string AuditSourceName(protocol::v1::AuditSource source);

// "pending" | "approved" | "denied".
absl::StatusOr<grantstore::v1::EscalationRecordStatus> ParseEscalationStatus(
    absl::string_view name);
std::string EscalationStatusName(grantstore::v1::EscalationRecordStatus status);

// RFC 3339 ("2026-08-11T10:00:00Z"). Errors: INVALID_ARGUMENT.
absl::StatusOr<google::protobuf::Timestamp> ParseTimestamp(absl::string_view text);
// RFC 3339 in UTC; "-" for an unset (zero) timestamp.
std::string FormatTimestamp(const google::protobuf::Timestamp& timestamp);

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_OPERATOR_NAMES_H_
