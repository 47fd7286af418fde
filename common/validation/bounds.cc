#include "common/validation/bounds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status/status_macros.h"
#include "common/validation/limits.h"

namespace sharedos::common::validation {
namespace {

// Decodes the code point at s[*pos] and advances *pos past it. Returns false
// (leaving *pos unchanged) on a malformed, overlong, surrogate or out-of-range
// sequence.
bool DecodeUtf8(absl::string_view s, size_t* pos, char32_t* out) {
  const size_t i = *pos;
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const auto continuation = [&](size_t k) { return i + k < s.size() && (byte(k) & 0xC0) == 0x80; };
  const uint8_t b0 = byte(0);
  char32_t c;
  size_t len;
  if (b0 < 0x80) {
    c = b0;
    len = 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    if (!continuation(1)) return false;
    c = ((b0 & 0x1F) << 6) | (byte(1) & 0x3F);
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return false;
    c = ((b0 & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    if (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF)) return false;
    len = 3;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return false;
    c = ((b0 & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
    if (c < 0x10000 || c > 0x10FFFF) return false;
    len = 4;
  } else {
    return false;
  }
  *out = c;
  *pos = i + len;
  return true;
}

absl::Status CheckLength(absl::string_view value, size_t min_length, size_t max_length,
                         const PathRef& path) {
  const std::optional<size_t> length = Utf16Length(value);
  if (!length.has_value()) return InvalidArgumentAt(path, "invalid UTF-8");
  if (*length == 0 && min_length > 0) return InvalidArgumentAt(path, "empty");
  if (*length < min_length) {
    return InvalidArgumentAt(path, absl::StrCat("shorter than ", min_length));
  }
  if (*length > max_length) {
    return InvalidArgumentAt(path, absl::StrCat("longer than ", max_length));
  }
  return absl::OkStatus();
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

bool IsToolNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

}  // namespace

std::string FieldPath(absl::string_view path, absl::string_view field) {
  if (path.empty()) return std::string(field);
  return absl::StrCat(path, ".", field);
}

std::string IndexPath(absl::string_view path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

std::string KeyPath(absl::string_view path, absl::string_view key) {
  return absl::StrCat(path, "[\"", absl::Utf8SafeCHexEscape(key), "\"]");
}

void PathRef::AppendTo(std::string* out) const {
  if (parent_ != nullptr) parent_->AppendTo(out);
  switch (kind_) {
    case Kind::kRoot:
      absl::StrAppend(out, text_);
      return;
    case Kind::kField:
      if (!out->empty()) out->push_back('.');
      absl::StrAppend(out, text_);
      return;
    case Kind::kIndex:
      absl::StrAppend(out, "[", index_, "]");
      return;
    case Kind::kKey:
      absl::StrAppend(out, "[\"", absl::Utf8SafeCHexEscape(text_), "\"]");
      return;
  }
}

std::string PathRef::Render() const {
  std::string out;
  AppendTo(&out);
  return out;
}

absl::Status InvalidArgumentAt(const PathRef& path, absl::string_view problem) {
  const std::string rendered = path.Render();
  if (rendered.empty()) return absl::InvalidArgumentError(problem);
  return absl::InvalidArgumentError(absl::StrCat(rendered, ": ", problem));
}

std::optional<size_t> Utf16Length(absl::string_view s) {
  size_t units = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    // ASCII, the common case, eight bytes at a time: each byte is one code unit.
    if (pos + 8 <= s.size()) {
      uint64_t word;
      std::memcpy(&word, s.data() + pos, sizeof(word));
      if ((word & 0x8080808080808080ULL) == 0) {
        pos += 8;
        units += 8;
        continue;
      }
    }
    char32_t c;
    if (!DecodeUtf8(s, &pos, &c)) return std::nullopt;
    units += c >= 0x10000 ? 2 : 1;
  }
  return units;
}

bool IsTrimmedWhitespace(char32_t c) {
  switch (c) {
    case 0x0009:  // TAB
    case 0x000A:  // LF
    case 0x000B:  // VT
    case 0x000C:  // FF
    case 0x000D:  // CR
    case 0x0020:  // SPACE
    case 0x00A0:  // NO-BREAK SPACE
    case 0x1680:  // OGHAM SPACE MARK
    case 0x2028:  // LINE SEPARATOR
    case 0x2029:  // PARAGRAPH SEPARATOR
    case 0x202F:  // NARROW NO-BREAK SPACE
    case 0x205F:  // MEDIUM MATHEMATICAL SPACE
    case 0x3000:  // IDEOGRAPHIC SPACE
    case 0xFEFF:  // ZERO WIDTH NO-BREAK SPACE (BOM)
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;  // EN QUAD .. HAIR SPACE
  }
}

absl::string_view Utf16Prefix(absl::string_view s, size_t max_units) {
  size_t units = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    char32_t c = 0;
    if (!DecodeUtf8(s, &pos, &c)) pos = start + 1;  // An invalid byte: one unit.
    units += c >= 0x10000 ? 2 : 1;
    if (units > max_units) return s.substr(0, start);
  }
  return s;
}

absl::string_view TrimWhitespace(absl::string_view s) {
  // Already trimmed when both ends are ASCII and not whitespace (an ASCII byte is always a
  // character of its own, whatever precedes it), as nearly every identifier is.
  const auto content = [](char c) {
    return static_cast<unsigned char>(c) < 0x80 && !IsTrimmedWhitespace(static_cast<char32_t>(c));
  };
  if (!s.empty() && content(s.front()) && content(s.back())) return s;
  size_t begin = s.size();
  size_t end = 0;
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    char32_t c;
    bool whitespace = false;
    if (DecodeUtf8(s, &pos, &c)) {
      whitespace = IsTrimmedWhitespace(c);
    } else {
      pos = start + 1;  // An invalid byte is content.
    }
    if (!whitespace) {
      begin = std::min(begin, start);
      end = pos;
    }
  }
  if (begin >= end) return s.substr(0, 0);
  return s.substr(begin, end - begin);
}

absl::Status CheckString(absl::string_view value, size_t min_length, size_t max_length,
                         const PathRef& path) {
  return CheckLength(value, min_length, max_length, path);
}

absl::Status CheckTrimmedString(std::string* value, size_t max_length, const PathRef& path) {
  if (!Utf16Length(*value).has_value()) {
    return InvalidArgumentAt(path, "invalid UTF-8");
  }
  const absl::string_view trimmed = TrimWhitespace(*value);
  if (trimmed.size() != value->size()) *value = std::string(trimmed);
  return CheckLength(*value, 1, max_length, path);
}

absl::Status CheckIdentifier(std::string* value, const PathRef& path) {
  return CheckTrimmedString(value, kMaxIdentifierLength, path);
}

absl::Status CheckOptionalIdentifier(std::string* value, const PathRef& path) {
  if (value->empty()) return absl::OkStatus();
  return CheckIdentifier(value, path);
}

absl::Status CheckPurpose(std::string* value, const PathRef& path) {
  return CheckTrimmedString(value, kMaxPurposeLength, path);
}

absl::Status CheckAction(std::string* value, const PathRef& path) {
  return CheckTrimmedString(value, kMaxActionLength, path);
}

absl::Status CheckPathSegment(absl::string_view value, const PathRef& path) {
  RETURN_IF_ERROR(CheckLength(value, 1, kMaxPathSegmentLength, path));
  if (TrimWhitespace(value).size() != value.size()) {
    return InvalidArgumentAt(path, "leading or trailing whitespace");
  }
  if (value == "." || value == "..") {
    return InvalidArgumentAt(path, absl::StrCat("is \"", value, "\""));
  }
  for (const char c : value) {
    if (c == '/' || c == '\\') {
      return InvalidArgumentAt(path, absl::StrCat("contains '", std::string(1, c), "'"));
    }
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x1F || u == 0x7F) {
      return InvalidArgumentAt(path, absl::StrFormat("contains control character U+%04X", u));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckToolName(absl::string_view value, const PathRef& path) {
  RETURN_IF_ERROR(CheckLength(value, 1, kMaxToolNameLength, path));
  for (size_t i = 0; i < value.size(); ++i) {
    if (!IsToolNameChar(value[i])) {
      return InvalidArgumentAt(
          path, absl::StrCat("invalid character at offset ", i, " (allowed: A-Z a-z 0-9 _ . -)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckProtocolVersion(absl::string_view value, const PathRef& path) {
  if (value != kProtocolVersion) {
    return InvalidArgumentAt(path, absl::StrCat("must be \"", kProtocolVersion, "\""));
  }
  return absl::OkStatus();
}

absl::Status CheckContentHash(absl::string_view value, const PathRef& path) {
  if (value.size() != kContentHashLength || !std::all_of(value.begin(), value.end(), IsLowerHex)) {
    return InvalidArgumentAt(path,
                             absl::StrCat("must be ", kContentHashLength, " lowercase hex digits"));
  }
  return absl::OkStatus();
}

absl::Status CheckCount(size_t count, size_t min_count, size_t max_count, const PathRef& path) {
  if (count == 0 && min_count > 0) return InvalidArgumentAt(path, "empty");
  if (count < min_count) {
    return InvalidArgumentAt(path, absl::StrCat("fewer than ", min_count));
  }
  if (count > max_count) {
    return InvalidArgumentAt(path, absl::StrCat("more than ", max_count));
  }
  return absl::OkStatus();
}

absl::Status CheckTimestamp(const google::protobuf::Timestamp& value, const PathRef& path) {
  if (value.seconds() < kMinTimestampSeconds || value.seconds() > kMaxTimestampSeconds) {
    return InvalidArgumentAt(path, "seconds out of range (0001-01-01 .. 9999-12-31)");
  }
  if (value.nanos() < 0 || value.nanos() > kMaxTimestampNanos) {
    return InvalidArgumentAt(path, "nanos out of range (0 .. 999999999)");
  }
  return absl::OkStatus();
}

absl::Status CheckJsonValue(const google::protobuf::Value& value, const PathRef& path) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kNullValue:
    case google::protobuf::Value::kBoolValue:
      return absl::OkStatus();
    case google::protobuf::Value::kNumberValue:
      if (!std::isfinite(value.number_value())) {
        return InvalidArgumentAt(path, "not a finite number");
      }
      return absl::OkStatus();
    case google::protobuf::Value::kStringValue:
      if (!Utf16Length(value.string_value()).has_value()) {
        return InvalidArgumentAt(path, "invalid UTF-8");
      }
      return absl::OkStatus();
    case google::protobuf::Value::kStructValue:
      return CheckJsonObject(value.struct_value(), path);
    case google::protobuf::Value::kListValue: {
      const auto& values = value.list_value().values();
      for (int i = 0; i < values.size(); ++i) {
        RETURN_IF_ERROR(CheckJsonValue(values[i], path.Index(i)));
      }
      return absl::OkStatus();
    }
    case google::protobuf::Value::KIND_NOT_SET:
      break;
  }
  return InvalidArgumentAt(path, "no value set");
}

absl::Status CheckJsonObject(const google::protobuf::Struct& value, const PathRef& path) {
  std::vector<const std::string*> keys;
  keys.reserve(value.fields().size());
  for (const auto& entry : value.fields()) keys.push_back(&entry.first);
  std::sort(keys.begin(), keys.end(),
            [](const std::string* a, const std::string* b) { return *a < *b; });
  for (const std::string* key : keys) {
    const PathRef child = path.Key(*key);
    if (!Utf16Length(*key).has_value()) {
      return InvalidArgumentAt(child, "key is invalid UTF-8");
    }
    RETURN_IF_ERROR(CheckJsonValue(value.fields().at(*key), child));
  }
  return absl::OkStatus();
}

}  // namespace sharedos::common::validation
