#include "common/text/terminal_safe.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace sharedos::common::text {
namespace {

// One decoded UTF-8 sequence at the front of `text`: its code point and length; length 0 when
// the bytes there are not well-formed UTF-8 (a stray continuation byte, a truncated sequence,
// an overlong form, a surrogate, a code point above U+10FFFF).
struct Decoded {
  char32_t code_point = 0;
  size_t length = 0;
};

Decoded DecodeOne(absl::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  size_t length = 0;
  char32_t code_point = 0;
  char32_t minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, minimum = 0x10000;
  } else {
    return {};
  }
  if (text.size() < length) return {};
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {};
    code_point = (code_point << 6) | (byte(i) & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF ||
      (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    return {};
  }
  return {code_point, length};
}

}  // namespace

bool IsTerminalControl(char32_t c) {
  return c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E ||
         c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
         c == 0x2028 || c == 0x2029;
}

std::string TerminalSafe(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const Decoded decoded = DecodeOne(text);
    if (decoded.length == 0) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<uint8_t>(text[0]));
      text.remove_prefix(1);
      continue;
    }
    const char32_t c = decoded.code_point;
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<uint32_t>(c));
    } else if (IsTerminalControl(c)) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<uint32_t>(c));
    } else {
      out.append(text.data(), decoded.length);
    }
    text.remove_prefix(decoded.length);
  }
  return out;
}

std::string JsonTerminalSafe(absl::string_view json) {
  std::string out;
  out.reserve(json.size());
  while (!json.empty()) {
    const Decoded decoded = DecodeOne(json);
    // C0 controls are JSON's own business (escaped inside strings, whitespace outside them).
    if (decoded.length > 0 && decoded.code_point >= 0x20 && IsTerminalControl(decoded.code_point)) {
      absl::StrAppendFormat(&out, "\\u%04x", static_cast<uint32_t>(decoded.code_point));
      json.remove_prefix(decoded.length);
      continue;
    }
    const size_t length = decoded.length == 0 ? 1 : decoded.length;
    out.append(json.data(), length);
    json.remove_prefix(length);
  }
  return out;
}

}  // namespace sharedos::common::text
