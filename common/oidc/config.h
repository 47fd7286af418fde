// The configuration of the organisation's OpenID provider (ADR 0020): who issues tokens, which
// audiences gRPC accepts, which algorithms, how long keys are cached, and how a token's claims map
// to a SharedOS principal. Read from a JSON file (--oidc_config in the mains):
//   {"issuer": "https://idp.example.com/realms/corp",
//    "audiences": ["sharedos-grpc"],
//    "allow_loopback_http": false,
//    "ca_file": "/etc/ssl/certs/ca-certificates.crt",
//    "algorithms": ["RS256", "ES256", "EdDSA"],
//    "clock_skew_seconds": 60,
//    "http_timeout_ms": 5000,
//    "jwks": {"max_keys": 16, "max_bytes": 65536, "refresh_interval_seconds": 3600,
//             "min_refresh_interval_seconds": 10},
//    "console": {"client_id": "sharedos-console", "client_secret_file": "/run/secrets/console",
//                "redirect_uri": "https://console.example.com/oidc/callback"},
//    "claims": {"principal": "email", "groups": "groups",
//               "rules": [{"group": "sharedos-reviewers-world-1", "role": "reviewer",
//                          "namespaces": ["world-1"]},
//                         {"group": "sharedos-admins", "role": "admin", "namespaces": ["*"]}]}}
// Everything but "issuer", "audiences" and "claims.rules" has the default shown.
#ifndef SHAREDOS_COMMON_OIDC_CONFIG_H_
#define SHAREDOS_COMMON_OIDC_CONFIG_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::common::oidc {

// Bounds on every input the library reads (tokens, provider documents).
inline constexpr size_t kMaxTokenBytes = 16 * 1024;
inline constexpr size_t kMaxJoseHeaderBytes = 2 * 1024;
inline constexpr size_t kMaxDiscoveryBytes = 64 * 1024;
inline constexpr int kMaxTokenJsonNesting = 16;
inline constexpr size_t kMaxConfigBytes = 64 * 1024;
inline constexpr absl::Duration kMaxClockSkew = absl::Minutes(5);

// The JWS algorithms the library can verify. `none` and every HS* (a shared secret: with the
// provider's public key as "secret" it would be the algorithm-confusion attack) are not among
// them, so no configuration can allow them.
bool IsSupportedAlgorithm(absl::string_view alg);

struct JwksCacheOptions {
  // A JWKS with more keys, or a larger document, is refused whole (treated as unfetchable).
  size_t max_keys = 16;
  size_t max_bytes = 64 * 1024;
  // Keys are refetched this often even when every kid is known (a revoked key leaves the cache).
  absl::Duration refresh_interval = absl::Hours(1);
  // An unknown kid refetches the JWKS at most once per this interval (a flood of made-up kids
  // cannot make SharedOS hammer the provider).
  absl::Duration min_refresh_interval = absl::Seconds(10);
};

// Groups-claim value → role and scope of the principal a token maps to.
struct ClaimRule {
  std::string group;
  // "reviewer" or "admin".
  std::string role;
  std::vector<std::string> namespaces;
};

struct ClaimMapping {
  // "sub" or "email": the claim whose value becomes the principal `human:<value>`.
  std::string principal_claim = "sub";
  // The claim holding the token's groups (an array of strings, or one string).
  std::string groups_claim = "groups";
  // In priority order: the first rule a token's groups match gives the role; the namespaces of
  // every matching rule of that role are its scope.
  std::vector<ClaimRule> rules;
};

// The console's OAuth client (used by the console's sign-in).
struct ConsoleClient {
  std::string client_id;
  std::string client_secret_file;
  std::string redirect_uri;
};

struct OidcConfig {
  // Exactly as the provider's discovery document and tokens spell it.
  std::string issuer;
  // Audiences a gRPC access token may carry (one must be the service's; Verify takes it).
  std::vector<std::string> audiences;
  // http:// issuer and provider endpoints on a loopback host (127.0.0.0/8, localhost, [::1]) —
  // for tests and a provider on the same host only. Every other URL must be https://.
  bool allow_loopback_http = false;
  // CA bundle for the provider's TLS certificate; empty: the system's default paths.
  std::string ca_file;
  std::vector<std::string> algorithms = {"RS256", "ES256", "EdDSA"};
  absl::Duration clock_skew = absl::Seconds(60);
  absl::Duration http_timeout = absl::Seconds(5);
  JwksCacheOptions jwks;
  ConsoleClient console;
  ClaimMapping claims;
};

// Errors: INVALID_ARGUMENT "oidc config: <field>: <problem>" (bad JSON, a missing or malformed
// field, an unsupported algorithm such as none or HS256, a bound out of range, an unknown field).
absl::StatusOr<OidcConfig> ParseOidcConfig(absl::string_view json);
// Errors: as ParseOidcConfig, plus FAILED_PRECONDITION when the file cannot be read.
absl::StatusOr<OidcConfig> LoadOidcConfigFile(const std::string& path);

// Whether `url` is acceptable as the provider's URL under `config`: https://, or http:// on a
// loopback host when allow_loopback_http. No userinfo, no fragment.
bool IsAllowedProviderUrl(const OidcConfig& config, absl::string_view url);

}  // namespace sharedos::common::oidc

#endif  // SHAREDOS_COMMON_OIDC_CONFIG_H_
