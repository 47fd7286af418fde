#include "common/status/status_macros.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::testing::Pointee;

absl::Status ReturnIfErrorInStatusFunction(absl::Status input, int* reached) {
  RETURN_IF_ERROR(input);
  ++*reached;
  return absl::OkStatus();
}

absl::StatusOr<int> ReturnIfErrorInStatusOrFunction(absl::Status input) {
  RETURN_IF_ERROR(input);
  return 7;
}

TEST(ReturnIfErrorTest, ContinuesOnOk) {
  int reached = 0;
  EXPECT_OK(ReturnIfErrorInStatusFunction(absl::OkStatus(), &reached));
  EXPECT_EQ(reached, 1);
}

TEST(ReturnIfErrorTest, ReturnsTheErrorUnchanged) {
  int reached = 0;
  EXPECT_THAT(ReturnIfErrorInStatusFunction(absl::NotFoundError("no grant g1"), &reached),
              StatusIs(absl::StatusCode::kNotFound, "no grant g1"));
  EXPECT_EQ(reached, 0);
}

TEST(ReturnIfErrorTest, WorksInStatusOrFunctions) {
  EXPECT_THAT(ReturnIfErrorInStatusOrFunction(absl::OkStatus()), IsOkAndHolds(7));
  EXPECT_THAT(ReturnIfErrorInStatusOrFunction(absl::AbortedError("retry")),
              StatusIs(absl::StatusCode::kAborted, "retry"));
}

TEST(ReturnIfErrorTest, EvaluatesTheExpressionOnce) {
  int calls = 0;
  auto count = [&calls]() {
    ++calls;
    return absl::OkStatus();
  };
  auto body = [&]() -> absl::Status {
    RETURN_IF_ERROR(count());
    return absl::OkStatus();
  };
  EXPECT_OK(body());
  EXPECT_EQ(calls, 1);
}

TEST(ReturnIfErrorTest, IsASingleStatementInIfElse) {
  auto body = [](bool first) -> absl::Status {
    if (first)
      RETURN_IF_ERROR(absl::InternalError("first"));
    else
      RETURN_IF_ERROR(absl::InternalError("second"));
    return absl::OkStatus();
  };
  EXPECT_THAT(body(true), StatusIs(absl::StatusCode::kInternal, "first"));
  EXPECT_THAT(body(false), StatusIs(absl::StatusCode::kInternal, "second"));
}

absl::StatusOr<std::unique_ptr<int>> MakeBox(absl::StatusOr<int> value) {
  if (!value.ok()) return value.status();
  return std::make_unique<int>(*value);
}

absl::StatusOr<int> SumOfBoxes(absl::StatusOr<int> a, absl::StatusOr<int> b) {
  ASSIGN_OR_RETURN(auto first, MakeBox(a));
  ASSIGN_OR_RETURN(std::unique_ptr<int> second, MakeBox(b));
  return *first + *second;
}

TEST(AssignOrReturnTest, DeclaresMoveOnlyValues) { EXPECT_THAT(SumOfBoxes(2, 3), IsOkAndHolds(5)); }

TEST(AssignOrReturnTest, ReturnsTheFirstError) {
  EXPECT_THAT(SumOfBoxes(absl::InvalidArgumentError("a"), 3),
              StatusIs(absl::StatusCode::kInvalidArgument, "a"));
  EXPECT_THAT(SumOfBoxes(2, absl::PermissionDeniedError("b")),
              StatusIs(absl::StatusCode::kPermissionDenied, "b"));
}

absl::Status AssignToExisting(absl::StatusOr<std::string> input, std::string* out) {
  std::string value = "unchanged";
  ASSIGN_OR_RETURN(value, std::move(input));
  *out = value;
  return absl::OkStatus();
}

TEST(AssignOrReturnTest, AssignsToAnExistingVariableInStatusFunction) {
  std::string out;
  EXPECT_OK(AssignToExisting(std::string("v"), &out));
  EXPECT_EQ(out, "v");
  out = "before";
  EXPECT_THAT(AssignToExisting(absl::UnavailableError("down"), &out),
              StatusIs(absl::StatusCode::kUnavailable, "down"));
  EXPECT_EQ(out, "before");
}

TEST(AssignOrReturnTest, AssignsThroughAPointer) {
  auto body = []() -> absl::StatusOr<std::unique_ptr<int>> {
    std::unique_ptr<int> result;
    ASSIGN_OR_RETURN(result, MakeBox(9));
    return result;
  };
  EXPECT_THAT(body(), IsOkAndHolds(Pointee(9)));
}

}  // namespace
}  // namespace sharedos::common
