#include "common/text/url.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace sharedos::common::text {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string UrlEncode(absl::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

absl::StatusOr<std::string> UrlDecode(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] != '%') {
      out.push_back(text[i]);
    } else {
      const int high = i + 2 < text.size() ? HexValue(text[i + 1]) : -1;
      const int low = high >= 0 ? HexValue(text[i + 2]) : -1;
      if (low < 0) return absl::InvalidArgumentError("bad percent-encoding");
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    }
  }
  return out;
}

absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url) {
  if (url.size() > kMaxUrlBytes) {
    return absl::InvalidArgumentError(absl::StrCat("longer than ", kMaxUrlBytes, " bytes"));
  }
  for (char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7f) {
      return absl::InvalidArgumentError("a control, space or non-ASCII byte");
    }
  }
  if (absl::StrContains(url, "#")) return absl::InvalidArgumentError("a fragment");
  HttpUrl parsed;
  absl::string_view rest;
  if (absl::StartsWith(url, "https://")) {
    parsed.https = true;
    rest = url.substr(8);
  } else if (absl::StartsWith(url, "http://")) {
    rest = url.substr(7);
  } else {
    return absl::InvalidArgumentError("not an http:// or https:// URL");
  }
  const size_t end = rest.find_first_of("/?");
  const absl::string_view authority = rest.substr(0, end);
  if (absl::StrContains(authority, "@")) return absl::InvalidArgumentError("user info");
  absl::string_view host = authority;
  if (absl::StartsWith(host, "[")) {
    const size_t close = host.find(']');
    if (close == absl::string_view::npos) return absl::InvalidArgumentError("no host");
    host = host.substr(0, close + 1);
  } else {
    host = host.substr(0, host.find(':'));
  }
  if (host.empty() || host == "[]") return absl::InvalidArgumentError("no host");
  parsed.origin = std::string(url.substr(0, url.size() - rest.size() + authority.size()));
  parsed.host = std::string(host);
  const absl::string_view target =
      end == absl::string_view::npos ? absl::string_view() : rest.substr(end);
  parsed.target = absl::StartsWith(target, "/") ? std::string(target) : absl::StrCat("/", target);
  parsed.has_query = absl::StrContains(target, "?");
  return parsed;
}

}  // namespace sharedos::common::text
