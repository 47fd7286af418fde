#include "common/server/auth.h"

#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/crypto/sha256.h"
#include "common/json/json_nesting.h"
#include "common/server/secret_file.h"
#include "nlohmann/json.hpp"

namespace sharedos::common::server {
namespace {

constexpr absl::string_view kUnauthenticated = "missing or invalid credential";

bool IsLowerHex64(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

absl::StatusOr<std::vector<std::string>> StringList(const nlohmann::json& value,
                                                    const std::string& path) {
  if (!value.is_array()) return absl::InvalidArgumentError(path + ": must be an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string() || value[i].get<std::string>().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(path, "[", i, "]: must be a non-empty string"));
    }
    out.push_back(value[i].get<std::string>());
  }
  return out;
}

// An entry's optional "cert_san" into `san`: a non-empty string of at most 256 bytes.
absl::Status ReadCertSan(const nlohmann::json& item, const std::string& path, std::string& san) {
  if (!item.contains("cert_san")) return absl::OkStatus();
  const nlohmann::json& value = item["cert_san"];
  if (!value.is_string() || value.get<std::string>().empty() ||
      value.get<std::string>().size() > 256) {
    return absl::InvalidArgumentError(path + ".cert_san: must be a string of 1 to 256 bytes");
  }
  san = value.get<std::string>();
  return absl::OkStatus();
}

bool Holds(const std::vector<std::string>& names, const std::string& name) {
  bool found = false;
  for (const std::string& candidate : names) found |= candidate == name;
  return found;
}

}  // namespace

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kAdmin:
      return "admin";
    case Role::kService:
      return "service";
    case Role::kHost:
      return "host";
  }
  return "unknown";
}

std::string TokenDigestHex(absl::string_view token) { return common::Sha256Hex(token); }

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::FromJson(absl::string_view json) {
  if (absl::Status nesting = common::CheckJsonNesting(json, "credentials"); !nesting.ok()) {
    return nesting;
  }
  nlohmann::json root = nlohmann::json::parse(json.begin(), json.end(), nullptr,
                                              /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return absl::InvalidArgumentError("credentials: not a JSON object");
  }
  for (const auto& [key, unused] : root.items()) {
    if (key != "credentials") return absl::InvalidArgumentError("credentials file: unknown key " + key);
  }
  if (!root.contains("credentials") || !root["credentials"].is_array()) {
    return absl::InvalidArgumentError("credentials: must be an array");
  }
  std::vector<Entry> entries;
  std::set<std::string> names, digests, cert_only_sans;
  const nlohmann::json& list = root["credentials"];
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = absl::StrCat("credentials[", i, "]");
    const nlohmann::json& item = list[i];
    if (!item.is_object()) return absl::InvalidArgumentError(path + ": must be an object");
    for (const auto& [key, unused] : item.items()) {
      if (key != "name" && key != "role" && key != "token_sha256" && key != "scope" &&
          key != "cert_san") {
        return absl::InvalidArgumentError(absl::StrCat(path, ": unknown field ", key));
      }
    }
    Entry entry;
    if (!item.contains("name") || !item["name"].is_string() ||
        item["name"].get<std::string>().empty()) {
      return absl::InvalidArgumentError(path + ".name: must be a non-empty string");
    }
    entry.principal.name = item["name"].get<std::string>();
    const std::string role = item.value("role", std::string());
    if (role == "admin") {
      entry.principal.role = Role::kAdmin;
    } else if (role == "service") {
      entry.principal.role = Role::kService;
    } else if (role == "host") {
      entry.principal.role = Role::kHost;
    } else {
      return absl::InvalidArgumentError(path + ".role: must be admin, service or host");
    }
    if (absl::Status san = ReadCertSan(item, path, entry.cert_san); !san.ok()) return san;
    const std::string digest_hex = item.value("token_sha256", std::string());
    if (!IsLowerHex64(digest_hex) && !(digest_hex.empty() && !entry.cert_san.empty())) {
      return absl::InvalidArgumentError(path + ".token_sha256: must be 64 lowercase hex digits");
    }
    entry.token_digest = digest_hex;
    if (item.contains("scope")) {
      if (entry.principal.role != Role::kHost) {
        return absl::InvalidArgumentError(path + ".scope: only a host credential has a scope");
      }
      const nlohmann::json& scope = item["scope"];
      if (!scope.is_object()) return absl::InvalidArgumentError(path + ".scope: must be an object");
      for (const auto& [key, unused] : scope.items()) {
        if (key != "namespaces" && key != "owners") {
          return absl::InvalidArgumentError(absl::StrCat(path, ".scope: unknown field ", key));
        }
      }
      if (scope.contains("namespaces")) {
        auto namespaces = StringList(scope["namespaces"], path + ".scope.namespaces");
        if (!namespaces.ok()) return namespaces.status();
        entry.principal.scope.namespaces = *std::move(namespaces);
      }
      if (scope.contains("owners")) {
        auto owners = StringList(scope["owners"], path + ".scope.owners");
        if (!owners.ok()) return owners.status();
        entry.principal.scope.owners = *std::move(owners);
      }
    }
    if (!names.insert(entry.principal.name).second) {
      return absl::InvalidArgumentError(path + ".name: duplicate " + entry.principal.name);
    }
    if (entry.token_digest.empty() && !cert_only_sans.insert(entry.cert_san).second) {
      return absl::InvalidArgumentError(path + ".cert_san: the same name is listed twice");
    }
    if (!entry.token_digest.empty() && !digests.insert(entry.token_digest).second) {
      return absl::InvalidArgumentError(path + ".token_sha256: the same token is listed twice");
    }
    entries.push_back(std::move(entry));
  }
  return std::unique_ptr<Authenticator>(new Authenticator(std::move(entries)));
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::FromFile(const std::string& path) {
  absl::StatusOr<std::string> json =
      ReadSecretFile(path, SecretPart::kWholeFile, "credentials file");
  if (!json.ok()) return json.status();
  return FromJson(*json);
}

