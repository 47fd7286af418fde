#include "common/oidc/discovery.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/json/json_nesting.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::oidc {
namespace {

absl::Status Unusable(absl::string_view problem) {
  return absl::UnavailableError(absl::StrCat("provider discovery document: ", problem));
}

absl::Status ReadEndpoint(const OidcConfig& config, const nlohmann::json& doc, const char* key,
                          bool required, std::string& out) {
  auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) {
    if (required) return Unusable(absl::StrCat(key, " missing"));
    return absl::OkStatus();
  }
  if (!it->is_string() || !IsAllowedProviderUrl(config, it->get<std::string>())) {
    return Unusable(absl::StrCat(key, " is not an allowed provider URL"));
  }
  out = it->get<std::string>();
  return absl::OkStatus();
}

}  // namespace

std::string DiscoveryUrl(absl::string_view issuer) {
  if (absl::EndsWith(issuer, "/")) issuer.remove_suffix(1);
  return absl::StrCat(issuer, "/.well-known/openid-configuration");
}

absl::StatusOr<ProviderMetadata> ParseDiscovery(const OidcConfig& config, absl::string_view text) {
  if (text.size() > kMaxDiscoveryBytes) return Unusable("too large");
  if (!CheckJsonNesting(text, "discovery", kMaxTokenJsonNesting).ok()) {
    return Unusable("nested too deep");
  }
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Unusable("not a JSON object");
  auto issuer = doc.find("issuer");
  if (issuer == doc.end() || !issuer->is_string() || issuer->get<std::string>() != config.issuer) {
    return Unusable("issuer differs from the configured issuer");
  }
  ProviderMetadata metadata;
  metadata.issuer = config.issuer;
  absl::Status status = ReadEndpoint(config, doc, "jwks_uri", true, metadata.jwks_uri);
  if (status.ok()) {
    status =
        ReadEndpoint(config, doc, "authorization_endpoint", false, metadata.authorization_endpoint);
  }
  if (status.ok()) {
    status = ReadEndpoint(config, doc, "token_endpoint", false, metadata.token_endpoint);
  }
  if (status.ok()) {
    status = ReadEndpoint(config, doc, "device_authorization_endpoint", false,
                          metadata.device_authorization_endpoint);
  }
  if (status.ok()) {
    status =
        ReadEndpoint(config, doc, "end_session_endpoint", false, metadata.end_session_endpoint);
  }
  if (!status.ok()) return status;
  return metadata;
}

absl::StatusOr<ProviderMetadata> FetchDiscovery(const OidcConfig& config,
                                                const HttpFetcher& fetcher) {
  absl::StatusOr<std::string> body = fetcher.Get(DiscoveryUrl(config.issuer), kMaxDiscoveryBytes);
  if (!body.ok()) return absl::UnavailableError(body.status().message());
  return ParseDiscovery(config, *body);
}

absl::StatusOr<ProviderMetadata> DiscoveryCache::Get() const {
  absl::MutexLock lock(&mu_);
  if (metadata_.has_value()) return *metadata_;
  const absl::Time now = clock_.Now();
  if (!last_error_.ok() && now - last_attempt_ < retry_interval_) return last_error_;
  last_attempt_ = now;
  absl::StatusOr<ProviderMetadata> fetched = FetchDiscovery(config_, fetcher_);
  if (!fetched.ok()) {
    last_error_ = fetched.status();
    return last_error_;
  }
  metadata_ = *fetched;
  last_error_ = absl::OkStatus();
  return *metadata_;
}

}  // namespace sharedos::common::oidc
