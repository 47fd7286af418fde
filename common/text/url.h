// URLs, in one place: percent-encoding of a query or form value and its decoding, and an http(s)
// URL split into origin, host and request target (the identity provider's endpoints, the
// console's redirects). Pure; no I/O.
#ifndef SHAREDOS_COMMON_TEXT_URL_H_
#define SHAREDOS_COMMON_TEXT_URL_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::text {

// Percent-encoding of everything but RFC 3986's unreserved characters (A-Z a-z 0-9 - _ . ~):
// a query value, an application/x-www-form-urlencoded name or value, an HTTP Basic
// client id or secret (RFC 6749 2.3.1).
std::string UrlEncode(absl::string_view text);

// Percent-decoding with '+' as a space (a query or form value). Errors: INVALID_ARGUMENT "bad
// percent-encoding" (a truncated or non-hex escape).
absl::StatusOr<std::string> UrlDecode(absl::string_view text);

inline constexpr size_t kMaxUrlBytes = 2048;

// An absolute http:// or https:// URL, split.
struct HttpUrl {
  bool https = false;
  // "http[s]://<authority>": what an HTTP client connects to.
  std::string origin;
  // The host as written: a name, an IPv4 address or a bracketed IPv6 address ("[::1]").
  std::string host;
  // The path and query ("/" when the URL has neither path nor query; a query alone gets "/").
  std::string target;
  // Whether the URL has a query ("?").
  bool has_query = false;
};

// Splits `url`. Errors: INVALID_ARGUMENT — longer than kMaxUrlBytes, a byte that is not visible
// ASCII (controls, space, DEL, non-ASCII), a scheme other than http/https, no host, user info
// ("@" in the authority), a fragment ("#").
absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url);

}  // namespace sharedos::common::text

#endif  // SHAREDOS_COMMON_TEXT_URL_H_
