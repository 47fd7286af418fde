// Text from requests, tool calls and records made safe to print on an operator's terminal: the
// one place SharedOS escapes control characters before a person reads them (sharedosctl's tables
// and plain output, the JSON it prints, the process log). An agent or a host chooses much of what
// an operator reads — an escalation reason, a tool name, an agent id — and a terminal obeys the
// control characters in it: ESC starts an ANSI sequence (colours, cursor moves, a new window
// title), a newline starts what looks like another table row, bidi overrides reorder what is
// shown. Pure functions; thread-safe.
#ifndef SHAREDOS_COMMON_TEXT_TERMINAL_SAFE_H_
#define SHAREDOS_COMMON_TEXT_TERMINAL_SAFE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace sharedos::common::text {

// `text` with every character a terminal could act on written as a visible escape, everything
// else unchanged:
//   - C0 controls and DEL: "\n", "\r", "\t", or "\xHH" (so ESC is "\x1b" and an ANSI sequence
//     prints as inert text); the backslash itself is doubled, so an escape is never ambiguous;
//   - C1 controls (U+0080..U+009F, among them the one-character CSI U+009B), the bidirectional
//     controls (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the line and
//     paragraph separators (U+2028, U+2029): "\uHHHH";
//   - a byte that is not part of well-formed UTF-8: "\xHH".
// The result is one line: it holds no byte below 0x20 and no DEL.
std::string TerminalSafe(absl::string_view text);

// The same for serialized JSON (one value per call, as a JSON printer wrote it): JSON escapes
// C0 controls itself but leaves DEL, the C1 controls, the bidi controls and U+2028/U+2029 raw;
// each of those is rewritten as its JSON escape "\u00HH" / "\uHHHH". They occur only inside
// strings, so the text stays valid JSON with the same value. Anything else is unchanged.
std::string JsonTerminalSafe(absl::string_view json);

// True when `code_point` is one TerminalSafe escapes (a C0 or C1 control, DEL, a bidi control, a
// line or paragraph separator).
bool IsTerminalControl(char32_t code_point);

}  // namespace sharedos::common::text

#endif  // SHAREDOS_COMMON_TEXT_TERMINAL_SAFE_H_
