// Rejects protobuf unknown fields anywhere in a message tree (architecture §5,
// "Strict").
//
// Protobuf keeps fields it does not know on parse; a strict protocol "1" reader
// refuses them instead of silently carrying or dropping data. Thread-safe.

#ifndef SHAREDOS_COMMON_VALIDATION_UNKNOWN_FIELDS_H_
#define SHAREDOS_COMMON_VALIDATION_UNKNOWN_FIELDS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/validation/bounds.h"
#include "google/protobuf/message.h"

namespace sharedos::common::validation {

// Walks `message` by reflection (singular and repeated message fields, oneofs,
// map values, google.protobuf.Struct/Value/ListValue contents) and returns
// INVALID_ARGUMENT
// "<path>.<field path>: unknown field <number>" for the first message carrying
// an unknown field, e.g. "request.context.actor: unknown field 9" or
// "grant.capabilities[2].resource: unknown field 7". Repeated elements are
// named "field[i]", map values "field[\"key\"]" (maps are walked in key order);
// Struct/Value contents are named as JSON ("metadata[\"k\"][0]"). Returns OK
// otherwise.
//
// Protobuf itself discards unknown tags inside a map entry's key/value wrapper,
// so those cannot be seen here; the map values' own contents are checked.
absl::Status RejectUnknownFields(const google::protobuf::Message& message, const PathRef& path);

}  // namespace sharedos::common::validation

#endif  // SHAREDOS_COMMON_VALIDATION_UNKNOWN_FIELDS_H_
