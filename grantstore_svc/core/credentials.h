// Principals and credentials as the grant store sees them: an authenticated Principal (the
// core's Caller) as an Address, a stored Credential as a Principal, and the CredentialSource
// that authenticates credentials issued through the control plane against the store (read on
// every call: a revocation holds on the next one). Stateless helpers; the source is thread-safe.

#ifndef SHAREDOS_GRANTSTORE_SVC_CORE_CREDENTIALS_H_
#define SHAREDOS_GRANTSTORE_SVC_CORE_CREDENTIALS_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/server/auth.h"
#include "grantstore_svc/storage/grant_store.h"
#include "sharedos/grantstore/v1/grantstore.pb.h"
#include "sharedos/protocol/v1/common.pb.h"

namespace sharedos::grantstore::core {

// "<kind>:<id>" → Address; nullopt when `key` is not an address key.
std::optional<protocol::v1::Address> AddressFromKey(absl::string_view key);

// The acting principal of an authenticated caller: its address, or {service_id: name} for a
// principal without one.
protocol::v1::Address ActorOf(const common::server::Principal& caller);

// The Principal a stored (live) credential authenticates as.
common::server::Principal PrincipalFromCredential(const v1::Credential& credential);

// Whether `caller` (an admin) may see and manage `credential`: the "*" admin every one; another
// admin those whose namespaces it all administers, of role host or reviewer.
bool Manages(const common::server::Principal& caller, const v1::Credential& credential);

// A new secret: "sos_" + 64 hex digits of secure randomness. Errors: INTERNAL (no randomness).
absl::StatusOr<std::string> NewCredentialSecret();

// Credentials of the store, for the Authenticator of the process holding the store (grantstore_svc,
// sharedosd). Borrows the store and `serving` (null: always serving): while it answers an error
// (the store behind the audit log, docs/adr/0021), no credential of the store authenticates —
// a restored copy would bring revoked ones back — and the callers get UNAVAILABLE.
class StoreCredentialSource final : public common::server::CredentialSource {
 public:
  explicit StoreCredentialSource(storage::GrantStore& store,
                                 std::function<absl::Status()> serving = nullptr)
      : store_(store), serving_(std::move(serving)) {}
  absl::StatusOr<std::optional<common::server::Principal>> FindByDigest(
      const std::string& token_sha256_hex) const override;

 private:
  storage::GrantStore& store_;
  const std::function<absl::Status()> serving_;
};

}  // namespace sharedos::grantstore::core

#endif  // SHAREDOS_GRANTSTORE_SVC_CORE_CREDENTIALS_H_
