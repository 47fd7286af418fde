#include "common/status/status_matchers.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::testing::DescribeMatcher;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::ExplainMatchResult;
using ::testing::Gt;
using ::testing::HasSubstr;
using ::testing::Matcher;
using ::testing::Not;
using ::testing::StringMatchResultListener;

TEST(StatusIsTest, MatchesStatusCodeAndExactMessage) {
  const absl::Status status = absl::NotFoundError("grant g1 not found");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, "grant g1 not found"));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, HasSubstr("g1")));
}

TEST(StatusIsTest, MatchesStatusOr) {
  const absl::StatusOr<int> error = absl::InvalidArgumentError("bad month");
  EXPECT_THAT(error, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("month")));
  const absl::StatusOr<int> value = 3;
  EXPECT_THAT(value, StatusIs(absl::StatusCode::kOk, ""));
}

TEST(StatusIsTest, MismatchFails) {
  const absl::Status status = absl::NotFoundError("grant g1 not found");
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kAlreadyExists)));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kNotFound, "grant g1")));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kNotFound, HasSubstr("g2"))));
  EXPECT_THAT(absl::OkStatus(), Not(StatusIs(absl::StatusCode::kNotFound)));
  const absl::StatusOr<std::string> value = std::string("x");
  EXPECT_THAT(value, Not(StatusIs(absl::StatusCode::kInternal)));
}

TEST(StatusIsTest, AcceptsCodeMatchers) {
  EXPECT_THAT(absl::InternalError("x"), StatusIs(Not(absl::StatusCode::kOk), "x"));
}

TEST(StatusIsTest, ExplainsAMessageMismatch) {
  StringMatchResultListener listener;
  EXPECT_FALSE(ExplainMatchResult(StatusIs(absl::StatusCode::kAborted, "exact"),
                                  absl::StatusOr<int>(absl::AbortedError("other")), &listener));
  EXPECT_EQ(listener.str(), "whose message doesn't match");
}

TEST(StatusIsTest, DescribesAndExplains) {
  const Matcher<const absl::Status&> matcher =
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("g1"));
  EXPECT_EQ(DescribeMatcher<const absl::Status&>(matcher),
            "has a status code that is equal to NOT_FOUND, and has an error "
            "message that has substring \"g1\"");
  StringMatchResultListener listener;
  EXPECT_FALSE(ExplainMatchResult(matcher, absl::AbortedError("g1"), &listener));
  EXPECT_EQ(listener.str(), "whose code doesn't match");
}

TEST(IsOkTest, MatchesOkStatusAndStatusOr) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(1), IsOk());
  EXPECT_OK(absl::OkStatus());
  ASSERT_OK(absl::StatusOr<std::string>("s"));
}

TEST(IsOkTest, MismatchFails) {
  EXPECT_THAT(absl::InternalError("boom"), Not(IsOk()));
  EXPECT_THAT(absl::StatusOr<int>(absl::InternalError("boom")), Not(IsOk()));
  StringMatchResultListener listener;
  EXPECT_FALSE(ExplainMatchResult(IsOk(), absl::DataLossError("torn"), &listener));
  EXPECT_EQ(listener.str(), "");
}

TEST(IsOkAndHoldsTest, MatchesValue) {
  EXPECT_THAT(absl::StatusOr<int>(5), IsOkAndHolds(5));
  EXPECT_THAT(absl::StatusOr<int>(5), IsOkAndHolds(Gt(4)));
  EXPECT_THAT(absl::StatusOr<std::string>("alice"), IsOkAndHolds(HasSubstr("lic")));
  EXPECT_THAT((absl::StatusOr<std::vector<int>>(std::vector<int>{1, 2})),
              IsOkAndHolds(ElementsAre(1, 2)));
  EXPECT_THAT(absl::StatusOr<std::unique_ptr<int>>(std::make_unique<int>(3)),
              IsOkAndHolds(::testing::Pointee(3)));
}

TEST(IsOkAndHoldsTest, MismatchFails) {
  EXPECT_THAT(absl::StatusOr<int>(5), Not(IsOkAndHolds(6)));
  EXPECT_THAT(absl::StatusOr<int>(absl::NotFoundError("x")), Not(IsOkAndHolds(5)));
  StringMatchResultListener listener;
  EXPECT_FALSE(ExplainMatchResult(IsOkAndHolds(Eq(6)), absl::StatusOr<int>(5), &listener));
  EXPECT_EQ(listener.str(), "whose value doesn't match");
  StringMatchResultListener error_listener;
  EXPECT_FALSE(ExplainMatchResult(IsOkAndHolds(Eq(6)), absl::StatusOr<int>(absl::AbortedError("a")),
                                  &error_listener));
  EXPECT_EQ(error_listener.str(), "which is not OK");
}

TEST(IsOkAndHoldsTest, Describes) {
  const Matcher<const absl::StatusOr<int>&> matcher = IsOkAndHolds(Eq(6));
  EXPECT_EQ(DescribeMatcher<const absl::StatusOr<int>&>(matcher),
            "is OK and has a value that is equal to 6");
  EXPECT_EQ(DescribeMatcher<const absl::StatusOr<int>&>(matcher, true),
            "isn't OK or has a value that isn't equal to 6");
}

TEST(PrintToTest, StatusOrPrintsValueOrStatus) {
  EXPECT_EQ(::testing::PrintToString(absl::StatusOr<int>(5)), "OK: 5");
  EXPECT_EQ(::testing::PrintToString(absl::StatusOr<std::string>("a")), "OK: \"a\"");
  EXPECT_EQ(::testing::PrintToString(absl::StatusOr<int>(absl::NotFoundError("gone"))),
            "NOT_FOUND: gone");
}

}  // namespace
}  // namespace sharedos::common
