#include "console/http.h"

#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/text/url.h"

namespace sharedos::console {
namespace {

bool IsFieldName(absl::string_view name) {
  if (name.empty() || name.size() > 32) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> CookieValue(absl::string_view header, absl::string_view name) {
  std::optional<std::string> found;
  for (absl::string_view part : absl::StrSplit(header, ';')) {
    part = absl::StripAsciiWhitespace(part);
    const size_t equals = part.find('=');
    if (equals == absl::string_view::npos || part.substr(0, equals) != name) continue;
    if (found.has_value()) return std::nullopt;
    found = std::string(part.substr(equals + 1));
  }
  return found;
}

std::string SetCookie(absl::string_view name, absl::string_view value, absl::Duration max_age,
                      bool secure, bool lax) {
  return absl::StrCat(name, "=", value, "; Path=/; Max-Age=", absl::ToInt64Seconds(max_age),
                      "; HttpOnly; SameSite=", lax ? "Lax" : "Strict", secure ? "; Secure" : "");
}

absl::StatusOr<std::map<std::string, std::string>> ParseForm(absl::string_view body,
                                                             const FormLimits& limits) {
  if (body.size() > limits.max_body_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("form: at most ", limits.max_body_bytes, " bytes"));
  }
  std::map<std::string, std::string> fields;
  if (body.empty()) return fields;
  for (absl::string_view pair : absl::StrSplit(body, '&')) {
    if (pair.empty()) continue;
    const size_t equals = pair.find('=');
    const absl::string_view raw_name = pair.substr(0, equals);
    if (!IsFieldName(raw_name)) {
      return absl::InvalidArgumentError("form: a field name is not one of this console's fields");
    }
    const std::string name(raw_name);
    if (fields.size() >= limits.max_fields) {
      return absl::InvalidArgumentError(
          absl::StrCat("form: at most ", limits.max_fields, " fields"));
    }
    const absl::string_view raw_value =
        equals == absl::string_view::npos ? absl::string_view() : pair.substr(equals + 1);
    absl::StatusOr<std::string> value = common::text::UrlDecode(raw_value);
    if (!value.ok())
      return absl::InvalidArgumentError(absl::StrCat(name, ": bad percent-encoding"));
    const size_t max_bytes = name == "note" ? limits.max_note_bytes : limits.max_value_bytes;
    if (value->size() > max_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": at most ", max_bytes, " bytes"));
    }
    if (!fields.emplace(name, *std::move(value)).second) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": given more than once"));
    }
  }
  return fields;
}

std::string HtmlEscape(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace sharedos::console
