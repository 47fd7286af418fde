// Conversions between absl time types and google.protobuf.Timestamp / Duration.

#ifndef SHAREDOS_COMMON_TIME_PROTO_TIME_H_
#define SHAREDOS_COMMON_TIME_PROTO_TIME_H_

#include <google/protobuf/duration.pb.h>
#include <google/protobuf/timestamp.pb.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace sharedos::common {

// Returns the Timestamp for `time`, sub-nanosecond parts truncated towards the
// past. Errors: INVALID_ARGUMENT outside the Timestamp range
// 0001-01-01T00:00:00Z..9999-12-31T23:59:59.999999999Z (including infinite
// times).
absl::StatusOr<google::protobuf::Timestamp> ToProtoTimestamp(absl::Time time);

// Returns the time of `timestamp`. Errors: INVALID_ARGUMENT when `seconds` is
// outside the Timestamp range or `nanos` outside [0, 999999999].
absl::StatusOr<absl::Time> FromProtoTimestamp(const google::protobuf::Timestamp& timestamp);

// Returns the Duration for `duration`, sub-nanosecond parts truncated towards
// zero. Errors: INVALID_ARGUMENT beyond +-10000 years (the Duration range) or
// infinite.
absl::StatusOr<google::protobuf::Duration> ToProtoDuration(absl::Duration duration);

// Returns the absl::Duration of `duration`. Errors: INVALID_ARGUMENT when
// `seconds` is beyond +-315576000000, `nanos` beyond +-999999999, or the two
// have opposite signs.
absl::StatusOr<absl::Duration> FromProtoDuration(const google::protobuf::Duration& duration);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_TIME_PROTO_TIME_H_
