#include "common/oidc/config.h"

#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/json/json_nesting.h"
#include "common/status/status_macros.h"
#include "common/text/url.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::oidc {
namespace {

using nlohmann::json;

absl::Status Bad(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("oidc config: ", field, ": ", problem));
}

absl::Status OnlyKnown(const json& object, absl::string_view path,
                       std::initializer_list<absl::string_view> known) {
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (absl::string_view k : known) found = found || k == key;
    if (!found) {
      return Bad(absl::StrCat(path, path.empty() ? "" : ".", key.substr(0, 64)), "unknown field");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadString(const json& object, absl::string_view key, absl::string_view path,
                        size_t max_length, bool required, std::string& out) {
  auto it = object.find(std::string(key));
  if (it == object.end()) {
    if (required) return Bad(path, "required");
    return absl::OkStatus();
  }
  if (!it->is_string()) return Bad(path, "must be a string");
  std::string value = it->get<std::string>();
  if (value.empty() || value.size() > max_length) {
    return Bad(path, absl::StrCat("must be 1 to ", max_length, " bytes"));
  }
  out = std::move(value);
  return absl::OkStatus();
}

absl::Status ReadStrings(const json& object, absl::string_view key, absl::string_view path,
                         size_t max_count, size_t max_length, bool required,
                         std::vector<std::string>& out) {
  auto it = object.find(std::string(key));
  if (it == object.end()) {
    if (required) return Bad(path, "required");
    return absl::OkStatus();
  }
  if (!it->is_array() || it->empty() || it->size() > max_count) {
    return Bad(path, absl::StrCat("must be an array of 1 to ", max_count, " strings"));
  }
  std::vector<std::string> values;
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_string() || v.get<std::string>().empty() ||
        v.get<std::string>().size() > max_length) {
      return Bad(absl::StrCat(path, "[", i, "]"),
                 absl::StrCat("must be a string of 1 to ", max_length, " bytes"));
    }
    values.push_back(v.get<std::string>());
  }
  out = std::move(values);
  return absl::OkStatus();
}

absl::Status ReadInt(const json& object, absl::string_view key, absl::string_view path, int64_t min,
                     int64_t max, int64_t& out) {
  auto it = object.find(std::string(key));
  if (it == object.end()) return absl::OkStatus();
  if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > max) {
    return Bad(path, absl::StrCat("must be an integer from ", min, " to ", max));
  }
  out = it->get<int64_t>();
  return absl::OkStatus();
}

absl::Status ParseRules(const json& claims, ClaimMapping& mapping) {
  auto it = claims.find("rules");
  if (it == claims.end()) return Bad("claims.rules", "required");
  if (!it->is_array() || it->empty() || it->size() > 256) {
    return Bad("claims.rules", "must be an array of 1 to 256 rules");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    const std::string path = absl::StrCat("claims.rules[", i, "]");
    if (!item.is_object()) return Bad(path, "must be an object");
    RETURN_IF_ERROR(OnlyKnown(item, path, {"group", "role", "namespaces"}));
    ClaimRule rule;
    RETURN_IF_ERROR(ReadString(item, "group", path + ".group", 256, true, rule.group));
    RETURN_IF_ERROR(ReadString(item, "role", path + ".role", 16, true, rule.role));
    if (rule.role != "reviewer" && rule.role != "admin") {
      return Bad(path + ".role", "must be \"reviewer\" or \"admin\"");
    }
    RETURN_IF_ERROR(
        ReadStrings(item, "namespaces", path + ".namespaces", 256, 128, true, rule.namespaces));
    mapping.rules.push_back(std::move(rule));
  }
  return absl::OkStatus();
}

absl::Status ParseClaims(const json& root, ClaimMapping& mapping) {
  auto it = root.find("claims");
  if (it == root.end()) return Bad("claims", "required");
  if (!it->is_object()) return Bad("claims", "must be an object");
  RETURN_IF_ERROR(OnlyKnown(*it, "claims", {"principal", "groups", "rules"}));
  RETURN_IF_ERROR(
      ReadString(*it, "principal", "claims.principal", 16, false, mapping.principal_claim));
  if (mapping.principal_claim != "sub" && mapping.principal_claim != "email") {
    return Bad("claims.principal", "must be \"sub\" or \"email\"");
  }
  RETURN_IF_ERROR(ReadString(*it, "groups", "claims.groups", 128, false, mapping.groups_claim));
  return ParseRules(*it, mapping);
}

bool IsLoopbackHost(absl::string_view host) {
  if (host == "localhost" || host == "[::1]") return true;
  if (!absl::StartsWith(host, "127.")) return false;
  for (char c : host) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return true;
}

}  // namespace

bool IsSupportedAlgorithm(absl::string_view alg) {
  return alg == "RS256" || alg == "RS384" || alg == "RS512" || alg == "PS256" || alg == "PS384" ||
         alg == "PS512" || alg == "ES256" || alg == "ES384" || alg == "EdDSA";
}

bool IsAllowedProviderUrl(const OidcConfig& config, absl::string_view url) {
  const absl::StatusOr<text::HttpUrl> parsed = text::ParseHttpUrl(url);
  if (!parsed.ok()) return false;
  if (parsed->https) return true;
  return config.allow_loopback_http && IsLoopbackHost(parsed->host);
}

