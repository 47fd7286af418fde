#include "common/time/rfc3339.h"

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace sharedos::common {
namespace {

constexpr size_t kMaxQuotedInput = 64;

absl::Status InvalidTimestamp(absl::string_view text, absl::string_view why) {
  const absl::string_view shown = text.substr(0, kMaxQuotedInput);
  return absl::InvalidArgumentError(
      absl::StrCat("invalid RFC 3339 timestamp \"", shown,
                   shown.size() < text.size() ? "...\": " : "\": ", why));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly `count` ASCII digits at `*pos`, advancing it.
bool ReadNumber(absl::string_view text, size_t* pos, int count, int* value) {
  if (text.size() - *pos < static_cast<size_t>(count)) return false;
  int result = 0;
  for (int i = 0; i < count; ++i) {
    const char c = text[*pos + i];
    if (!IsDigit(c)) return false;
    result = result * 10 + (c - '0');
  }
  *pos += count;
  *value = result;
  return true;
}

bool ReadChar(absl::string_view text, size_t* pos, char expected) {
  if (*pos >= text.size() || text[*pos] != expected) return false;
  ++*pos;
  return true;
}

absl::Time MinFormattable() {
  return absl::FromCivil(absl::CivilSecond(0, 1, 1, 0, 0, 0), absl::UTCTimeZone());
}

absl::Time MaxFormattable() {
  return absl::FromCivil(absl::CivilSecond(9999, 12, 31, 23, 59, 59), absl::UTCTimeZone()) +
         absl::Nanoseconds(999999999);
}

}  // namespace

absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text) {
  size_t pos = 0;
  int year, month, day, hour, minute, second;
  if (!ReadNumber(text, &pos, 4, &year) || !ReadChar(text, &pos, '-') ||
      !ReadNumber(text, &pos, 2, &month) || !ReadChar(text, &pos, '-') ||
      !ReadNumber(text, &pos, 2, &day)) {
    return InvalidTimestamp(text, "expected a YYYY-MM-DD date");
  }
  if (!ReadChar(text, &pos, 'T')) {
    return InvalidTimestamp(text, "expected 'T' after the date");
  }
  if (!ReadNumber(text, &pos, 2, &hour) || !ReadChar(text, &pos, ':') ||
      !ReadNumber(text, &pos, 2, &minute) || !ReadChar(text, &pos, ':') ||
      !ReadNumber(text, &pos, 2, &second)) {
    return InvalidTimestamp(text, "expected an HH:MM:SS time");
  }

  int64_t nanos = 0;
  if (ReadChar(text, &pos, '.')) {
    int digits = 0;
    for (; pos < text.size() && IsDigit(text[pos]); ++pos, ++digits) {
      if (digits < 9) nanos = nanos * 10 + (text[pos] - '0');
    }
    if (digits == 0) {
      return InvalidTimestamp(text, "expected digits after '.'");
    }
    for (; digits < 9; ++digits) nanos *= 10;
  }

  int offset_minutes = 0;
  if (ReadChar(text, &pos, 'Z')) {
    // UTC.
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int offset_hour, offset_minute;
    if (!ReadNumber(text, &pos, 2, &offset_hour) || !ReadChar(text, &pos, ':') ||
        !ReadNumber(text, &pos, 2, &offset_minute)) {
      return InvalidTimestamp(text, "expected a +hh:mm or -hh:mm offset");
    }
    if (offset_hour > 23 || offset_minute > 59) {
      return InvalidTimestamp(text, "offset out of range");
    }
    offset_minutes = sign * (offset_hour * 60 + offset_minute);
  } else {
    return InvalidTimestamp(text, "expected 'Z' or a +hh:mm/-hh:mm offset");
  }
  if (pos != text.size()) {
    return InvalidTimestamp(text, "unexpected text after the offset");
  }

  if (month < 1 || month > 12) {
    return InvalidTimestamp(text, "month out of range");
  }
  // CivilDay normalises overflowing days (Feb 30 -> Mar 1/2); a changed month
  // means the day does not exist.
  const absl::CivilDay civil_day(year, month, day);
  if (day < 1 || civil_day.month() != month || civil_day.day() != day) {
    return InvalidTimestamp(text, "day out of range for the month");
  }
  if (hour > 23 || minute > 59 || second > 59) {
    return InvalidTimestamp(text, "time of day out of range");
  }

  const absl::CivilSecond civil(year, month, day, hour, minute, second);
  return absl::FromCivil(civil, absl::UTCTimeZone()) - absl::Minutes(offset_minutes) +
         absl::Nanoseconds(nanos);
}

std::string FormatRfc3339(absl::Time time) {
  const absl::Time min = MinFormattable();
  const absl::Time max = MaxFormattable();
  if (time < min) time = min;
  if (time > max) time = max;

  const int64_t seconds = absl::ToUnixSeconds(time);  // Floors.
  const absl::Time whole = absl::FromUnixSeconds(seconds);
  const int64_t nanos = absl::ToInt64Nanoseconds(time - whole);  // [0, 1e9).
  const absl::CivilSecond civil = absl::ToCivilSecond(whole, absl::UTCTimeZone());

  std::string result = absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d", civil.year(), civil.month(),
                                       civil.day(), civil.hour(), civil.minute(), civil.second());
  if (nanos == 0) {
    // No fraction.
  } else if (nanos % 1000000 == 0) {
    absl::StrAppendFormat(&result, ".%03d", nanos / 1000000);
  } else if (nanos % 1000 == 0) {
    absl::StrAppendFormat(&result, ".%06d", nanos / 1000);
  } else {
    absl::StrAppendFormat(&result, ".%09d", nanos);
  }
  result.push_back('Z');
  return result;
}

}  // namespace sharedos::common
