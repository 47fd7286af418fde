#include "common/time/proto_time.h"

#include <google/protobuf/duration.pb.h>
#include <google/protobuf/timestamp.pb.h>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::testing::HasSubstr;

google::protobuf::Timestamp MakeTimestamp(int64_t seconds, int32_t nanos) {
  google::protobuf::Timestamp timestamp;
  timestamp.set_seconds(seconds);
  timestamp.set_nanos(nanos);
  return timestamp;
}

google::protobuf::Duration MakeDuration(int64_t seconds, int32_t nanos) {
  google::protobuf::Duration duration;
  duration.set_seconds(seconds);
  duration.set_nanos(nanos);
  return duration;
}

TEST(ProtoTimestampTest, ConvertsSecondsAndNanos) {
  const absl::Time time = absl::FromUnixSeconds(1700000000) + absl::Nanoseconds(123456789);
  const absl::StatusOr<google::protobuf::Timestamp> proto = ToProtoTimestamp(time);
  ASSERT_OK(proto);
  EXPECT_EQ(proto->seconds(), 1700000000);
  EXPECT_EQ(proto->nanos(), 123456789);
  EXPECT_THAT(FromProtoTimestamp(*proto), IsOkAndHolds(time));
}

TEST(ProtoTimestampTest, TimesBeforeTheEpochHaveNonNegativeNanos) {
  const absl::StatusOr<google::protobuf::Timestamp> proto =
      ToProtoTimestamp(absl::UnixEpoch() - absl::Milliseconds(1500));
  ASSERT_OK(proto);
  EXPECT_EQ(proto->seconds(), -2);
  EXPECT_EQ(proto->nanos(), 500000000);
}

TEST(ProtoTimestampTest, SubNanosecondsTruncateTowardsThePast) {
  const absl::StatusOr<google::protobuf::Timestamp> proto =
      ToProtoTimestamp(absl::UnixEpoch() - absl::Nanoseconds(1) / 4);
  ASSERT_OK(proto);
  EXPECT_EQ(proto->seconds(), -1);
  EXPECT_EQ(proto->nanos(), 999999999);
}

TEST(ProtoTimestampTest, RangeEdges) {
  EXPECT_THAT(FromProtoTimestamp(MakeTimestamp(-62135596800, 0)),
              IsOkAndHolds(absl::FromUnixSeconds(-62135596800)));
  EXPECT_THAT(FromProtoTimestamp(MakeTimestamp(253402300799, 999999999)),
              IsOkAndHolds(absl::FromUnixSeconds(253402300799) + absl::Nanoseconds(999999999)));
  EXPECT_THAT(ToProtoTimestamp(absl::FromUnixSeconds(253402300799) + absl::Nanoseconds(999999999)),
              IsOk());
  EXPECT_THAT(ToProtoTimestamp(absl::FromUnixSeconds(253402300800)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("outside the google.protobuf.Timestamp range")));
  EXPECT_THAT(ToProtoTimestamp(absl::FromUnixSeconds(-62135596801)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ToProtoTimestamp(absl::InfiniteFuture()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ToProtoTimestamp(absl::InfinitePast()), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ProtoTimestampTest, RejectsInvalidProtos) {
  EXPECT_THAT(FromProtoTimestamp(MakeTimestamp(253402300800, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Timestamp seconds 253402300800 outside "
                       "[-62135596800, 253402300799]"));
  EXPECT_THAT(
      FromProtoTimestamp(MakeTimestamp(0, -1)),
      StatusIs(absl::StatusCode::kInvalidArgument, "Timestamp nanos -1 outside [0, 999999999]"));
  EXPECT_THAT(FromProtoTimestamp(MakeTimestamp(0, 1000000000)),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(ProtoDurationTest, ConvertsWithTheSignOnBothFields) {
  absl::StatusOr<google::protobuf::Duration> proto = ToProtoDuration(absl::Milliseconds(-1500));
  ASSERT_OK(proto);
  EXPECT_EQ(proto->seconds(), -1);
  EXPECT_EQ(proto->nanos(), -500000000);
  EXPECT_THAT(FromProtoDuration(*proto), IsOkAndHolds(absl::Milliseconds(-1500)));

  proto = ToProtoDuration(absl::Seconds(5) + absl::Nanoseconds(7));
  ASSERT_OK(proto);
  EXPECT_EQ(proto->seconds(), 5);
  EXPECT_EQ(proto->nanos(), 7);

  proto = ToProtoDuration(absl::Nanoseconds(-3));
  ASSERT_OK(proto);
  EXPECT_EQ(proto->seconds(), 0);
  EXPECT_EQ(proto->nanos(), -3);
}

TEST(ProtoDurationTest, RangeAndValidity) {
  EXPECT_THAT(ToProtoDuration(absl::InfiniteDuration()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("outside the google.protobuf.Duration range")));
  EXPECT_THAT(ToProtoDuration(-absl::InfiniteDuration()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ToProtoDuration(absl::Seconds(315576000001)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ToProtoDuration(absl::Seconds(315576000000)), IsOk());
  EXPECT_THAT(FromProtoDuration(MakeDuration(1, -1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Duration seconds and nanos have opposite signs"));
  EXPECT_THAT(FromProtoDuration(MakeDuration(-1, 1)), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FromProtoDuration(MakeDuration(0, 1000000000)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "Duration nanos 1000000000 outside "
                       "[-999999999, 999999999]"));
  EXPECT_THAT(FromProtoDuration(MakeDuration(315576000001, 0)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(FromProtoDuration(MakeDuration(0, -5)), IsOkAndHolds(absl::Nanoseconds(-5)));
}

}  // namespace
}  // namespace sharedos::common
