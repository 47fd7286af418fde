#include "common/json/canonical_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "common/crypto/sha256.h"

namespace sharedos::common {
namespace {

using Json = nlohmann::json;

constexpr char32_t kReplacementCharacter = 0xFFFD;

// Decodes one code point of `text` at `*pos` and advances `*pos`. Ill-formed
// input yields U+FFFD and `*valid = false`, consuming the maximal subpart of an
// ill-formed sequence (Unicode §3.9 / WHATWG "UTF-8 decode").
char32_t DecodeUtf8(absl::string_view text, size_t* pos, bool* valid) {
  const auto byte = [&text](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(*pos);
  ++*pos;
  if (lead < 0x80) return lead;

  int needed;
  char32_t code_point;
  unsigned char lower = 0x80;
  unsigned char upper = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    needed = 1;
    code_point = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    needed = 2;
    code_point = lead & 0x0F;
    if (lead == 0xE0) lower = 0xA0;  // No overlong forms.
    if (lead == 0xED) upper = 0x9F;  // No surrogates.
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    needed = 3;
    code_point = lead & 0x07;
    if (lead == 0xF0) lower = 0x90;  // No overlong forms.
    if (lead == 0xF4) upper = 0x8F;  // Nothing above U+10FFFF.
  } else {
    *valid = false;
    return kReplacementCharacter;
  }
  for (int i = 0; i < needed; ++i) {
    if (*pos >= text.size() || byte(*pos) < lower || byte(*pos) > upper) {
      *valid = false;  // The offending byte starts the next sequence.
      return kReplacementCharacter;
    }
    code_point = (code_point << 6) | (byte(*pos) & 0x3F);
    ++*pos;
    lower = 0x80;
    upper = 0xBF;
  }
  return code_point;
}

void AppendUtf8(char32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// Returns `text` as UTF-16 code units (ill-formed parts as U+FFFD), the sort
// key of an object member. Sets `*valid` to false if `text` is not well-formed
// UTF-8.
std::u16string ToUtf16(absl::string_view text, bool* valid) {
  std::u16string result;
  result.reserve(text.size());
  size_t pos = 0;
  while (pos < text.size()) {
    const char32_t code_point = DecodeUtf8(text, &pos, valid);
    if (code_point < 0x10000) {
      result.push_back(static_cast<char16_t>(code_point));
    } else {
      const char32_t offset = code_point - 0x10000;
      result.push_back(static_cast<char16_t>(0xD800 + (offset >> 10)));
      result.push_back(static_cast<char16_t>(0xDC00 + (offset & 0x3FF)));
    }
  }
  return result;
}

// Appends JSON.stringify(text). Returns false if `text` is not well-formed
// UTF-8 (the ill-formed parts are written as U+FFFD).
bool AppendJsonString(absl::string_view text, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  bool valid = true;
  out->push_back('"');
  size_t pos = 0;
  while (pos < text.size()) {
    // A run of printable ASCII other than '"' and '\\' is its own JSON text: copied at once.
    size_t run = pos;
    while (run < text.size()) {
      const unsigned char c = static_cast<unsigned char>(text[run]);
      if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
      ++run;
    }
    if (run > pos) {
      out->append(text.data() + pos, run - pos);
      pos = run;
      continue;
    }
    const char32_t code_point = DecodeUtf8(text, &pos, &valid);
    switch (code_point) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (code_point < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[code_point >> 4]);
          out->push_back(kHex[code_point & 0xF]);
        } else {
          AppendUtf8(code_point, out);
        }
    }
  }
  out->push_back('"');
  return valid;
}

bool IsContainer(const Json& value) {
  return value.is_array() || value.is_object() || value.is_binary();
}

// One open array, object or binary value on the writer's explicit stack.
struct Frame {
  const Json* container;
  // Objects only: members sorted by their keys' UTF-16 code units.
  std::vector<std::pair<std::u16string, Json::const_iterator>> members;
  size_t next = 0;
};

// Renders a value iteratively. In strict mode, stops at the first value JSON
// text cannot carry. Single-use; not thread-safe.
class CanonicalWriter {
 public:
  explicit CanonicalWriter(bool strict) : strict_(strict) {}

  absl::StatusOr<std::string> Write(const Json& root) {
    if (!IsContainer(root)) {
      if (!WriteScalar(root)) return std::move(error_);
      return std::move(out_);
    }
    if (!Open(root)) return std::move(error_);
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      const Json& container = *frame.container;
      const size_t size = container.is_object()   ? frame.members.size()
                          : container.is_binary() ? container.get_binary().size()
                                                  : container.size();
      if (frame.next == size) {
        out_.push_back(container.is_object() ? '}' : ']');
        stack_.pop_back();
        continue;
      }
      if (frame.next > 0) out_.push_back(',');
      const size_t index = frame.next++;
      if (container.is_binary()) {
        absl::StrAppend(&out_, static_cast<unsigned>(container.get_binary()[index]));
        continue;
      }
      const Json* child;
      if (container.is_object()) {
        const Json::const_iterator member = frame.members[index].second;
        AppendJsonString(member.key(), &out_);  // Keys were checked on Open.
        out_.push_back(':');
        child = &member.value();
      } else {
        child = &container[index];
      }
      // `frame` may dangle after Open pushes; it is not used past this point.
      const bool ok = IsContainer(*child) ? Open(*child) : WriteScalar(*child);
      if (!ok) return std::move(error_);
    }
    return std::move(out_);
  }

