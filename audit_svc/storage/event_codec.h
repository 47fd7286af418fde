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

}  // namespace sharedos::audit::storage

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_EVENT_CODEC_H_
