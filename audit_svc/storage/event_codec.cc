#include "audit_svc/storage/event_codec.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "capability/address.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_proto_json.h"
#include "common/status/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"

namespace sharedos::audit::storage {

using ::sharedos::audit::v1::AuditRecord;
using ::sharedos::audit::v1::ControlPlaneEvent;
using ::sharedos::audit::v1::LogEntry;
using ::sharedos::protocol::v1::AuditEvent;

namespace {

constexpr absl::string_view kControlPlanePrefix = "{\"controlPlane\":";

template <typename T>
absl::StatusOr<T> ParseStrict(absl::string_view json) {
  T message;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(json), &message, options);
  if (!status.ok()) return absl::DataLossError("stored audit record does not parse");
  return message;
}

// Earlier builds wrote control-plane records as "1" events with AuditEventType 12..17 (retired,
// ADR 0008). Their stored text is the chain's and stays as it is; read back, such a record is
// the ControlPlaneEvent it always was: the same fields, without `version`, type renamed.
std::optional<ControlPlaneEvent> FromLegacyEvent(absl::string_view json) {
  static const auto* const kLegacy = new absl::flat_hash_map<std::string, std::string>{
      {"AUDIT_EVENT_TYPE_GRANT_ISSUED", "CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED"},
      {"AUDIT_EVENT_TYPE_GRANT_DERIVED", "CONTROL_PLANE_EVENT_TYPE_GRANT_DERIVED"},
      {"AUDIT_EVENT_TYPE_GRANT_REVOKED", "CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED"},
      {"AUDIT_EVENT_TYPE_HOST_POLICY_UPDATED", "CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED"},
      {"AUDIT_EVENT_TYPE_ESCALATION_RECORDED", "CONTROL_PLANE_EVENT_TYPE_ESCALATION_RECORDED"},
      {"AUDIT_EVENT_TYPE_ESCALATION_RESOLVED", "CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED"},
  };
  absl::StatusOr<google::protobuf::Struct> object = ParseStrict<google::protobuf::Struct>(json);
  if (!object.ok()) return std::nullopt;
  auto& fields = *object->mutable_fields();
  auto version = fields.find("version");
  auto type = fields.find("type");
  if (version == fields.end() || version->second.string_value() != "1" || type == fields.end()) {
    return std::nullopt;
  }
  auto renamed = kLegacy->find(type->second.string_value());
  if (renamed == kLegacy->end()) return std::nullopt;
  type->second.set_string_value(renamed->second);
  fields.erase("version");
  std::string rewritten;
  if (!google::protobuf::util::MessageToJsonString(*object, &rewritten).ok()) return std::nullopt;
  absl::StatusOr<ControlPlaneEvent> event = ParseStrict<ControlPlaneEvent>(rewritten);
  if (!event.ok()) return std::nullopt;
  return *std::move(event);
}

// The stored text as the entry it holds.
absl::StatusOr<LogEntry> ParseEntry(absl::string_view json) {
  LogEntry entry;
  if (absl::StartsWith(json, kControlPlanePrefix)) {
    ASSIGN_OR_RETURN(entry, ParseStrict<LogEntry>(json));
    if (!entry.has_control_plane()) return absl::DataLossError("stored audit record is empty");
    return entry;
  }
  absl::StatusOr<AuditEvent> event = ParseStrict<AuditEvent>(json);
  if (event.ok()) {
    *entry.mutable_event() = *std::move(event);
    return entry;
  }
  std::optional<ControlPlaneEvent> legacy = FromLegacyEvent(json);
  if (!legacy.has_value()) return event.status();
  *entry.mutable_control_plane() = *std::move(legacy);
  return entry;
}

}  // namespace

