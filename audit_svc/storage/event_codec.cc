#include "audit_svc/storage/event_codec.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "capability/address.h"
#include "common/crypto/sha256.h"
#include "common/json/canonical_proto_json.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/time_util.h"

namespace sharedos::audit::storage {

using ::sharedos::protocol::v1::AuditEvent;

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
