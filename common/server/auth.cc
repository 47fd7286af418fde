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
#include "common/status/status_macros.h"
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
      return absl::InvalidArgumentError(
          absl::StrCat(path, "[", i, "]: must be a non-empty string"));
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

// The token of "Bearer <token>" ("" for any other header).
absl::string_view BearerToken(absl::string_view authorization_header) {
  absl::string_view header = absl::StripAsciiWhitespace(authorization_header);
  constexpr absl::string_view kBearer = "bearer ";
  if (header.size() <= kBearer.size() || !absl::StartsWithIgnoreCase(header, kBearer)) return "";
  return absl::StripAsciiWhitespace(header.substr(kBearer.size()));
}

// The SHA-256 hex of the token in "Bearer <token>", or "" when the header is not one.
std::string BearerDigest(absl::string_view authorization_header) {
  absl::string_view token = BearerToken(authorization_header);
  return token.empty() ? "" : common::Sha256Hex(token);
}

}  // namespace

bool IsJwtShaped(absl::string_view token) {
  // Bounded like every input: no identity provider's token is near this size.
  if (token.empty() || token.size() > 16 * 1024) return false;
  int dots = 0;
  size_t part = 0;
  for (char c : token) {
    if (c == '.') {
      if (part == 0) return false;
      ++dots;
      part = 0;
    } else if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') {
      ++part;
    } else {
      return false;
    }
  }
  return dots == 2 && part > 0;
}

absl::string_view RoleName(Role role) {
  switch (role) {
    case Role::kAdmin:
      return "admin";
    case Role::kService:
      return "service";
    case Role::kHost:
      return "host";
    case Role::kReviewer:
      return "reviewer";
  }
  return "unknown";
}

std::optional<Role> RoleFromName(absl::string_view name) {
  for (Role role : {Role::kAdmin, Role::kService, Role::kHost, Role::kReviewer}) {
    if (RoleName(role) == name) return role;
  }
  return std::nullopt;
}

bool IsAddressKey(absl::string_view key) {
  const size_t colon = key.find(':');
  if (colon == absl::string_view::npos) return false;
  const absl::string_view kind = key.substr(0, colon);
  const absl::string_view id = key.substr(colon + 1);
  if (kind != "human" && kind != "agent" && kind != "group" && kind != "service") return false;
  return !id.empty() && id.size() <= 256 && id.find(':') == absl::string_view::npos;
}

bool ScopeCovers(const std::vector<std::string>& values, absl::string_view value) {
  for (const std::string& v : values) {
    if (v == "*" || v == value) return true;
  }
  return false;
}

bool Principal::Administers(absl::string_view namespace_id) const {
  return role == Role::kAdmin && ScopeCovers(scope.namespaces, namespace_id);
}

std::string TokenDigestHex(absl::string_view token) { return common::Sha256Hex(token); }

