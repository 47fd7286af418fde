#include "common/server/oidc_flags.h"

#include <utility>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, oidc_config, "",
          "JSON file describing the organisation's OpenID provider (issuer, accepted audiences, "
          "algorithms, claims → roles; docs/operations.md). With it, the provider's JWT access "
          "tokens authenticate on gRPC beside SharedOS credentials. Empty: no identity provider.");

namespace sharedos::common::server {

std::string OidcConfigFlag() { return absl::GetFlag(FLAGS_oidc_config); }

absl::StatusOr<std::unique_ptr<oidc::OidcBearerVerifier>> AttachOidcFromFlags(
    Authenticator& authenticator, const Clock& clock) {
  const std::string path = OidcConfigFlag();
  if (path.empty()) return std::unique_ptr<oidc::OidcBearerVerifier>();
  absl::StatusOr<std::unique_ptr<oidc::OidcBearerVerifier>> verifier =
      oidc::BearerVerifierFromFile(path, clock);
  if (!verifier.ok()) return verifier.status();
  authenticator.AttachTokenVerifier(verifier->get());
  return verifier;
}

}  // namespace sharedos::common::server
