// Canonical JSON (canonical_json.h: code-unit key order, no whitespace, ECMAScript numbers)
// of a protobuf message's proto3 JSON mapping, written directly from the message by
// reflection — the same text as CanonicalJson(parse(MessageToJsonString(message))) with
// default print options, without the intermediate documents (an order of magnitude faster).
//
// The mapping: fields under their json_name; scalars at their default omitted unless the field
// tracks presence (message fields, oneof members, proto3 `optional`); 64-bit integers as
// strings; enums by name (unknown numbers as numbers); bytes as standard base64; Timestamp as
// RFC 3339 UTC with 0, 3, 6 or 9 fraction digits; Duration as "<seconds>[.fff…]s"; Struct,
// Value, ListValue and the wrapper types as the JSON they stand for. Doubles render as
// ECMAScript Number::toString, integral ones beyond 2^53 included (where parsing the printer's
// output into a JSON integer would keep every digit).

#ifndef SHAREDOS_COMMON_JSON_CANONICAL_PROTO_JSON_H_
#define SHAREDOS_COMMON_JSON_CANONICAL_PROTO_JSON_H_

#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace sharedos::common {

// Errors: INVALID_ARGUMENT for what the mapping cannot express: google.protobuf.Any or
// FieldMask anywhere in the message, a NaN or infinite number, ill-formed UTF-8, a Timestamp or
// Duration out of range. The message names the field path, never a value. Thread-safe.
absl::StatusOr<std::string> CanonicalProtoJson(const google::protobuf::Message& message);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_JSON_CANONICAL_PROTO_JSON_H_