absl::StatusOr<std::string> CanonicalControlPlaneJson(const ControlPlaneEvent& event) {
  LogEntry entry;
  *entry.mutable_control_plane() = event;
  absl::StatusOr<std::string> json = common::CanonicalProtoJson(entry);
  if (!json.ok()) {
    return absl::InternalError(
        absl::StrCat("control-plane record has no canonical JSON: ", json.status().message()));
  }
  return json;
}

absl::Status ParseRecordJson(absl::string_view json, AuditRecord& record) {
  ASSIGN_OR_RETURN(LogEntry entry, ParseEntry(json));
  if (entry.has_event()) {
    *record.mutable_event() = std::move(*entry.mutable_event());
  } else {
    *record.mutable_control_plane() = std::move(*entry.mutable_control_plane());
  }
  return absl::OkStatus();
}

absl::StatusOr<StoredKeys> StoredKeysFromJson(absl::string_view json) {
  ASSIGN_OR_RETURN(LogEntry entry, ParseEntry(json));
  if (entry.has_event()) return StoredKeys{entry.event().id(), DeriveColumns(entry.event())};
  return StoredKeys{entry.control_plane().id(), DeriveColumns(entry.control_plane())};
}

IndexedColumns DeriveColumns(const ControlPlaneEvent& event) {
  IndexedColumns columns;
  columns.type = kControlPlaneTypeColumnBase + event.type();
  columns.outcome = event.outcome();
  columns.namespace_id = event.namespace_id();
  columns.trace_id = event.trace_id();
  columns.actor = capability::AddressKey(event.actor());
  columns.at_micros = google::protobuf::util::TimeUtil::TimestampToMicroseconds(event.at());
  return columns;
}

std::optional<int> TypeColumnFilter(const sharedos::audit::v1::AuditFilter& filter) {
  if (filter.has_type()) return filter.type();
  if (filter.has_control_plane_type()) {
    return kControlPlaneTypeColumnBase + filter.control_plane_type();
  }
  return std::nullopt;
}

absl::StatusOr<std::string> CanonicalEventJson(const AuditEvent& event) {
  absl::StatusOr<std::string> json = common::CanonicalProtoJson(event);
  if (!json.ok()) {
    return absl::InternalError(
        absl::StrCat("audit event has no canonical JSON: ", json.status().message()));
  }
  return json;
}

absl::StatusOr<AuditEvent> ParseEventJson(absl::string_view json) {
  AuditEvent event;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(std::string(json), &event, options);
  if (!status.ok()) return absl::DataLossError("stored audit event does not parse");
  return event;
}

std::string ChainHash(absl::string_view prev_hash, absl::string_view canonical_json) {
  std::string input;
  input.reserve(prev_hash.size() + canonical_json.size());
  input.append(prev_hash.data(), prev_hash.size());
  input.append(canonical_json.data(), canonical_json.size());
  return common::Sha256Hex(input);
}

bool IndexedColumns::operator==(const IndexedColumns& other) const {
  return type == other.type && outcome == other.outcome && namespace_id == other.namespace_id &&
         trace_id == other.trace_id && execution_id == other.execution_id &&
         reason == other.reason && source == other.source && actor == other.actor &&
         at_micros == other.at_micros;
}

IndexedColumns DeriveColumns(const AuditEvent& event) {
  IndexedColumns columns;
  columns.type = event.type();
  columns.outcome = event.outcome();
  columns.namespace_id = event.namespace_id();
  columns.trace_id = event.trace_id();
  if (event.type() == sharedos::protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED) {
    columns.execution_id = event.operation_id();
  } else if (event.has_metadata()) {
    auto it = event.metadata().fields().find("executionId");
    if (it != event.metadata().fields().end() && it->second.has_string_value()) {
      columns.execution_id = it->second.string_value();
    }
  }
  columns.reason = event.reason();
  if (event.has_source()) columns.source = event.source();
  columns.actor = capability::AddressKey(event.actor());
  columns.at_micros = google::protobuf::util::TimeUtil::TimestampToMicroseconds(event.at());
  return columns;
}

}  // namespace sharedos::audit::storage
