#include "common/time/proto_time.h"

#include <google/protobuf/duration.pb.h>
#include <google/protobuf/timestamp.pb.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace sharedos::common {
namespace {

// google/protobuf/timestamp.proto and duration.proto.
constexpr int64_t kTimestampMinSeconds = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t kTimestampMaxSeconds = 253402300799;  // 9999-12-31T23:59:59Z
constexpr int64_t kDurationMaxSeconds = 315576000000;   // 10000 years
constexpr int32_t kMaxNanos = 999999999;

}  // namespace

absl::StatusOr<google::protobuf::Timestamp> ToProtoTimestamp(absl::Time time) {
  if (time < absl::FromUnixSeconds(kTimestampMinSeconds) ||
      time >= absl::FromUnixSeconds(kTimestampMaxSeconds + 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("time ", absl::FormatTime(time, absl::UTCTimeZone()),
                     " is outside the google.protobuf.Timestamp range"));
  }
  const int64_t seconds = absl::ToUnixSeconds(time);  // Floors.
  google::protobuf::Timestamp result;
  result.set_seconds(seconds);
  result.set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(time - absl::FromUnixSeconds(seconds))));
  return result;
}

absl::StatusOr<absl::Time> FromProtoTimestamp(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() < kTimestampMinSeconds || timestamp.seconds() > kTimestampMaxSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("Timestamp seconds ", timestamp.seconds(),
                                                   " outside [", kTimestampMinSeconds, ", ",
                                                   kTimestampMaxSeconds, "]"));
  }
  if (timestamp.nanos() < 0 || timestamp.nanos() > kMaxNanos) {
    return absl::InvalidArgumentError(
        absl::StrCat("Timestamp nanos ", timestamp.nanos(), " outside [0, 999999999]"));
  }
  return absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
}

absl::StatusOr<google::protobuf::Duration> ToProtoDuration(absl::Duration duration) {
  absl::Duration remainder;
  const int64_t seconds = absl::IDivDuration(duration, absl::Seconds(1), &remainder);
  if (duration == absl::InfiniteDuration() || duration == -absl::InfiniteDuration() ||
      seconds > kDurationMaxSeconds || seconds < -kDurationMaxSeconds) {
    return absl::InvalidArgumentError(
        absl::StrCat("duration ", absl::FormatDuration(duration),
                     " is outside the google.protobuf.Duration range"));
  }
  google::protobuf::Duration result;
  result.set_seconds(seconds);
  // Truncates towards zero, so it has the sign of `seconds` (or seconds is 0).
  result.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(remainder)));
  return result;
}

absl::StatusOr<absl::Duration> FromProtoDuration(const google::protobuf::Duration& duration) {
  if (duration.seconds() < -kDurationMaxSeconds || duration.seconds() > kDurationMaxSeconds) {
    return absl::InvalidArgumentError(absl::StrCat("Duration seconds ", duration.seconds(),
                                                   " outside [-315576000000, 315576000000]"));
  }
  if (duration.nanos() < -kMaxNanos || duration.nanos() > kMaxNanos) {
    return absl::InvalidArgumentError(
        absl::StrCat("Duration nanos ", duration.nanos(), " outside [-999999999, 999999999]"));
  }
  if ((duration.seconds() > 0 && duration.nanos() < 0) ||
      (duration.seconds() < 0 && duration.nanos() > 0)) {
    return absl::InvalidArgumentError("Duration seconds and nanos have opposite signs");
  }
  return absl::Seconds(duration.seconds()) + absl::Nanoseconds(duration.nanos());
}

}  // namespace sharedos::common