 private:
  bool Open(const Json& container) {
    if (container.is_binary()) {
      if (strict_) return Fail("a binary value");
      stack_.push_back(Frame{&container, {}, 0});
      out_.push_back('[');
      return true;
    }
    Frame frame{&container, {}, 0};
    if (container.is_object()) {
      frame.members.reserve(container.size());
      for (auto it = container.cbegin(); it != container.cend(); ++it) {
        bool valid = true;
        frame.members.emplace_back(ToUtf16(it.key(), &valid), it);
        if (!valid && strict_) {
          stack_.push_back(std::move(frame));
          return Fail("an object key that is not well-formed UTF-8");
        }
      }
      std::sort(frame.members.begin(), frame.members.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out_.push_back(container.is_object() ? '{' : '[');
    stack_.push_back(std::move(frame));
    return true;
  }

  bool WriteScalar(const Json& value) {
    switch (value.type()) {
      case Json::value_t::null:
        out_.append("null");
        return true;
      case Json::value_t::boolean:
        out_.append(value.get<bool>() ? "true" : "false");
        return true;
      case Json::value_t::number_integer:
        absl::StrAppend(&out_, value.get<std::int64_t>());
        return true;
      case Json::value_t::number_unsigned:
        absl::StrAppend(&out_, value.get<std::uint64_t>());
        return true;
      case Json::value_t::number_float: {
        const double number = value.get<double>();
        if (!std::isfinite(number)) {
          if (strict_) return Fail("a NaN or infinite number");
          out_.append("null");  // As JSON.stringify.
          return true;
        }
        out_.append(EcmaScriptNumberToString(number));
        return true;
      }
      case Json::value_t::string:
        if (!AppendJsonString(value.get_ref<const std::string&>(), &out_) && strict_) {
          return Fail("a string that is not well-formed UTF-8");
        }
        return true;
      case Json::value_t::discarded:
        if (strict_) return Fail("a discarded value");
        out_.append("null");
        return true;
      case Json::value_t::array:
      case Json::value_t::object:
      case Json::value_t::binary:
        break;
    }
    return Fail("an unexpected value type");  // Unreachable: containers are opened.
  }

  // Records an INVALID_ARGUMENT naming the JSON pointer of the value being
  // written.
  bool Fail(absl::string_view what) {
    std::string pointer;
    for (const Frame& frame : stack_) {
      if (frame.next == 0) break;  // The failing key's object: no member chosen yet.
      pointer.push_back('/');
      if (frame.container->is_object()) {
        pointer.append(absl::StrReplaceAll(frame.members[frame.next - 1].second.key(),
                                           {{"~", "~0"}, {"/", "~1"}}));
      } else {
        absl::StrAppend(&pointer, frame.next - 1);
      }
    }
    error_ = absl::InvalidArgumentError(
        absl::StrCat("cannot canonicalise JSON: ", what, " at \"", pointer, "\""));
    return false;
  }

  const bool strict_;
  std::string out_;
  std::vector<Frame> stack_;
  absl::Status error_;
};

}  // namespace

std::string CanonicalJson(const nlohmann::json& value) {
  absl::StatusOr<std::string> result = CanonicalWriter(/*strict=*/false).Write(value);
  // The lenient writer has no failure path; keep the function total regardless.
  return result.ok() ? *std::move(result) : "null";
}

absl::StatusOr<std::string> StrictCanonicalJson(const nlohmann::json& value) {
  return CanonicalWriter(/*strict=*/true).Write(value);
}

std::string Sha256HexOfCanonicalJson(const nlohmann::json& value) {
  return Sha256Hex(CanonicalJson(value));
}

bool AppendJsonStringTo(absl::string_view text, std::string* out) {
  return AppendJsonString(text, out);
}

std::u16string Utf16SortKey(absl::string_view text) {
  bool valid = true;
  return ToUtf16(text, &valid);
}

std::string EcmaScriptNumberToString(double value) {
  if (std::isnan(value)) return "NaN";
  if (value == 0) return "0";  // Both zeros.
  if (std::isinf(value)) return value < 0 ? "-Infinity" : "Infinity";

  std::string result;
  if (value < 0) {
    result.push_back('-');
    value = -value;
  }
  // Shortest round-trip digits d1.d2...dk and decimal exponent e: value =
  // 0.d1...dk * 10^n with n = e + 1, the `s`, `k`, `n` of ECMA-262
  // Number::toString.
  char buffer[64];
  const std::to_chars_result converted =
      std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  const absl::string_view text(buffer, converted.ptr - buffer);
  const size_t e_pos = text.find('e');
  std::string digits;
  for (char c : text.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  const int exponent = std::atoi(std::string(text.substr(e_pos + 1)).c_str());
  const int k = static_cast<int>(digits.size());
  const int n = exponent + 1;

  if (k <= n && n <= 21) {
    result.append(digits);
    result.append(n - k, '0');
  } else if (0 < n && n <= 21) {
    result.append(digits, 0, n);
    result.push_back('.');
    result.append(digits, n, std::string::npos);
  } else if (-6 < n && n <= 0) {
    result.append("0.");
    result.append(-n, '0');
    result.append(digits);
  } else {
    result.push_back(digits[0]);
    if (k > 1) {
      result.push_back('.');
      result.append(digits, 1, std::string::npos);
    }
    absl::StrAppend(&result, "e", n - 1 < 0 ? "-" : "+", std::abs(n - 1));
  }
  return result;
}

}  // namespace sharedos::common
