// What the reviewer console asks of the OpenID provider, behind one interface so the sign-in flow
// (console_server.cc) is the same whoever answers: the provider's endpoints (from its discovery
// document), the authorization code exchanged for tokens at the token endpoint (client
// authenticated with its secret, the PKCE verifier sent), and the ID token verified (signature,
// issuer, audience = the console's client id, expiry, nonce) by the shared verifier
// (common/oidc). console/oidc_provider.h is the real one, over the deployment's --oidc_config.
#ifndef SHAREDOS_CONSOLE_OIDC_CLIENT_H_
#define SHAREDOS_CONSOLE_OIDC_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::console {

struct OidcEndpoints {
  // The provider's issuer (RFC 9207: an authorization response's `iss` must equal it).
  std::string issuer;
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
  // Where the provider sends the browser back; empty: the console's own URL + "oidc/callback".
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
                                                  absl::string_view code_verifier,
                                                  absl::string_view redirect_uri) = 0;
  // Errors: UNAUTHENTICATED naming what failed (signature, iss, aud, exp, nonce); UNAVAILABLE
  // (the provider's keys cannot be fetched).
  virtual absl::StatusOr<OidcIdentity> VerifyIdToken(absl::string_view id_token,
                                                     absl::string_view nonce) = 0;
};

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_OIDC_CLIENT_H_
