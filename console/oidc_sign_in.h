// The reviewer console's OpenID Connect sign-in, the parts that need no network: sign-ins in
// progress (state, nonce and PKCE verifier, each random and single-use, bound to the browser that
// began it by a short-lived cookie), the authorization request's URL and the sign-out URL.
// The flow (console_server.cc): GET /oidc/start begins a sign-in and redirects to the provider's
// authorization endpoint; the provider sends the browser back to GET /oidc/callback with `code`
// and `state`; the console takes the pending sign-in (state and browser binding must match),
// exchanges the code with its verifier at the token endpoint (console/oidc_client.h), verifies
// the ID token (issuer, audience = client id, expiry, nonce) and opens a session.
#ifndef SHAREDOS_CONSOLE_OIDC_SIGN_IN_H_
#define SHAREDOS_CONSOLE_OIDC_SIGN_IN_H_

#include <cstddef>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/time/clock.h"

namespace sharedos::console {

// The cookie binding a pending sign-in to the browser that began it (SameSite=Lax: the provider
// sends the browser back with a cross-site top-level GET, which a Strict cookie would miss).
inline constexpr char kOidcCookie[] = "sos_oidc";

struct PendingSignIn {
  // Each 256 random bits, base64url.
  std::string state;
  std::string nonce;
  // RFC 7636: the verifier stays here; the provider sees only its S256 challenge.
  std::string code_verifier;
  // The value of the sos_oidc cookie set on the browser that began the sign-in.
  std::string binding;
  absl::Time expires_at;
};

// Sign-ins begun and not yet returned. Thread-safe.
class PendingSignIns {
 public:
  // Each pending sign-in lives `ttl`; at most `max_pending` at once.
  PendingSignIns(const common::Clock& clock, absl::Duration ttl, size_t max_pending)
      : clock_(clock), ttl_(ttl), max_pending_(max_pending) {}

  // A new pending sign-in (expired ones are dropped first). Errors: RESOURCE_EXHAUSTED
  // (max_pending in progress, naming --console_oidc_max_pending); UNAVAILABLE (no randomness).
  absl::StatusOr<PendingSignIn> Begin() ABSL_LOCKS_EXCLUDED(mu_);

  // The pending sign-in of `state`, removed whatever the outcome (single-use: a state is never
  // answered twice). Errors: INVALID_ARGUMENT naming "state" (unknown, used, expired or empty);
  // PERMISSION_DENIED naming "state" (begun by another browser: `binding` is not its cookie).
  absl::StatusOr<PendingSignIn> Take(absl::string_view state, absl::string_view binding)
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Duration ttl() const { return ttl_; }

 private:
  const common::Clock& clock_;
  const absl::Duration ttl_;
  const size_t max_pending_;
  mutable absl::Mutex mu_;
  std::map<std::string, PendingSignIn, std::less<>> pending_ ABSL_GUARDED_BY(mu_);
};

// RFC 7636 S256: base64url(SHA-256(verifier)), unpadded.
std::string PkceChallenge(absl::string_view code_verifier);

struct AuthorizationRequest {
  std::string authorization_endpoint;
  std::string client_id;
  std::string redirect_uri;
  // Space-separated; "openid" first.
  std::string scope = "openid";
  // RFC 8707 resource indicator (the API the access token is for); empty: none sent.
  std::string resource;
};

// The provider's authorization URL for `pending`: response_type=code, client_id, redirect_uri,
// scope, state, nonce, code_challenge (S256) and, when set, resource.
std::string AuthorizationUrl(const AuthorizationRequest& request, const PendingSignIn& pending);

// The provider's end-session URL (OpenID Connect RP-Initiated Logout): id_token_hint and
// client_id, and post_logout_redirect_uri when not empty.
std::string EndSessionUrl(absl::string_view end_session_endpoint, absl::string_view client_id,
                          absl::string_view id_token_hint,
                          absl::string_view post_logout_redirect_uri);

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_OIDC_SIGN_IN_H_
