// What the reviewer console asks of the OpenID provider, behind one interface so the sign-in flow
// (console_server.cc) is the same whoever answers: the provider's endpoints (from its discovery
// document), the authorization code exchanged for tokens at the token endpoint (client
// authenticated with its secret, the PKCE verifier sent), and the ID token verified (signature,
// issuer, audience = the console's client id, expiry, nonce) by the shared verifier
// (common/oidc). NewOidcProvider builds the real one from the deployment's --oidc_config.
#ifndef SHAREDOS_CONSOLE_OIDC_CLIENT_H_
#define SHAREDOS_CONSOLE_OIDC_CLIENT_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::console {

struct OidcEndpoints {
  std::string authorization;
  std::string token;
  // RP-Initiated Logout; empty when the provider has none.
  std::string end_session;
};

struct OidcTokens {
  std::string id_token;
  std::string access_token;
};

// Who the ID token says signed in.
struct OidcIdentity {
  std::string issuer;
  std::string subject;
};

// The console's registration at the provider.
struct OidcClientSettings {
  std::string client_id;
  // Where the provider sends the browser back: <console URL>/oidc/callback.
  std::string redirect_uri;
  std::string scope = "openid";
  // RFC 8707: the API the access token is for (empty: the provider's default).
  std::string resource;
  // Where the provider sends the browser after its sign-out (empty: the provider's own page).
  std::string post_logout_redirect_uri;
};

class OidcProvider {
 public:
  virtual ~OidcProvider() = default;
  virtual const OidcClientSettings& settings() const = 0;
  // Errors: UNAVAILABLE (the discovery document cannot be fetched or lacks an endpoint).
  virtual absl::StatusOr<OidcEndpoints> Endpoints() = 0;
  // Errors: UNAVAILABLE (the token endpoint cannot be reached or answers garbage);
  // PERMISSION_DENIED naming the provider's error code (a used or unknown code, a wrong PKCE
  // verifier: "invalid_grant").
  virtual absl::StatusOr<OidcTokens> ExchangeCode(absl::string_view code,
                                                  absl::string_view code_verifier) = 0;
  // Errors: UNAUTHENTICATED naming what failed (signature, iss, aud, exp, nonce); UNAVAILABLE
  // (the provider's keys cannot be fetched).
  virtual absl::StatusOr<OidcIdentity> VerifyIdToken(absl::string_view id_token,
                                                     absl::string_view nonce) = 0;
};

// Bounds on what the console accepts from the token endpoint.
inline constexpr size_t kMaxTokenResponseBytes = 64 * 1024;
inline constexpr size_t kMaxProviderErrorBytes = 200;

// An application/x-www-form-urlencoded POST to `url` (http:// or https://; https verified
// against `ca_file`, or the system's roots when empty), with HTTP basic client authentication
// (RFC 6749 2.3.1: both parts form-encoded) when `client_id` is not empty. Returns the status and
// body. Errors: INVALID_ARGUMENT (a malformed url); UNAVAILABLE (cannot connect, timed out, a
// body over kMaxTokenResponseBytes).
struct HttpAnswer {
  int status = 0;
  std::string body;
};
absl::StatusOr<HttpAnswer> PostForm(absl::string_view url,
                                    const std::map<std::string, std::string>& fields,
                                    absl::string_view client_id, absl::string_view client_secret,
                                    absl::string_view ca_file, absl::Duration timeout);

// The token endpoint's answer (RFC 6749 5.1/5.2) as tokens. Errors: PERMISSION_DENIED naming the
// provider's error code and description (printable ASCII, at most kMaxProviderErrorBytes);
// UNAVAILABLE (not JSON, or no id_token/access_token string).
absl::StatusOr<OidcTokens> ParseTokenAnswer(const HttpAnswer& answer);

// `text` as printable ASCII ('?' for anything else), cut at `max_bytes` (errors echoed from a
// provider).
std::string PrintableAscii(absl::string_view text, size_t max_bytes);

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_OIDC_CLIENT_H_
