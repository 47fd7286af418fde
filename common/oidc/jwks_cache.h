// The provider's signing keys (its JWKS, found through discovery), by `kid`. Refetched when a token
// names an unknown kid (at most once per min_refresh_interval) and every refresh_interval; bounded
// (document size, key count). When the keys cannot be fetched the cached ones still serve; when
// none matches, the answer is UNAVAILABLE — a token is never accepted without its key (fail
// closed).
#ifndef SHAREDOS_COMMON_OIDC_JWKS_CACHE_H_
#define SHAREDOS_COMMON_OIDC_JWKS_CACHE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/oidc/config.h"
#include "common/oidc/discovery.h"
#include "common/oidc/http_fetcher.h"
#include "common/time/clock.h"

namespace sharedos::common::oidc {

// One public verification key. Immutable once built; shared by verifications on any thread.
class Jwk {
 public:
  ~Jwk();
  Jwk(const Jwk&) = delete;
  Jwk& operator=(const Jwk&) = delete;

  const std::string& kid() const { return kid_; }
  // "RSA", "EC" or "OKP".
  const std::string& kty() const { return kty_; }
  // The JWK's "alg" ("" when it names none) and curve ("P-256", "P-384", "Ed25519"; "" for RSA).
  const std::string& alg() const { return alg_; }
  const std::string& crv() const { return crv_; }
  // Whether a token signed with `alg` may be verified with this key: the key type (and curve)
  // that algorithm uses, and the JWK's own alg when it names one.
  bool Accepts(absl::string_view alg) const;
  // Whether `signature` over `signing_input` verifies. `compact` is the whole compact JWS
  // (RSA and EC go through libcjose, which parses it itself).
  bool Verify(absl::string_view alg, absl::string_view compact, absl::string_view signing_input,
              absl::string_view signature) const;

  // Parses one JWK (an object). Returns nullptr for a key SharedOS does not use for signatures
  // (another kty such as "oct", use "enc", private material, an RSA modulus under 2048 bits, an
  // unsupported curve, no kid).
  static std::unique_ptr<Jwk> FromJson(const std::string& key_json);

 private:
  Jwk() = default;
  std::string kid_, kty_, alg_, crv_;
  void* cjose_key_ = nullptr;    // cjose_jwk_t* (RSA, EC)
  void* ed25519_key_ = nullptr;  // EVP_PKEY* (OKP Ed25519: libcjose 0.6 has no OKP keys)
};

// Parses a JWKS document into keys by kid. Keys SharedOS does not use are skipped; a duplicate
// kid keeps the first. Errors: UNAVAILABLE (larger than max_bytes, not JSON, no "keys" array,
// more than max_keys keys).
absl::StatusOr<std::map<std::string, std::shared_ptr<const Jwk>>> ParseJwks(
    absl::string_view text, const JwksCacheOptions& options);

class JwksCache {
 public:
  // `discovery`, `fetcher` and `clock` are borrowed and must outlive the cache.
  JwksCache(const OidcConfig& config, const DiscoveryCache& discovery, const HttpFetcher& fetcher,
            const Clock& clock)
      : config_(config), discovery_(discovery), fetcher_(fetcher), clock_(clock) {}

  // The key with `kid`. Errors: NOT_FOUND (the current JWKS has no such key: the token is
  // refused), UNAVAILABLE (the keys cannot be fetched and no cached key has that kid).
  absl::StatusOr<std::shared_ptr<const Jwk>> Find(absl::string_view kid) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // How many times the JWKS was fetched (successfully or not): tests assert the rate limit.
  int fetch_count() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // Fetches the JWKS now; on success replaces the keys. Returns the fetch's status.
  absl::Status RefreshLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const OidcConfig& config_;
  const DiscoveryCache& discovery_;
  const HttpFetcher& fetcher_;
  const Clock& clock_;
  // Held during a fetch, so concurrent misses share one fetch (bounded by the HTTP timeout).
  mutable absl::Mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const Jwk>> keys_ ABSL_GUARDED_BY(mu_);
  mutable bool have_keys_ ABSL_GUARDED_BY(mu_) = false;
  mutable absl::Time last_success_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  mutable absl::Time last_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  mutable absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  mutable int fetch_count_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace sharedos::common::oidc

#endif  // SHAREDOS_COMMON_OIDC_JWKS_CACHE_H_
