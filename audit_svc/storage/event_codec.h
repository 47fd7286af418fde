#ifndef SHAREDOS_AUDIT_SVC_STORAGE_EVENT_CODEC_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_EVENT_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sharedos/audit/v1/audit.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"

namespace sharedos::audit::storage {

// The event's canonical form, the one the hash chain covers and the store keeps: canonical JSON
// (code-unit key order, no whitespace) of the event's proto3 JSON mapping (camelCase names, enum
// names, RFC 3339 timestamps, int64 as strings), written by common/json/canonical_proto_json.
// Any reader can recompute a record's hash from this text alone.
// Errors: INTERNAL (the event cannot be printed; it was validated before, so this is a bug).
absl::StatusOr<std::string> CanonicalEventJson(const sharedos::protocol::v1::AuditEvent& event);

// The inverse; rejects unknown fields. Errors: DATA_LOSS (stored text no longer parses).
absl::StatusOr<sharedos::protocol::v1::AuditEvent> ParseEventJson(absl::string_view json);

// A control-plane record's canonical form: the canonical JSON of a LogEntry holding it,
// {"controlPlane":{…}} — never a protocol "1" event's shape, so no reader of the stored text can
// take one for the other. Errors: INTERNAL (as CanonicalEventJson).
absl::StatusOr<std::string> CanonicalControlPlaneJson(
    const sharedos::audit::v1::ControlPlaneEvent& event);

// The stored text back into `record.event` or `record.control_plane`, whichever it holds.
// Also reads the control-plane records earlier builds wrote as "1" events with the types
// protocol "1" retired (12..17, docs/adr/0008): their stored text, and so their hash, is
// unchanged; they come back as control-plane records. Errors: DATA_LOSS (no longer parses).
absl::Status ParseRecordJson(absl::string_view json, sharedos::audit::v1::AuditRecord& record);

// SHA-256 (lowercase hex) of prev_hash (64 hex chars) followed by the canonical JSON.
std::string ChainHash(absl::string_view prev_hash, absl::string_view canonical_json);

// The columns a store indexes an event by; derived from the event alone, so Verify can tell an
// edited column from the event it claims to index.
struct IndexedColumns {
  int type = 0;
  int outcome = 0;
  std::string namespace_id;
  std::string trace_id;
  // turn.ended: operation_id; otherwise metadata.executionId when it is a string; else empty.
  std::string execution_id;
  std::string reason;
  std::optional<int> source;
  // "<kind>:<id>" of the actor.
  std::string actor;
  int64_t at_micros = 0;

  bool operator==(const IndexedColumns& other) const;
};
IndexedColumns DeriveColumns(const sharedos::protocol::v1::AuditEvent& event);
// A control-plane record's columns: `type` is kControlPlaneTypeColumnBase + its type (12..17,
// the numbers protocol "1" retired and reserves, so one column never confuses the kinds); no
// reason, no source; execution_id empty.
IndexedColumns DeriveColumns(const sharedos::audit::v1::ControlPlaneEvent& event);
inline constexpr int kControlPlaneTypeColumnBase = 11;

// The `type` column value a filter asks for (from `type` or `control_plane_type`), if any.
std::optional<int> TypeColumnFilter(const sharedos::audit::v1::AuditFilter& filter);

// A stored record's id and columns, recomputed from its canonical JSON (for Verify).
struct StoredKeys {
  std::string id;
  IndexedColumns columns;
};
// Errors: DATA_LOSS (as ParseRecordJson).
absl::StatusOr<StoredKeys> StoredKeysFromJson(absl::string_view json);

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_EVENT_CODEC_H_
