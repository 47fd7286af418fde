// The reviewer console's OpenID provider over the deployment's --oidc_config (common/oidc): the
// endpoints from the shared discovery cache, the code exchanged at the token endpoint with the
// console client's secret (read once from console.client_secret_file), the ID token verified by
// the shared TokenVerifier with audience = the console's client id and the sign-in's nonce.
// The access token is asked for the config's first audience (RFC 8707 resource), the one the
// services accept, since the console calls them with it.
#ifndef SHAREDOS_CONSOLE_OIDC_PROVIDER_H_
#define SHAREDOS_CONSOLE_OIDC_PROVIDER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/oidc/token_verifier.h"
#include "console/oidc_client.h"

namespace sharedos::console {

class ConfiguredOidcProvider : public OidcProvider {
 public:
  // `stack` is borrowed (must outlive the provider). Errors: INVALID_ARGUMENT naming
  // console.client_id or console.client_secret_file (missing, unreadable, empty, over 4 KiB).
  static absl::StatusOr<std::unique_ptr<ConfiguredOidcProvider>> Create(
      const common::oidc::OidcVerifierStack& stack);

  const OidcClientSettings& settings() const override { return settings_; }
  absl::StatusOr<OidcEndpoints> Endpoints() override;
  absl::StatusOr<OidcTokens> ExchangeCode(absl::string_view code, absl::string_view code_verifier,
                                          absl::string_view redirect_uri) override;
  absl::StatusOr<OidcIdentity> VerifyIdToken(absl::string_view id_token,
                                             absl::string_view nonce) override;

 private:
  ConfiguredOidcProvider(const common::oidc::OidcVerifierStack& stack, OidcClientSettings settings,
                         std::string client_secret)
      : stack_(stack), settings_(std::move(settings)), client_secret_(std::move(client_secret)) {}

  const common::oidc::OidcVerifierStack& stack_;
  const OidcClientSettings settings_;
  const std::string client_secret_;
};

}  // namespace sharedos::console

#endif  // SHAREDOS_CONSOLE_OIDC_PROVIDER_H_
