// The provider's discovery document (OpenID Connect Discovery 1.0):
// <issuer>/.well-known/openid-configuration, whose `issuer` must equal the configured one exactly.
#ifndef SHAREDOS_COMMON_OIDC_DISCOVERY_H_
#define SHAREDOS_COMMON_OIDC_DISCOVERY_H_

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/oidc/config.h"
#include "common/oidc/http_fetcher.h"
#include "common/time/clock.h"

namespace sharedos::common::oidc {

// The endpoints SharedOS uses. Each present one is an allowed provider URL (IsAllowedProviderUrl);
// absent ones are empty.
struct ProviderMetadata {
  std::string issuer;
  std::string jwks_uri;  // required
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string device_authorization_endpoint;
  std::string end_session_endpoint;
};

// The discovery URL for `issuer` (a trailing '/' of the issuer is not doubled).
std::string DiscoveryUrl(absl::string_view issuer);

// Parses a discovery document. Errors: UNAVAILABLE naming the problem (too large, not JSON,
// issuer mismatch, missing jwks_uri, an endpoint that is not an allowed provider URL) — a bad
// document is a provider SharedOS cannot use, which fails closed like an unreachable one.
absl::StatusOr<ProviderMetadata> ParseDiscovery(const OidcConfig& config, absl::string_view text);

// Fetches and parses. Errors: as ParseDiscovery and HttpFetcher::Get.
absl::StatusOr<ProviderMetadata> FetchDiscovery(const OidcConfig& config,
                                                const HttpFetcher& fetcher);

// The metadata once fetched, kept for the process's life (the endpoints of a provider do not move
// under a running service; a restart rereads them). A failed fetch is retried at most once per
// `retry_interval`; in between, the failure is returned again. Thread-safe.
class DiscoveryCache {
 public:
  DiscoveryCache(const OidcConfig& config, const HttpFetcher& fetcher, const Clock& clock,
                 absl::Duration retry_interval)
      : config_(config), fetcher_(fetcher), clock_(clock), retry_interval_(retry_interval) {}
  // Errors: UNAVAILABLE.
  absl::StatusOr<ProviderMetadata> Get() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  const OidcConfig& config_;
  const HttpFetcher& fetcher_;
  const Clock& clock_;
  const absl::Duration retry_interval_;
  mutable absl::Mutex mu_;
  mutable std::optional<ProviderMetadata> metadata_ ABSL_GUARDED_BY(mu_);
  mutable absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  mutable absl::Time last_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace sharedos::common::oidc

#endif  // SHAREDOS_COMMON_OIDC_DISCOVERY_H_
