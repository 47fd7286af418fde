// Verifies the provider's JWTs (gRPC access tokens, the console's ID tokens): compact JWS,
// signature by a provider key whose type matches an allow-listed algorithm, exact issuer, audience,
// expiry and not-before/issued-at with bounded skew, nonce when given.
#ifndef SHAREDOS_COMMON_OIDC_TOKEN_VERIFIER_H_
#define SHAREDOS_COMMON_OIDC_TOKEN_VERIFIER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/oidc/config.h"
#include "common/oidc/discovery.h"
#include "common/oidc/http_fetcher.h"
#include "common/oidc/jwks_cache.h"
#include "common/time/clock.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::oidc {

// A token whose every check passed.
struct VerifiedToken {
  std::string issuer;
  std::string subject;
  std::vector<std::string> audiences;
  absl::Time expires_at;
  std::string algorithm;
  std::string key_id;
  // Every claim of the payload (a JSON object).
  nlohmann::json claims;
};

// Why a token was refused: for tests and metrics only — callers and clients see one message.
enum class Refusal {
  kNone,
  kMalformed,    // size, not three base64url parts, header/payload not a JSON object
  kAlgorithm,    // alg none, HS*, or not in the configured list
  kUnknownKey,   // no kid, or no provider key with it
  kKeyMismatch,  // the key's type/curve/alg does not fit the token's alg
  kSignature,    // the signature does not verify
  kIssuer,       // iss differs
  kAudience,     // aud lacks the expected audience
  kExpired,      // exp (plus skew) passed, or missing
  kNotYetValid,  // nbf or iat (less skew) in the future
  kSubject,      // sub missing or malformed
  kNonce,        // nonce missing or different
};
absl::string_view RefusalName(Refusal refusal);

// The one message of every refused token (the token is never echoed).
inline constexpr absl::string_view kInvalidTokenMessage = "invalid bearer token";

// Thread-safe. Borrowed references must outlive the verifier.
class TokenVerifier {
 public:
  TokenVerifier(const OidcConfig& config, const JwksCache& keys, const Clock& clock)
      : config_(config), keys_(keys), clock_(clock) {}

  // Errors: UNAUTHENTICATED kInvalidTokenMessage for every refused token (`refusal`, when given,
  // says which check); UNAVAILABLE when the provider's keys cannot be had (fail closed).
  absl::StatusOr<VerifiedToken> Verify(absl::string_view token, absl::string_view expected_audience,
                                       std::optional<absl::string_view> nonce = std::nullopt,
                                       Refusal* refusal = nullptr) const;

  // As Verify, for a token whose aud holds any of `accepted_audiences` (a gRPC access token: the
  // config's audiences).
  absl::StatusOr<VerifiedToken> VerifyForAnyAudience(
      absl::string_view token, const std::vector<std::string>& accepted_audiences,
      Refusal* refusal = nullptr) const;

  const OidcConfig& config() const { return config_; }

 private:
  absl::StatusOr<VerifiedToken> VerifyImpl(absl::string_view token,
                                           const std::vector<std::string>& accepted_audiences,
                                           std::optional<absl::string_view> nonce,
                                           Refusal* refusal) const;

  const OidcConfig& config_;
  const JwksCache& keys_;
  const Clock& clock_;
};

// Whether `token` has the shape of a compact JWS (three non-empty base64url parts), which tells a
// JWT bearer token from SharedOS's own opaque credentials.
bool LooksLikeJwt(absl::string_view token);

// The whole chain for a process: fetcher, discovery, keys and verifier over one config. The
// config, clock and (optional) fetcher are owned or borrowed as documented; thread-safe.
class OidcVerifierStack {
 public:
  // `fetcher` null: an HttplibFetcher from the config's timeout and CA file.
  OidcVerifierStack(OidcConfig config, const Clock& clock,
                    std::unique_ptr<HttpFetcher> fetcher = nullptr);
  const OidcConfig& config() const { return config_; }
  const DiscoveryCache& discovery() const { return discovery_; }
  const JwksCache& keys() const { return keys_; }
  const TokenVerifier& verifier() const { return verifier_; }

 private:
  const OidcConfig config_;
  std::unique_ptr<HttpFetcher> fetcher_;
  DiscoveryCache discovery_;
  JwksCache keys_;
  TokenVerifier verifier_;
};

}  // namespace sharedos::common::oidc

#endif  // SHAREDOS_COMMON_OIDC_TOKEN_VERIFIER_H_
