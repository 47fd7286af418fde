// A list flag given repeatedly, in every form absl parses, keeps every occurrence in order; a
// flag not given keeps none.
#include "common/server/repeated_flag.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

ABSL_FLAG(std::vector<std::string>, repeated_test_list, {}, "A repeated list flag under test.")
    .OnUpdate(sharedos::common::server::RecordOccurrence<&FLAGS_repeated_test_list>);
ABSL_FLAG(std::vector<std::string>, repeated_test_unused, {}, "A repeated list flag not given.")
    .OnUpdate(sharedos::common::server::RecordOccurrence<&FLAGS_repeated_test_unused>);

namespace sharedos::common::server {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(RepeatedFlagTest, EveryOccurrenceIsKeptInOrder) {
  std::vector<std::string> args = {"repeated_flag_test",        "--repeated_test_list=b,a",
                                   "--repeated_test_list",      "c",
                                   "--repeated_test_list=,d,,", "--repeated_test_list=a"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  absl::ParseCommandLine(static_cast<int>(argv.size()), argv.data());

  // absl itself keeps the last occurrence only; every one is recorded, duplicates included.
  EXPECT_THAT(absl::GetFlag(FLAGS_repeated_test_list), ElementsAre("a"));
  EXPECT_THAT(AllOccurrences(FLAGS_repeated_test_list), ElementsAre("b", "a", "c", "d", "a"));
  EXPECT_THAT(AllOccurrences(FLAGS_repeated_test_unused), IsEmpty());
}

}  // namespace
}  // namespace sharedos::common::server
