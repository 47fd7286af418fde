// Conversions between google.protobuf.Value/Struct/ListValue (how JSON travels
// in our protos) and nlohmann::json (how the core handles it). Stateless
// functions, safe to call from any thread.
//
// Numbers: a Value holds a double. Integral doubles with |x| <= 2^53 become
// JSON integers (so nlohmann prints `1`, not `1.0`); larger ones stay doubles
// so that CanonicalJson prints them as JavaScript would. NaN and infinities are
// refused. JSON integers become doubles only when the double holds them
// exactly; others are refused rather than silently rounded.
//
// Nesting deeper than kMaxProtoJsonDepth is refused (the conversion recurses).
// Note that protobuf's default parse recursion limit (100 messages, 2-3 per
// JSON level) already bounds a Value received on the wire to a few dozen JSON
// levels.

#ifndef SHAREDOS_COMMON_JSON_PROTO_JSON_H_
#define SHAREDOS_COMMON_JSON_PROTO_JSON_H_

#include <google/protobuf/struct.pb.h>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace sharedos::common {

inline constexpr int kMaxProtoJsonDepth = 100;

// Errors, all INVALID_ARGUMENT naming the JSON pointer of the culprit:
//   Proto*ToJson: a Value with no kind set, a NaN/infinite number_value, or
//     nesting deeper than kMaxProtoJsonDepth.
//   JsonToProto*: a NaN/infinite number, an integer a double cannot hold
//     exactly, a binary or discarded value, nesting deeper than
//     kMaxProtoJsonDepth, or a top-level value that is not an object (for
//     Struct) or an array (for ListValue).
// Strings are copied as bytes; protobuf itself refuses ill-formed UTF-8 on the
// wire.
absl::StatusOr<nlohmann::json> ProtoValueToJson(const google::protobuf::Value& value);
absl::StatusOr<nlohmann::json> ProtoStructToJson(const google::protobuf::Struct& value);
absl::StatusOr<nlohmann::json> ProtoListValueToJson(const google::protobuf::ListValue& value);

absl::StatusOr<google::protobuf::Value> JsonToProtoValue(const nlohmann::json& json);
absl::StatusOr<google::protobuf::Struct> JsonToProtoStruct(const nlohmann::json& json);
absl::StatusOr<google::protobuf::ListValue> JsonToProtoListValue(const nlohmann::json& json);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_JSON_PROTO_JSON_H_
