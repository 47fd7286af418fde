// The reviewer console's HTTP pieces that need no server: cookies (parsing, the session cookie's
// flags), bounded form bodies (application/x-www-form-urlencoded) and HTML escaping. Pure.
#ifndef SHAREDOS_CONSOLE_HTTP_H_
#define SHAREDOS_CONSOLE_HTTP_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::console {

// The session cookie's name, and the pre-session one the sign-in form is double-submitted with.
inline constexpr char kSessionCookie[] = "sos_session";
inline constexpr char kSignInCookie[] = "sos_signin";

// The value of cookie `name` in a Cookie header ("a=1; b=2"); nullopt when absent. A cookie
// named twice is ambiguous: nullopt.
std::optional<std::string> CookieValue(absl::string_view header, absl::string_view name);

// A Set-Cookie value: HttpOnly, SameSite=Strict (Lax when `lax`: a cookie the browser must send
// on a top-level navigation back from another site, the OpenID provider), Path=/, Max-Age, and
// Secure when `secure` (the console serves HTTPS). An empty `value` with a zero `max_age` clears
// the cookie.
std::string SetCookie(absl::string_view name, absl::string_view value, absl::Duration max_age,
                      bool secure, bool lax = false);

struct FormLimits {
  size_t max_body_bytes = 16 * 1024;
  size_t max_fields = 16;
  size_t max_value_bytes = 2048;
  // The one free-text field, "note": a resolution note of 1000 UTF-16 units is at most 3000
  // UTF-8 bytes (the grant store bounds it in units).
  size_t max_note_bytes = 4096;
};

// An application/x-www-form-urlencoded body as field → value. Errors: INVALID_ARGUMENT naming
// the field — a body over max_body_bytes ("form"), more than max_fields fields, a value over
// max_value_bytes (max_note_bytes for "note"), a field given twice, a name outside [a-z_], bad
// percent-encoding.
absl::StatusOr<std::map<std::string, std::string>> ParseForm(absl::string_view body,
                                                             const FormLimits& limits);

// Text made safe inside HTML elements and quoted attributes (& < > " ').
std::string HtmlEscape(absl::string_view text);

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_HTTP_H_
