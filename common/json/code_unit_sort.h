// Sorting by UTF-16 code units, JavaScript's default string order, which the reference uses
// for grant ids, catalogue tool names and canonical JSON texts (semantics §3.8, §10.3, §10.4).
// It differs from byte order only where a supplementary character meets U+E000..U+FFFF.
// The order itself is common/json's Utf16SortKey; this computes each key once per item.

#ifndef SHAREDOS_COMMON_JSON_CODE_UNIT_SORT_H_
#define SHAREDOS_COMMON_JSON_CODE_UNIT_SORT_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/json/canonical_json.h"

namespace sharedos::common {

// Sorts `*items` ascending by the code units of `key(item)` (a string or string_view), stably.
template <typename T, typename KeyFn>
void SortByCodeUnits(std::vector<T>* items, KeyFn key) {
  std::vector<std::pair<std::u16string, size_t>> keys;
  keys.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) keys.emplace_back(Utf16SortKey(key((*items)[i])), i);
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<T> sorted;
  sorted.reserve(items->size());
  for (const auto& entry : keys) sorted.push_back(std::move((*items)[entry.second]));
  *items = std::move(sorted);
}

// Sorts strings by their own code units.
inline void SortByCodeUnits(std::vector<std::string>* items) {
  SortByCodeUnits(items, [](const std::string& item) -> const std::string& { return item; });
}

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_JSON_CODE_UNIT_SORT_H_
