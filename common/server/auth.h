#ifndef SHAREDOS_COMMON_SERVER_AUTH_H_
#define SHAREDOS_COMMON_SERVER_AUTH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::server {

// What a credential may do. Each RPC names the roles it accepts.
enum class Role {
  // Operators: issue/revoke grants, host policy, resolve escalations, read audit.
  kAdmin,
  // Services calling services (authorizer -> grantstore, every writer -> audit).
  kService,
  // Product backends that run turns, within a scope.
  kHost,
};

// Which worlds and owners a host credential may open turns for. Empty lists mean "none".
struct HostScope {
  std::vector<std::string> namespaces;
  // Owners as "<kind>:<id>" (e.g. "human:user-alice"); "*" allows every owner.
  std::vector<std::string> owners;
};

// An authenticated caller. Never carries the credential itself.
struct Principal {
  std::string name;
  Role role = Role::kService;
  HostScope scope;
};

// Maps bearer credentials to principals. Credentials come from a JSON file:
//   {"credentials": [
//     {"name": "ops", "role": "admin", "token_sha256": "<64 hex>"},
//     {"name": "authorizer", "role": "service", "token_sha256": "<64 hex>"},
//     {"name": "host-a", "role": "host", "token_sha256": "<64 hex>",
//      "scope": {"namespaces": ["world-1"], "owners": ["human:user-alice"]}}]}
// An entry may instead, or besides, be bound to a certificate identity: "cert_san": "<subject
// alternative name>" (e.g. "spiffe://sharedos/authorizer", "authorizer.sharedos.internal")
// matches only a caller whose client certificate — verified by an mTLS listener
// (--tls_client_ca) — carries that name. With "token_sha256" too, both are required; without,
// the certificate alone authenticates (no authorization header). See RequireWithPeer.
// Only the SHA-256 of each token is stored; a presented token is hashed and compared in constant
// time with every entry (no early exit), and is never logged or echoed in an error.
// Thread-safe after construction (immutable).
class Authenticator {
 public:
  // Errors: INVALID_ARGUMENT naming the entry and field (bad JSON, unknown role, hash not 64 hex,
  // duplicate name or hash, scope on a non-host role).
  static absl::StatusOr<std::unique_ptr<Authenticator>> FromJson(absl::string_view json);
  // Errors: as FromJson, plus FAILED_PRECONDITION when the file cannot be read.
  static absl::StatusOr<std::unique_ptr<Authenticator>> FromFile(const std::string& path);

  // `authorization_header` is the raw "authorization" metadata value ("Bearer <token>").
  // Errors: UNAUTHENTICATED (missing, malformed or unknown credential) — one message for all,
  // so a caller learns nothing about which tokens exist.
  absl::StatusOr<Principal> Authenticate(absl::string_view authorization_header) const;

  // Authenticate, then require one of `roles`. Errors: UNAUTHENTICATED, including for a valid
  // credential of the wrong role (api.md: "a host credential or none → UNAUTHENTICATED").
  absl::StatusOr<Principal> Require(absl::string_view authorization_header,
                                    std::initializer_list<Role> roles) const;

  // Require for a caller whose verified client certificate carries the subject alternative
  // names `peer_sans` (empty: none, or no mTLS). A bearer token matches its entry, and an entry
  // with cert_san only when `peer_sans` holds it; no token (an empty header) matches the entry
  // bound to a name in `peer_sans` that has no token. Errors: as Require.
  absl::StatusOr<Principal> RequireWithPeer(absl::string_view authorization_header,
                                            const std::vector<std::string>& peer_sans,
                                            std::initializer_list<Role> roles) const;

 private:
  struct Entry {
    Principal principal;
    std::string token_digest;  // hex; empty for an entry bound to a certificate only
    std::string cert_san;      // empty: not bound to a certificate
  };
  // The entry `authorization_header` and `peer_sans` authenticate, or null.
  const Entry* Match(absl::string_view authorization_header,
                     const std::vector<std::string>& peer_sans) const;
  explicit Authenticator(std::vector<Entry> entries) : entries_(std::move(entries)) {}
  std::vector<Entry> entries_;
};

// "admin" | "service" | "host".
absl::string_view RoleName(Role role);

// SHA-256 hex of a token, for writing credential files (`sharedosctl` and tests use it).
std::string TokenDigestHex(absl::string_view token);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_AUTH_H_
