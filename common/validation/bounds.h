// Low-level checks of protocol "1" primitives (semantics §1.1, §1.3, §1.14),
// each rule once.
//
// Every check returns OK or INVALID_ARGUMENT with the message "<path>:
// <problem>", where `path` names the field (e.g.
// "grant.capabilities[0].actions[2]"). Lengths are counted in UTF-16 code units
// of the UTF-8 string, as the reference counts them; invalid UTF-8 is rejected.
// Functions taking `std::string*` normalise the value in place (trim) first, as
// the reference's schemas do; the others never modify their input. All
// functions are thread-safe.

#ifndef SHAREDOS_COMMON_VALIDATION_BOUNDS_H_
#define SHAREDOS_COMMON_VALIDATION_BOUNDS_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace sharedos::common::validation {

// ---- Field paths and errors ----

// A field path built lazily: a chain of parts, each on its caller's stack, rendered as text
// ("grant.capabilities[0].actions[2]") only when an error names it, so a check that passes
// builds no strings. A part refers to its parent, so it must not outlive it: pass parts down
// as arguments (temporaries live until the end of the full expression) or keep them as locals
// of a callee. Implicit from text, so every check also takes a plain path string.
class PathRef {
 public:
  PathRef(absl::string_view root) : text_(root) {}   // NOLINT: implicit by design.
  PathRef(const char* root) : text_(root) {}         // NOLINT
  PathRef(const std::string& root) : text_(root) {}  // NOLINT

  // "<path>.<field>", or "<field>" when the path renders empty (FieldPath).
  PathRef Field(absl::string_view field) const { return PathRef(this, Kind::kField, field, 0); }
  // "<path>[<index>]" (IndexPath).
  PathRef Index(size_t index) const { return PathRef(this, Kind::kIndex, {}, index); }
  // "<path>[\"<key>\"]", the key C-escaped (KeyPath).
  PathRef Key(absl::string_view key) const { return PathRef(this, Kind::kKey, key, 0); }

  std::string Render() const;

 private:
  enum class Kind : unsigned char { kRoot, kField, kIndex, kKey };
  PathRef(const PathRef* parent, Kind kind, absl::string_view text, size_t index)
      : parent_(parent), kind_(kind), text_(text), index_(index) {}
  void AppendTo(std::string* out) const;

  const PathRef* parent_ = nullptr;
  Kind kind_ = Kind::kRoot;
  absl::string_view text_;
  size_t index_ = 0;
};

// "<path>.<field>", or "<field>" when `path` is empty.
std::string FieldPath(absl::string_view path, absl::string_view field);
// "<path>[<index>]".
std::string IndexPath(absl::string_view path, size_t index);
// "<path>[\"<key>\"]", the key C-escaped (UTF-8 kept).
std::string KeyPath(absl::string_view path, absl::string_view key);
// INVALID_ARGUMENT "<path>: <problem>" (just "<problem>" when `path` is empty).
absl::Status InvalidArgumentAt(const PathRef& path, absl::string_view problem);

// ---- Text ----

// UTF-16 code units of the UTF-8 string `s`; nullopt when `s` is not valid
// UTF-8 (overlong forms, surrogates and code points above U+10FFFF are
// invalid).
std::optional<size_t> Utf16Length(absl::string_view s);

// The longest prefix of `s` of at most `max_units` UTF-16 code units that ends on a character
// boundary (a character outside the BMP is two units and is never split). `s` should be valid
// UTF-8; an invalid byte counts as one unit.
absl::string_view Utf16Prefix(absl::string_view s, size_t max_units);

// True for the code points JavaScript's String.prototype.trim removes (Unicode
// White_Space of category Zs, TAB, VT, FF, LF, CR, U+2028, U+2029 and U+FEFF).
bool IsTrimmedWhitespace(char32_t c);

// `s` without leading and trailing IsTrimmedWhitespace code points. `s` should
// be valid UTF-8; invalid bytes are kept.
absl::string_view TrimWhitespace(absl::string_view s);

// Requires valid UTF-8 of min_length..max_length UTF-16 units, untrimmed
// ("empty", "longer than N", "shorter than N", "invalid UTF-8").
absl::Status CheckString(absl::string_view value, size_t min_length, size_t max_length,
                         const PathRef& path);

// Trims `*value` in place, then requires 1..max_length UTF-16 units.
absl::Status CheckTrimmedString(std::string* value, size_t max_length, const PathRef& path);

// Identifier: trimmed, 1..256.
absl::Status CheckIdentifier(std::string* value, const PathRef& path);
// An optional Identifier: an empty string means absent and is accepted;
// anything else must be an Identifier (so "  " is rejected as empty, as the
// reference rejects a present "  ").
absl::Status CheckOptionalIdentifier(std::string* value, const PathRef& path);
// Purpose: trimmed, 1..512.
absl::Status CheckPurpose(std::string* value, const PathRef& path);
// Action: trimmed, 1..128.
absl::Status CheckAction(std::string* value, const PathRef& path);

// Path segment: 1..256, no leading/trailing whitespace (rejected, never
// trimmed), not "." or
// "..", no '/', '\\', U+0000..U+001F or U+007F.
absl::Status CheckPathSegment(absl::string_view value, const PathRef& path);

// Tool name: ^[A-Za-z0-9_.-]{1,128}$, never trimmed.
absl::Status CheckToolName(absl::string_view value, const PathRef& path);

// The literal "1" (`must be "1"`).
absl::Status CheckProtocolVersion(absl::string_view value, const PathRef& path);

// 64 lowercase hex digits (a SHA-256 content hash).
absl::Status CheckContentHash(absl::string_view value, const PathRef& path);

// A repeated field of min_count..max_count elements ("empty", "more than N").
absl::Status CheckCount(size_t count, size_t min_count, size_t max_count, const PathRef& path);

// seconds within 0001-01-01..9999-12-31, nanos within 0..999,999,999.
absl::Status CheckTimestamp(const google::protobuf::Timestamp& value, const PathRef& path);

// A JSON value: a kind is set, numbers are finite, strings and keys are valid
// UTF-8, recursively. Struct entries are checked in key order, so the first
// error is deterministic.
absl::Status CheckJsonValue(const google::protobuf::Value& value, const PathRef& path);
absl::Status CheckJsonObject(const google::protobuf::Struct& value, const PathRef& path);

}  // namespace sharedos::common::validation

#endif  // SHAREDOS_COMMON_VALIDATION_BOUNDS_H_
