// RFC 3339 timestamps, the wire form of every `Timestamp` in the semantics
// (Zod `datetime({offset: true})`).

#ifndef SHAREDOS_COMMON_TIME_RFC3339_H_
#define SHAREDOS_COMMON_TIME_RFC3339_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::common {

// Parses `YYYY-MM-DDTHH:MM:SS[.f+](Z|+hh:mm|-hh:mm)`: uppercase `T` and `Z`, a
// colon in the offset, one or more fraction digits (digits past nanoseconds are
// truncated). Calendar fields are checked (month 1-12, day within the month,
// hour 0-23, minute and second 0-59: no leap second; offset up to 23:59).
// Errors: INVALID_ARGUMENT for anything else, e.g. a missing offset, `+0200`, a
// space or lowercase `t` separator, month 13, Feb 30.
absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text);

// Formats `time` in UTC as `YYYY-MM-DDTHH:MM:SS[.fff|.ffffff|.fffffffff]Z`: the
// fraction only when non-zero, with 3, 6 or 9 digits like protobuf's TimeUtil
// (sub-nanosecond parts are truncated). Times outside
// 0000-01-01T00:00:00Z..9999-12-31T23:59:59.999999999Z (including the infinite
// times) are clamped to that range, so the output always parses.
std::string FormatRfc3339(absl::Time time);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_TIME_RFC3339_H_