namespace {

absl::Status ParseScope(const nlohmann::json& scope, const std::string& path, Scope& out) {
  if (!scope.is_object()) return absl::InvalidArgumentError(path + ": must be an object");
  for (const auto& [key, unused] : scope.items()) {
    if (key != "namespaces" && key != "owners" && key != "authorities") {
      return absl::InvalidArgumentError(absl::StrCat(path, ": unknown field ", key));
    }
  }
  if (scope.contains("namespaces")) {
    auto namespaces = StringList(scope["namespaces"], path + ".namespaces");
    if (!namespaces.ok()) return namespaces.status();
    out.namespaces = *std::move(namespaces);
  }
  if (scope.contains("owners")) {
    auto owners = StringList(scope["owners"], path + ".owners");
    if (!owners.ok()) return owners.status();
    out.owners = *std::move(owners);
  }
  if (scope.contains("authorities")) {
    auto authorities = StringList(scope["authorities"], path + ".authorities");
    if (!authorities.ok()) return authorities.status();
    out.authorities = *std::move(authorities);
  }
  return absl::OkStatus();
}

// One entry of the file; `path` names it in errors.
absl::StatusOr<Principal> ParseEntry(const nlohmann::json& item, const std::string& path) {
  if (!item.is_object()) return absl::InvalidArgumentError(path + ": must be an object");
  for (const auto& [key, unused] : item.items()) {
    if (key != "name" && key != "role" && key != "token_sha256" && key != "scope" &&
        key != "principal" && key != "cert_san") {
      return absl::InvalidArgumentError(absl::StrCat(path, ": unknown field ", key));
    }
  }
  Principal principal;
  principal.from_file = true;
  if (!item.contains("name") || !item["name"].is_string() ||
      item["name"].get<std::string>().empty()) {
    return absl::InvalidArgumentError(path + ".name: must be a non-empty string");
  }
  principal.name = item["name"].get<std::string>();
  const std::optional<Role> role = RoleFromName(item.value("role", std::string()));
  if (!role.has_value()) {
    return absl::InvalidArgumentError(path + ".role: must be admin, service, host or reviewer");
  }
  principal.role = *role;
  principal.address = "service:" + principal.name;
  if (item.contains("principal")) {
    if (!item["principal"].is_string() || !IsAddressKey(item["principal"].get<std::string>())) {
      return absl::InvalidArgumentError(path +
                                        ".principal: must be \"<human|agent|group|service>:<id>\"");
    }
    principal.address = item["principal"].get<std::string>();
  }
  if (item.contains("scope")) {
    if (principal.role == Role::kService) {
      return absl::InvalidArgumentError(path + ".scope: a service credential has no scope");
    }
    RETURN_IF_ERROR(ParseScope(item["scope"], path + ".scope", principal.scope));
  } else if (principal.role == Role::kAdmin) {
    principal.scope.namespaces = {"*"};  // The bootstrap operator.
  }
  return principal;
}

}  // namespace

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
    if (key != "credentials")
      return absl::InvalidArgumentError("credentials file: unknown key " + key);
  }
  if (!root.contains("credentials") || !root["credentials"].is_array()) {
    return absl::InvalidArgumentError("credentials: must be an array");
  }
  std::vector<Entry> entries;
  std::set<std::string> names, digests, cert_only_sans;
  const nlohmann::json& list = root["credentials"];
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = absl::StrCat("credentials[", i, "]");
    Entry entry;
    ASSIGN_OR_RETURN(entry.principal, ParseEntry(list[i], path));
    RETURN_IF_ERROR(ReadCertSan(list[i], path, entry.cert_san));
    const std::string digest_hex = list[i].value("token_sha256", std::string());
    if (!IsLowerHex64(digest_hex) && !(digest_hex.empty() && !entry.cert_san.empty())) {
      return absl::InvalidArgumentError(path + ".token_sha256: must be 64 lowercase hex digits");
    }
    entry.token_digest = digest_hex;
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
  if (absl::StripAsciiWhitespace(authorization_header).empty()) {
    // The certificate alone: the entry bound to one of its names that has no token.
    const Entry* match = nullptr;
    for (const Entry& entry : entries_) {
      if (entry.token_digest.empty() && Holds(peer_sans, entry.cert_san)) match = &entry;
    }
    return match;
  }
  const std::string presented = BearerDigest(authorization_header);
  if (presented.empty()) return nullptr;
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

absl::StatusOr<Principal> Authenticator::Resolve(absl::string_view authorization_header,
                                                 const std::vector<std::string>& peer_sans) const {
  if (const Entry* match = Match(authorization_header, peer_sans); match != nullptr) {
    return match->principal;
  }
  if (const BearerTokenVerifier* verifier = verifier_.load();
      verifier != nullptr && IsJwtShaped(BearerToken(authorization_header))) {
    return verifier->VerifyBearer(BearerToken(authorization_header));
  }
  const std::string presented = BearerDigest(authorization_header);
  const CredentialSource* source = source_.load();
  if (presented.empty() || source == nullptr) return absl::UnauthenticatedError(kUnauthenticated);
  absl::StatusOr<std::optional<Principal>> found = source->FindByDigest(presented);
  if (!found.ok()) {
    return absl::UnavailableError("credential store unavailable: " + found.status().ToString());
  }
  if (!found->has_value()) return absl::UnauthenticatedError(kUnauthenticated);
  return **std::move(found);
}

absl::StatusOr<Principal> Authenticator::Authenticate(
    absl::string_view authorization_header) const {
  if (absl::StripAsciiWhitespace(authorization_header).empty()) {
    return absl::UnauthenticatedError(kUnauthenticated);
  }
  return Resolve(authorization_header, {});
}

absl::StatusOr<Principal> Authenticator::RequireWithPeer(absl::string_view authorization_header,
                                                         const std::vector<std::string>& peer_sans,
                                                         std::initializer_list<Role> roles) const {
  ASSIGN_OR_RETURN(Principal principal, Resolve(authorization_header, peer_sans));
  for (Role role : roles) {
    if (principal.role == role) return principal;
  }
  return absl::PermissionDeniedError(
      absl::StrCat("credential of role ", RoleName(principal.role), " may not call this method"));
}

absl::StatusOr<Principal> Authenticator::Require(absl::string_view authorization_header,
                                                 std::initializer_list<Role> roles) const {
  absl::StatusOr<Principal> principal = Authenticate(authorization_header);
  if (!principal.ok()) return principal.status();
  for (Role role : roles) {
    if (principal->role == role) return principal;
  }
  return absl::PermissionDeniedError(
      absl::StrCat("credential of role ", RoleName(principal->role), " may not call this method"));
}

}  // namespace sharedos::common::server
