// An OAuth 2 client's calls to its provider's endpoints (RFC 6749 token endpoint, RFC 8628 device
// authorization endpoint): a bounded application/x-www-form-urlencoded POST with the client's
// credentials, and the JSON answer read as tokens or as the provider's error. Used by the reviewer
// console's sign-in (authorization code) and `sharedosctl login` (device authorization grant).
#ifndef SHAREDOS_COMMON_OAUTH_TOKEN_ENDPOINT_H_
#define SHAREDOS_COMMON_OAUTH_TOKEN_ENDPOINT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::oauth {

// Bounds on what is accepted from the provider.
inline constexpr size_t kMaxAnswerBytes = 64 * 1024;
inline constexpr size_t kMaxProviderErrorBytes = 200;

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// An application/x-www-form-urlencoded POST to `url` (http:// or https://; https verified against
// `ca_file`, or the system's roots when empty; no redirect followed), with HTTP basic client
// authentication (RFC 6749 2.3.1: both parts form-encoded) when `client_secret` is not empty.
// Errors: INVALID_ARGUMENT (a malformed url); UNAVAILABLE (cannot connect, timed out, a body over
// kMaxAnswerBytes). The secret never appears in an error.
absl::StatusOr<HttpAnswer> PostForm(absl::string_view url,
                                    const std::map<std::string, std::string>& fields,
                                    absl::string_view client_id, absl::string_view client_secret,
                                    absl::string_view ca_file, absl::Duration timeout);

// A successful JSON answer (RFC 6749 5.1, RFC 8628 3.2) as an object. Errors: PERMISSION_DENIED
// "the identity provider refused: <error> (<description>)" for an OAuth error answer (RFC 6749
// 5.2; printable ASCII, bounded), its code also in `*oauth_error` when given; UNAVAILABLE (another
// status, or not a JSON object).
absl::StatusOr<nlohmann::json> ParseAnswer(const HttpAnswer& answer,
                                           std::string* oauth_error = nullptr);

// The string member `name` of `object`, or "" (absent or not a string).
std::string StringMember(const nlohmann::json& object, absl::string_view name);

// `text` as printable ASCII ('?' for anything else), cut at `max_bytes` (errors echoed from a
// provider).
std::string PrintableAscii(absl::string_view text, size_t max_bytes);

}  // namespace sharedos::common::oauth

#endif  // SHAREDOS_COMMON_OAUTH_TOKEN_ENDPOINT_H_
