#include "common/time/rfc3339.h"

#include <string>

#include "absl/status/status.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::testing::HasSubstr;

absl::Time Utc(int year, int month, int day, int hour, int minute, int second) {
  return absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second),
                         absl::UTCTimeZone());
}

struct ParseCase {
  const char* text;
  absl::Time expected;
};

TEST(ParseRfc3339Test, AcceptsValidForms) {
  const ParseCase cases[] = {
      {"1970-01-01T00:00:00Z", absl::UnixEpoch()},
      {"2024-05-01T12:34:56Z", Utc(2024, 5, 1, 12, 34, 56)},
      {"2024-05-01T12:34:56.5Z", Utc(2024, 5, 1, 12, 34, 56) + absl::Milliseconds(500)},
      {"2024-05-01T12:34:56.123456789Z",
       Utc(2024, 5, 1, 12, 34, 56) + absl::Nanoseconds(123456789)},
      {"2024-05-01T12:34:56.1234567899Z",
       Utc(2024, 5, 1, 12, 34, 56) + absl::Nanoseconds(123456789)},
      {"2024-05-01T14:34:56+02:00", Utc(2024, 5, 1, 12, 34, 56)},
      {"2024-05-01T00:00:00-05:30", Utc(2024, 5, 1, 5, 30, 0)},
      {"2024-12-31T23:30:00-01:00", Utc(2025, 1, 1, 0, 30, 0)},
      {"2024-02-29T00:00:00Z", Utc(2024, 2, 29, 0, 0, 0)},
      {"2000-02-29T23:59:59.000Z", Utc(2000, 2, 29, 23, 59, 59)},
      {"0000-01-01T00:00:00Z", Utc(0, 1, 1, 0, 0, 0)},
      {"9999-12-31T23:59:59.999999999+00:00",
       Utc(9999, 12, 31, 23, 59, 59) + absl::Nanoseconds(999999999)},
  };
  for (const ParseCase& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(ParseRfc3339(c.text), IsOkAndHolds(c.expected));
  }
}

struct InvalidCase {
  const char* text;
  const char* reason;
};

TEST(ParseRfc3339Test, RejectsEverythingElse) {
  const InvalidCase cases[] = {
      {"", "expected a YYYY-MM-DD date"},
      {"2024-05-01", "expected 'T' after the date"},
      {"2024-05-01T12:34:56", "expected 'Z' or a +hh:mm/-hh:mm offset"},
      {"2024-13-01T00:00:00Z", "month out of range"},
      {"2024-00-10T00:00:00Z", "month out of range"},
      {"2024-02-30T00:00:00Z", "day out of range for the month"},
      {"2023-02-29T00:00:00Z", "day out of range for the month"},
      {"2024-04-31T00:00:00Z", "day out of range for the month"},
      {"2024-05-00T00:00:00Z", "day out of range for the month"},
      {"2024-05-01T24:00:00Z", "time of day out of range"},
      {"2024-05-01T12:60:00Z", "time of day out of range"},
      {"2024-05-01T12:00:60Z", "time of day out of range"},
      {"2024-05-01 12:34:56Z", "expected 'T' after the date"},
      {"2024-05-01t12:34:56Z", "expected 'T' after the date"},
      {"2024-05-01T12:34:56z", "expected 'Z' or a +hh:mm/-hh:mm offset"},
      {"2024-05-01T12:34:56.Z", "expected digits after '.'"},
      {"2024-05-01T12:34:56+0200", "expected a +hh:mm or -hh:mm offset"},
      {"2024-05-01T12:34:56+02", "expected a +hh:mm or -hh:mm offset"},
      {"2024-05-01T12:34:56+24:00", "offset out of range"},
      {"2024-05-01T12:34:56+02:60", "offset out of range"},
      {"2024-05-01T12:34:56Zjunk", "unexpected text after the offset"},
      {"2024-5-01T12:34:56Z", "expected a YYYY-MM-DD date"},
      {"+2024-05-01T12:34:56Z", "expected a YYYY-MM-DD date"},
      {"2024-05-01T1:34:56Z", "expected an HH:MM:SS time"},
      {" 2024-05-01T12:34:56Z", "expected a YYYY-MM-DD date"},
      {"2024-05-01T12:34:56Z ", "unexpected text after the offset"},
  };
  for (const InvalidCase& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_THAT(ParseRfc3339(c.text), StatusIs(absl::StatusCode::kInvalidArgument,
                                               std::string("invalid RFC 3339 timestamp \"") +
                                                   c.text + "\": " + c.reason));
  }
}

TEST(ParseRfc3339Test, LongInputIsTruncatedInTheMessage) {
  const std::string text = "2024-05-01T12:34:56Z" + std::string(100, 'x');
  EXPECT_THAT(ParseRfc3339(text), StatusIs(absl::StatusCode::kInvalidArgument,
                                           "invalid RFC 3339 timestamp \"" + text.substr(0, 64) +
                                               "...\": unexpected text after the offset"));
}

struct FormatCase {
  absl::Time time;
  const char* expected;
};

TEST(FormatRfc3339Test, FormatsUtcWithProtobufStyleFractions) {
  const absl::Time base = Utc(2024, 5, 1, 12, 34, 56);
  const FormatCase cases[] = {
      {absl::UnixEpoch(), "1970-01-01T00:00:00Z"},
      {base, "2024-05-01T12:34:56Z"},
      {base + absl::Milliseconds(500), "2024-05-01T12:34:56.500Z"},
      {base + absl::Microseconds(1500), "2024-05-01T12:34:56.001500Z"},
      {base + absl::Nanoseconds(1), "2024-05-01T12:34:56.000000001Z"},
      {base + absl::Nanoseconds(123456789), "2024-05-01T12:34:56.123456789Z"},
      {base + absl::Nanoseconds(1) / 4, "2024-05-01T12:34:56Z"},
      {absl::UnixEpoch() - absl::Nanoseconds(1), "1969-12-31T23:59:59.999999999Z"},
      {Utc(5, 3, 4, 5, 6, 7), "0005-03-04T05:06:07Z"},
      {absl::InfiniteFuture(), "9999-12-31T23:59:59.999999999Z"},
      {Utc(10000, 1, 1, 0, 0, 0), "9999-12-31T23:59:59.999999999Z"},
      {absl::InfinitePast(), "0000-01-01T00:00:00Z"},
      {Utc(-1, 12, 31, 0, 0, 0), "0000-01-01T00:00:00Z"},
  };
  for (const FormatCase& c : cases) {
    EXPECT_EQ(FormatRfc3339(c.time), c.expected);
  }
}

TEST(FormatRfc3339Test, RoundTripsThroughParse) {
  const absl::Time times[] = {
      absl::UnixEpoch(),
      Utc(2024, 2, 29, 23, 59, 59) + absl::Microseconds(7),
      Utc(1, 1, 1, 0, 0, 0),
      Utc(1969, 7, 20, 20, 17, 40) + absl::Nanoseconds(999999999),
  };
  for (absl::Time time : times) {
    const std::string text = FormatRfc3339(time);
    EXPECT_THAT(ParseRfc3339(text), IsOkAndHolds(time)) << text;
  }
}

TEST(FormatRfc3339Test, OffsetsNormaliseToUtc) {
  const absl::StatusOr<absl::Time> parsed = ParseRfc3339("2024-05-01T23:30:00.25-02:00");
  ASSERT_OK(parsed);
  EXPECT_EQ(FormatRfc3339(*parsed), "2024-05-02T01:30:00.250Z");
  EXPECT_THAT(ParseRfc3339("x"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"x\"")));
}

}  // namespace
}  // namespace sharedos::common