const Authenticator::Entry* Authenticator::Match(absl::string_view authorization_header,
                                                 const std::vector<std::string>& peer_sans) const {
  absl::string_view header = absl::StripAsciiWhitespace(authorization_header);
  if (header.empty()) {
    // The certificate alone: the entry bound to one of its names that has no token.
    const Entry* match = nullptr;
    for (const Entry& entry : entries_) {
      if (entry.token_digest.empty() && Holds(peer_sans, entry.cert_san)) match = &entry;
    }
    return match;
  }
  constexpr absl::string_view kBearer = "bearer ";
  if (header.size() <= kBearer.size() || !absl::StartsWithIgnoreCase(header, kBearer)) {
    return nullptr;
  }
  absl::string_view token = absl::StripAsciiWhitespace(header.substr(kBearer.size()));
  if (token.empty()) return nullptr;
  const std::string presented = common::Sha256Hex(token);
  // Compare against every entry without stopping early, so timing says nothing about the list.
  const Entry* match = nullptr;
  for (const Entry& entry : entries_) {
    if (common::ConstantTimeEquals(presented, entry.token_digest)) match = &entry;
  }
  if (match != nullptr && !match->cert_san.empty() && !Holds(peer_sans, match->cert_san)) {
    return nullptr;
  }
  return match;
}

absl::StatusOr<Principal> Authenticator::Authenticate(
    absl::string_view authorization_header) const {
  const Entry* match = absl::StripAsciiWhitespace(authorization_header).empty()
                           ? nullptr
                           : Match(authorization_header, {});
  if (match == nullptr) return absl::UnauthenticatedError(kUnauthenticated);
  return match->principal;
}

absl::StatusOr<Principal> Authenticator::RequireWithPeer(absl::string_view authorization_header,
                                                         const std::vector<std::string>& peer_sans,
                                                         std::initializer_list<Role> roles) const {
  const Entry* match = Match(authorization_header, peer_sans);
  if (match == nullptr) return absl::UnauthenticatedError(kUnauthenticated);
  for (Role role : roles) {
    if (match->principal.role == role) return match->principal;
  }
  return absl::UnauthenticatedError(absl::StrCat(
      "credential of role ", RoleName(match->principal.role), " may not call this method"));
}

absl::StatusOr<Principal> Authenticator::Require(absl::string_view authorization_header,
                                                 std::initializer_list<Role> roles) const {
  absl::StatusOr<Principal> principal = Authenticate(authorization_header);
  if (!principal.ok()) return principal.status();
  for (Role role : roles) {
    if (principal->role == role) return principal;
  }
  return absl::UnauthenticatedError(
      absl::StrCat("credential of role ", RoleName(principal->role), " may not call this method"));
}

}  // namespace sharedos::common::server
