// The gRPC side of the identity provider (ADR 0020): a JWT access token → a SharedOS principal,
// for Authenticator::AttachTokenVerifier. Verified for any of the config's audiences, mapped by
// its claims mapping.
#ifndef SHAREDOS_COMMON_OIDC_BEARER_VERIFIER_H_
#define SHAREDOS_COMMON_OIDC_BEARER_VERIFIER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "common/oidc/config.h"
#include "common/oidc/http_fetcher.h"
#include "common/oidc/token_verifier.h"
#include "common/server/auth.h"
#include "common/time/clock.h"

namespace sharedos::common::oidc {

// Thread-safe. Owns the verifier chain (discovery, keys) of its config.
class OidcBearerVerifier : public server::BearerTokenVerifier {
 public:
  // `clock` borrowed; `fetcher` null: HTTP(S) per the config.
  OidcBearerVerifier(OidcConfig config, const Clock& clock,
                     std::unique_ptr<HttpFetcher> fetcher = nullptr)
      : stack_(std::move(config), clock, std::move(fetcher)) {}

  // Errors: as server::BearerTokenVerifier::VerifyBearer.
  absl::StatusOr<server::Principal> VerifyBearer(absl::string_view token) const override;

  const OidcVerifierStack& stack() const { return stack_; }

 private:
  OidcVerifierStack stack_;
};

// The verifier for --oidc_config=<path>. Errors: those of LoadOidcConfigFile, prefixed with the
// flag.
absl::StatusOr<std::unique_ptr<OidcBearerVerifier>> BearerVerifierFromFile(const std::string& path,
                                                                           const Clock& clock);

}  // namespace sharedos::common::oidc

#endif  // SHAREDOS_COMMON_OIDC_BEARER_VERIFIER_H_
