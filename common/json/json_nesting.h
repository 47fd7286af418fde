// A bound on JSON nesting checked before any parser sees the text. nlohmann::json (and every
// recursive walker over its result) recurses once per level, so a body nested tens of thousands
// of levels deep, well under any size limit, overflows the stack (issue: one MCP request ended
// sharedosd). The check is one pass, no allocation, no recursion. Stateless; thread-safe.

#ifndef SHAREDOS_COMMON_JSON_JSON_NESTING_H_
#define SHAREDOS_COMMON_JSON_JSON_NESTING_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace sharedos::common {

// Nesting any JSON that enters SharedOS may have: deep enough for every protocol object (whose
// Struct values protobuf bounds far lower), shallow enough for any stack.
inline constexpr int kMaxJsonNesting = 64;

// OK when no array or object in `text` is nested deeper than `max_depth` levels (the top level
// counts as 1). Brackets inside strings (escapes included) do not count. The text need not be
// valid JSON: what is malformed is the parser's to report.
// Errors: INVALID_ARGUMENT "<what>: JSON nested deeper than <max_depth> levels".
absl::Status CheckJsonNesting(absl::string_view text, absl::string_view what,
                              int max_depth = kMaxJsonNesting);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_JSON_JSON_NESTING_H_