absl::StatusOr<OidcConfig> ParseOidcConfig(absl::string_view text) {
  if (text.size() > kMaxConfigBytes) {
    return Bad("(file)", absl::StrCat("larger than ", kMaxConfigBytes, " bytes"));
  }
  RETURN_IF_ERROR(CheckJsonNesting(text, "oidc config", 8));
  const json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) return Bad("(file)", "not a JSON object");
  RETURN_IF_ERROR(
      OnlyKnown(root, "",
                {"issuer", "audiences", "allow_loopback_http", "ca_file", "algorithms",
                 "clock_skew_seconds", "http_timeout_ms", "jwks", "console", "claims"}));
  OidcConfig config;
  if (auto it = root.find("allow_loopback_http"); it != root.end()) {
    if (!it->is_boolean()) return Bad("allow_loopback_http", "must be a boolean");
    config.allow_loopback_http = it->get<bool>();
  }
  RETURN_IF_ERROR(ReadString(root, "issuer", "issuer", 1024, true, config.issuer));
  if (!IsAllowedProviderUrl(config, config.issuer) ||
      common::text::ParseHttpUrl(config.issuer)->has_query) {
    return Bad("issuer",
               "must be an https:// URL without query or fragment (http:// only on a loopback "
               "host with allow_loopback_http)");
  }
  RETURN_IF_ERROR(ReadStrings(root, "audiences", "audiences", 16, 256, true, config.audiences));
  RETURN_IF_ERROR(ReadString(root, "ca_file", "ca_file", 1024, false, config.ca_file));
  RETURN_IF_ERROR(ReadStrings(root, "algorithms", "algorithms", 16, 16, false, config.algorithms));
  for (size_t i = 0; i < config.algorithms.size(); ++i) {
    if (!IsSupportedAlgorithm(config.algorithms[i])) {
      return Bad(absl::StrCat("algorithms[", i, "]"),
                 "unsupported (none and HS* are refused; one of RS256, RS384, RS512, PS256, "
                 "PS384, PS512, ES256, ES384, EdDSA)");
    }
  }
  int64_t skew = 60;
  RETURN_IF_ERROR(ReadInt(root, "clock_skew_seconds", "clock_skew_seconds", 0,
                          absl::ToInt64Seconds(kMaxClockSkew), skew));
  config.clock_skew = absl::Seconds(skew);
  int64_t timeout_ms = 5000;
  RETURN_IF_ERROR(ReadInt(root, "http_timeout_ms", "http_timeout_ms", 100, 30000, timeout_ms));
  config.http_timeout = absl::Milliseconds(timeout_ms);
  if (auto it = root.find("jwks"); it != root.end()) {
    if (!it->is_object()) return Bad("jwks", "must be an object");
    RETURN_IF_ERROR(OnlyKnown(
        *it, "jwks",
        {"max_keys", "max_bytes", "refresh_interval_seconds", "min_refresh_interval_seconds"}));
    int64_t max_keys = static_cast<int64_t>(config.jwks.max_keys);
    int64_t max_bytes = static_cast<int64_t>(config.jwks.max_bytes);
    int64_t refresh = absl::ToInt64Seconds(config.jwks.refresh_interval);
    int64_t min_refresh = absl::ToInt64Seconds(config.jwks.min_refresh_interval);
    RETURN_IF_ERROR(ReadInt(*it, "max_keys", "jwks.max_keys", 1, 64, max_keys));
    RETURN_IF_ERROR(ReadInt(*it, "max_bytes", "jwks.max_bytes", 1024, 1024 * 1024, max_bytes));
    RETURN_IF_ERROR(ReadInt(*it, "refresh_interval_seconds", "jwks.refresh_interval_seconds", 60,
                            7 * 24 * 3600, refresh));
    RETURN_IF_ERROR(ReadInt(*it, "min_refresh_interval_seconds",
                            "jwks.min_refresh_interval_seconds", 0, 3600, min_refresh));
    config.jwks.max_keys = static_cast<size_t>(max_keys);
    config.jwks.max_bytes = static_cast<size_t>(max_bytes);
    config.jwks.refresh_interval = absl::Seconds(refresh);
    config.jwks.min_refresh_interval = absl::Seconds(min_refresh);
  }
  if (auto it = root.find("console"); it != root.end()) {
    if (!it->is_object()) return Bad("console", "must be an object");
    RETURN_IF_ERROR(OnlyKnown(*it, "console", {"client_id", "client_secret_file", "redirect_uri"}));
    RETURN_IF_ERROR(
        ReadString(*it, "client_id", "console.client_id", 256, true, config.console.client_id));
    RETURN_IF_ERROR(ReadString(*it, "client_secret_file", "console.client_secret_file", 1024, false,
                               config.console.client_secret_file));
    RETURN_IF_ERROR(ReadString(*it, "redirect_uri", "console.redirect_uri", 2048, true,
                               config.console.redirect_uri));
  }
  RETURN_IF_ERROR(ParseClaims(root, config.claims));
  return config;
}

absl::StatusOr<OidcConfig> LoadOidcConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::FailedPreconditionError(absl::StrCat("cannot read ", path));
  std::string text(kMaxConfigBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return ParseOidcConfig(text);
}

}  // namespace sharedos::common::oidc
