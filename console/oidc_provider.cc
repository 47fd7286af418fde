#include "console/oidc_provider.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/oauth/token_endpoint.h"

namespace sharedos::console {
namespace {

constexpr size_t kMaxClientSecretBytes = 4096;

}  // namespace

absl::StatusOr<std::unique_ptr<ConfiguredOidcProvider>> ConfiguredOidcProvider::Create(
    const common::oidc::OidcVerifierStack& stack) {
  const common::oidc::OidcConfig& config = stack.config();
  if (config.console.client_id.empty()) {
    return absl::InvalidArgumentError(
        "oidc config: console.client_id: required for the console's sign-in");
  }
  const std::string& path = config.console.client_secret_file;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream read;
  if (path.empty() || !in || !(read << in.rdbuf())) {
    return absl::InvalidArgumentError(
        absl::StrCat("oidc config: console.client_secret_file: cannot read \"", path, "\""));
  }
  std::string secret(absl::StripAsciiWhitespace(read.str()));
  if (secret.empty() || secret.size() > kMaxClientSecretBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("oidc config: console.client_secret_file: empty or over ",
                     kMaxClientSecretBytes, " bytes"));
  }
  OidcClientSettings settings;
  settings.client_id = config.console.client_id;
  settings.redirect_uri = config.console.redirect_uri;
  settings.scope = "openid";
  if (!config.audiences.empty()) settings.resource = config.audiences.front();
  return std::unique_ptr<ConfiguredOidcProvider>(
      new ConfiguredOidcProvider(stack, std::move(settings), std::move(secret)));
}

absl::StatusOr<OidcEndpoints> ConfiguredOidcProvider::Endpoints() {
  absl::StatusOr<common::oidc::ProviderMetadata> metadata = stack_.discovery().Get();
  if (!metadata.ok()) return metadata.status();
  if (metadata->authorization_endpoint.empty() || metadata->token_endpoint.empty()) {
    return absl::UnavailableError(
        "the provider's discovery document has no authorization_endpoint or token_endpoint");
  }
  return OidcEndpoints{metadata->issuer, metadata->authorization_endpoint, metadata->token_endpoint,
                       metadata->end_session_endpoint};
}

absl::StatusOr<OidcTokens> ConfiguredOidcProvider::ExchangeCode(absl::string_view code,
                                                                absl::string_view code_verifier,
                                                                absl::string_view redirect_uri) {
  absl::StatusOr<OidcEndpoints> endpoints = Endpoints();
  if (!endpoints.ok()) return endpoints.status();
  std::map<std::string, std::string> fields = {{"grant_type", "authorization_code"},
                                               {"code", std::string(code)},
                                               {"redirect_uri", std::string(redirect_uri)},
                                               {"code_verifier", std::string(code_verifier)}};
  if (!settings_.resource.empty()) fields["resource"] = settings_.resource;
  const common::oidc::OidcConfig& config = stack_.config();
  absl::StatusOr<common::oauth::HttpAnswer> answer =
      common::oauth::PostForm(endpoints->token, fields, settings_.client_id, client_secret_,
                              config.ca_file, config.http_timeout);
  if (!answer.ok()) return answer.status();
  absl::StatusOr<nlohmann::json> parsed = common::oauth::ParseAnswer(*answer);
  if (!parsed.ok()) return parsed.status();
  OidcTokens tokens{common::oauth::StringMember(*parsed, "id_token"),
                    common::oauth::StringMember(*parsed, "access_token")};
  if (tokens.id_token.empty() || tokens.access_token.empty()) {
    return absl::UnavailableError("the token endpoint answered no id_token or no access_token");
  }
  return tokens;
}

absl::StatusOr<OidcIdentity> ConfiguredOidcProvider::VerifyIdToken(absl::string_view id_token,
                                                                   absl::string_view nonce) {
  common::oidc::Refusal refusal = common::oidc::Refusal::kNone;
  absl::StatusOr<common::oidc::VerifiedToken> verified =
      stack_.verifier().Verify(id_token, settings_.client_id, nonce, &refusal);
  if (!verified.ok()) {
    if (verified.status().code() == absl::StatusCode::kUnauthenticated) {
      return absl::UnauthenticatedError(
          absl::StrCat("invalid ID token (", common::oidc::RefusalName(refusal), ")"));
    }
    return verified.status();
  }
  return OidcIdentity{verified->issuer, verified->subject};
}

}  // namespace sharedos::console
