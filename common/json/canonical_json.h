// Canonical JSON text (semantics §10.1 `canonicalJson`), the input of every
// content hash.
//
// Departure from §10.1, deliberate and shared by every service: object keys are
// sorted by UTF-16 code units (JavaScript's default sort, as ADR 0028 and
// §10.3/§10.4 use), not by `localeCompare`. The two agree on ASCII keys without
// case-only differences; e.g. code-unit order puts "B" before "a", "z" before
// "é", and U+1F600 before U+E000.
//
// Otherwise the text is what JavaScript produces: no whitespace, arrays in
// order, strings escaped as JSON.stringify does (`\"` `\\` `\b` `\f` `\n` `\r`
// `\t`, other controls as `\u00xx` lowercase, everything else literal UTF-8,
// `/` unescaped), and floating-point numbers as ECMAScript Number::toString
// (`1`, `0.1`, `1e+21`, `1e-7`, `-0` as `0`, NaN/Infinity as `null`). Integers
// held as int64/uint64 print exactly; beyond +-2^53 JavaScript would have
// rounded them (a second, documented departure).
//
// The writer is iterative: arbitrarily deep values cannot overflow the stack.

#ifndef SHAREDOS_COMMON_JSON_CANONICAL_JSON_H_
#define SHAREDOS_COMMON_JSON_CANONICAL_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "absl/status/statusor.h"

namespace sharedos::common {

// Returns the canonical JSON text of `value`. Total: input JSON cannot express
// can still be rendered deterministically: ill-formed UTF-8 in strings and keys
// is replaced by U+FFFD per maximal subpart (as a WHATWG decoder does), binary
// values render as an array of byte values, discarded values as `null`. Use
// StrictCanonicalJson where such input must be refused instead.
// Thread-compatible (reads `value` only).
std::string CanonicalJson(const nlohmann::json& value);

// Like CanonicalJson, but refuses values JSON text cannot carry. Errors:
// INVALID_ARGUMENT for ill-formed UTF-8 (in a string or a key), a NaN or
// infinite number, a binary or discarded value. The message names the JSON
// pointer of the offending value, never its content.
absl::StatusOr<std::string> StrictCanonicalJson(const nlohmann::json& value);

// Returns the lowercase hex SHA-256 of CanonicalJson(value) (the semantics'
// `hashJson`).
std::string Sha256HexOfCanonicalJson(const nlohmann::json& value);

// Appends JSON.stringify(text) to *out (the escaping every canonical writer uses). Returns
// false if `text` is not well-formed UTF-8 (the ill-formed parts are written as U+FFFD).
bool AppendJsonStringTo(absl::string_view text, std::string* out);

// The key objects are sorted by: `text` as UTF-16 code units (ill-formed parts as U+FFFD).
std::u16string Utf16SortKey(absl::string_view text);

// Returns `value` formatted as ECMAScript Number::toString does: "NaN",
// "Infinity" and "-Infinity" for the non-finite values (which JSON.stringify
// writes as `null`).
std::string EcmaScriptNumberToString(double value);

}  // namespace sharedos::common

#endif  // SHAREDOS_COMMON_JSON_CANONICAL_JSON_H_
