#include "common/oidc/bearer_verifier.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/oidc/claims_mapping.h"

namespace sharedos::common::oidc {

absl::StatusOr<server::Principal> OidcBearerVerifier::VerifyBearer(absl::string_view token) const {
  absl::StatusOr<VerifiedToken> verified =
      stack_.verifier().VerifyForAnyAudience(token, stack_.config().audiences);
  if (!verified.ok()) return verified.status();
  return MapToPrincipal(stack_.config().claims, *verified);
}

absl::StatusOr<std::unique_ptr<OidcBearerVerifier>> BearerVerifierFromFile(const std::string& path,
                                                                           const Clock& clock) {
  absl::StatusOr<OidcConfig> config = LoadOidcConfigFile(path);
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat("--oidc_config: ", config.status().message()));
  }
  return std::make_unique<OidcBearerVerifier>(*std::move(config), clock);
}

}  // namespace sharedos::common::oidc
