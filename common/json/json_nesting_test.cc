#include "common/json/json_nesting.h"

#include <string>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::testing::HasSubstr;

std::string Nested(int levels, char open, char close) {
  return std::string(levels, open) + std::string(levels, close);
}

TEST(CheckJsonNestingTest, AcceptsUpToTheBoundAndRefusesOneMore) {
  EXPECT_THAT(CheckJsonNesting(Nested(64, '[', ']'), "body"), IsOk());
  EXPECT_THAT(CheckJsonNesting(Nested(65, '[', ']'), "body"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("body: JSON nested deeper than 64 levels")));
  EXPECT_THAT(CheckJsonNesting(Nested(3, '{', '}'), "x", 2),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CheckJsonNestingTest, MixedObjectsAndArraysCountTogether) {
  EXPECT_THAT(CheckJsonNesting(R"({"a":[{"b":[1]}]})", "x", 4), IsOk());
  EXPECT_THAT(CheckJsonNesting(R"({"a":[{"b":[[1]]}]})", "x", 4),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CheckJsonNestingTest, SiblingsDoNotAddUp) {
  std::string wide = "[";
  for (int i = 0; i < 1000; ++i) wide += "[[1]],";
  wide += "[]]";
  EXPECT_THAT(CheckJsonNesting(wide, "x", 3), IsOk());
}

TEST(CheckJsonNestingTest, BracketsInsideStringsAndEscapesDoNotCount) {
  const std::string in_string = "[\"" + std::string(1000, '[') + "\\\"{{{\\\\\"]";
  EXPECT_THAT(CheckJsonNesting(in_string, "x", 1), IsOk());
  // An escaped quote does not end the string; an escaped backslash does not escape the quote.
  EXPECT_THAT(CheckJsonNesting(R"(["\"[[[", "\\", [[1]]])", "x", 3), IsOk());
  EXPECT_THAT(CheckJsonNesting(R"(["\\", [[[1]]]])", "x", 3),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

// The case that crashed a service: far deeper than any stack, well under a body limit.
TEST(CheckJsonNestingTest, HundredThousandLevelsAreRefusedWithoutRecursion) {
  EXPECT_THAT(CheckJsonNesting(Nested(100000, '[', ']'), "body"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(CheckJsonNesting(std::string(100000, '{'), "body"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace sharedos::common
