#include "grantstore_svc/core/credentials.h"

#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/escaping.h"
#include "capability/address.h"
#include "common/crypto/random.h"

namespace sharedos::grantstore::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using common::server::Principal;
using common::server::Role;

Role RoleOf(v1::CredentialRole role) {
  switch (role) {
    case v1::CREDENTIAL_ROLE_ADMIN:
      return Role::kAdmin;
    case v1::CREDENTIAL_ROLE_HOST:
      return Role::kHost;
    case v1::CREDENTIAL_ROLE_REVIEWER:
      return Role::kReviewer;
    default:
      return Role::kService;
  }
}

}  // namespace

std::optional<pb::Address> AddressFromKey(absl::string_view key) {
  if (!common::server::IsAddressKey(key)) return std::nullopt;
  return capability::AddressFromKey(key);
}

pb::Address ActorOf(const Principal& caller) {
  std::optional<pb::Address> address = AddressFromKey(caller.address);
  if (address.has_value()) return *std::move(address);
  pb::Address fallback;
  fallback.set_service_id(caller.name);
  return fallback;
}

Principal PrincipalFromCredential(const v1::Credential& credential) {
  Principal principal;
  principal.name = credential.credential_id();
  principal.address = capability::AddressKey(credential.principal());
  principal.role = RoleOf(credential.role());
  principal.scope.namespaces.assign(credential.scope().namespaces().begin(),
                                    credential.scope().namespaces().end());
  principal.scope.owners.assign(credential.scope().owners().begin(),
                                credential.scope().owners().end());
  principal.scope.authorities.assign(credential.scope().authorities().begin(),
                                     credential.scope().authorities().end());
  principal.issued_by = capability::AddressKey(credential.issued_by());
  // Stored before the setter was recorded: its issuer set it.
  principal.secret_set_by = credential.has_secret_set_by()
                                ? capability::AddressKey(credential.secret_set_by())
                                : principal.issued_by;
  return principal;
}

bool Manages(const Principal& caller, const v1::Credential& credential) {
  if (caller.role != Role::kAdmin) return false;
  if (absl::c_linear_search(caller.scope.namespaces, "*")) return true;
  if (credential.role() != v1::CREDENTIAL_ROLE_HOST &&
      credential.role() != v1::CREDENTIAL_ROLE_REVIEWER) {
    return false;
  }
  // A credential of no namespace, or of every one, is nobody's but the operator's: a scoped
  // admin manages only what lies wholly within its namespaces.
  if (credential.scope().namespaces().empty()) return false;
  for (const std::string& namespace_id : credential.scope().namespaces()) {
    if (namespace_id == "*" || !caller.Administers(namespace_id)) return false;
  }
  return true;
}

absl::StatusOr<std::string> NewCredentialSecret() {
  absl::StatusOr<std::string> bytes = common::SecureRandomBytes(32);
  if (!bytes.ok()) return bytes.status();
  return "sos_" + absl::BytesToHexString(*bytes);
}

absl::StatusOr<std::optional<Principal>> StoreCredentialSource::FindByDigest(
    const std::string& token_sha256_hex) const {
  if (serving_ != nullptr) {
    if (absl::Status serving = serving_(); !serving.ok()) return serving;
  }
  absl::StatusOr<std::optional<storage::StoredCredential>> found =
      store_.FindCredentialByDigest(token_sha256_hex);
  if (!found.ok()) return found.status();
  if (!found->has_value() || (*found)->credential.has_revoked_at()) {
    return std::optional<Principal>();
  }
  return std::optional<Principal>(PrincipalFromCredential((*found)->credential));
}

}  // namespace sharedos::grantstore::core
