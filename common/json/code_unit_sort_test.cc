#include "common/json/code_unit_sort.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::common {
namespace {

using ::testing::ElementsAre;

TEST(SortByCodeUnitsTest, SortsLikeJavaScript) {
  // Node: ['alpha','Zeta','_note','$schema','additionalProperties','cell-30','cell-3'].sort()
  std::vector<std::string> keys = {"alpha",   "Zeta",  "_note", "$schema", "additionalProperties",
                                   "cell-30", "cell-3"};
  SortByCodeUnits(&keys);
  EXPECT_THAT(keys, ElementsAre("$schema", "Zeta", "_note", "additionalProperties", "alpha",
                                "cell-3", "cell-30"));
}

TEST(SortByCodeUnitsTest, SupplementaryCharactersBeforeHighBmp) {
  const std::string emoji = "\xF0\x9F\x98\x80";    // U+1F600: units D83D DE00.
  const std::string private_use = "\xEE\x80\x80";  // U+E000.
  ASSERT_LT(private_use, emoji);                   // Byte order says the opposite.
  std::vector<std::string> keys = {private_use, emoji, "z"};
  SortByCodeUnits(&keys);
  EXPECT_THAT(keys, ElementsAre("z", emoji, private_use));
}

TEST(SortByCodeUnitsTest, ByKeyAndStable) {
  std::vector<std::pair<std::string, int>> items = {{"b", 1}, {"a", 2}, {"b", 3}, {"B", 4}};
  SortByCodeUnits(&items, [](const auto& item) -> const std::string& { return item.first; });
  EXPECT_THAT(items, ElementsAre(std::make_pair("B", 4), std::make_pair("a", 2),
                                 std::make_pair("b", 1), std::make_pair("b", 3)));
}

}  // namespace
}  // namespace sharedos::common
