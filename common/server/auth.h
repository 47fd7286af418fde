#ifndef SHAREDOS_COMMON_SERVER_AUTH_H_
#define SHAREDOS_COMMON_SERVER_AUTH_H_

#include <atomic>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace sharedos::common::server {

// What a credential may do. Each RPC names the roles it accepts.
enum class Role {
  // Operators of the namespaces in their scope ("*": every namespace — the bootstrap operator):
  // grants, host policy, credentials, escalations (on a reviewer's behalf), audit.
  kAdmin,
  // Services calling services (authorizer -> grantstore, every writer -> audit).
  kService,
  // Product backends that run turns, within a scope.
  kHost,
  // A human who resolves the escalations addressed to it (its principal is their reviewer).
  kReviewer,
};

// What a credential's role reaches. A list covers a value it holds, "*" covers every value, an
// empty list covers none — the one meaning everywhere (ScopeCovers).
//   admin:    namespaces it administers ("*": every one — the operator); owners unused.
//   host:     namespaces and owners it may open turns for; authorities it may name as a turn's
//             authority (empty: the owners — a host exercises only its owners' grants).
//   reviewer: namespaces in which it resolves the escalations addressed to its own principal;
//             owners unused.
//   service:  unused (a service is known by its principal, access_policy.h).
struct Scope {
  std::vector<std::string> namespaces;
  // Owners as "<kind>:<id>" (e.g. "human:user-alice").
  std::vector<std::string> owners;
  // Authorities as "<kind>:<id>" (hosts only).
  std::vector<std::string> authorities;
};
// The historical name of a host's scope.
using HostScope = Scope;

// Whether `values` covers `value`: it holds it, or "*" (which covers everything, the empty value
// too); an empty list covers nothing. The one meaning of a scope list (access_policy.h).
bool ScopeCovers(const std::vector<std::string>& values, absl::string_view value);

// An authenticated caller. Never carries the credential itself.
struct Principal {
  // The credential's name (an id; unique among credentials).
  std::string name;
  // The principal the credential names, as an address key "<kind>:<id>" (human:user-alice,
  // service:host-a). A static credential without one names "service:<name>".
  std::string address;
  Role role = Role::kService;
  Scope scope;
  // Where the credential came from, so a decision made with it can say who else held its secret
  // (ADR 0014, T3): its issuer and the principal that last set its secret (issue or rotation),
  // as address keys. Both empty for a credential of the static file (`from_file`), whose secrets
  // whoever wrote the file provisioned.
  std::string issued_by;
  std::string secret_set_by;
  bool from_file = false;
  // For a principal authenticated by the organisation's identity provider (a JWT bearer token,
  // ADR 0020): the token's `iss` and `sub`, carried into what the caller does (the escalation
  // resolution record names them). Both empty for SharedOS's own credentials.
  std::string idp_issuer;
  std::string idp_subject;

  // An admin whose scope covers `namespace_id`.
  bool Administers(absl::string_view namespace_id) const;
};

// Credentials that live outside the static file (the grant store's database). Looked up by the
// SHA-256 hex of a presented token on every call that the static file does not answer, so a
// revocation holds on the very next call. Implementations are thread-safe.
class CredentialSource {
 public:
  virtual ~CredentialSource() = default;
  // The live credential with that digest, nullopt when there is none (unknown or revoked).
  // Errors: UNAVAILABLE (the source cannot be reached: the caller is refused, fail closed).
  virtual absl::StatusOr<std::optional<Principal>> FindByDigest(
      const std::string& token_sha256_hex) const = 0;
};

// Verifies bearer tokens of the organisation's identity provider (JWT access tokens, ADR 0020)
// and maps them to principals (their idp_issuer and idp_subject set). Implemented in common/oidc
// (OidcBearerVerifier), attached by the mains when --oidc_config is given. Thread-safe.
class BearerTokenVerifier {
 public:
  virtual ~BearerTokenVerifier() = default;
  // Errors: UNAUTHENTICATED (a refused token: one message for every reason, never the token);
  // PERMISSION_DENIED (a valid token whose claims map to no SharedOS role); UNAVAILABLE (the
  // provider's keys cannot be had — fail closed).
  virtual absl::StatusOr<Principal> VerifyBearer(absl::string_view token) const = 0;
};

// Whether `token` has the shape of a JWT in compact form: three non-empty base64url parts
// separated by dots (SharedOS's own secrets, "sos_<hex>", never do).
bool IsJwtShaped(absl::string_view token);

// Maps bearer credentials to principals. Static credentials come from a JSON file:
//   {"credentials": [
//     {"name": "ops", "role": "admin", "token_sha256": "<64 hex>"},
//     {"name": "authorizer", "role": "service", "token_sha256": "<64 hex>"},
//     {"name": "host-a", "role": "host", "token_sha256": "<64 hex>",
//      "principal": "service:host-a",
//      "scope": {"namespaces": ["world-1"], "owners": ["human:user-alice"]}},
//     {"name": "alice", "role": "reviewer", "principal": "human:user-alice",
//      "token_sha256": "<64 hex>", "scope": {"namespaces": ["world-1"]}}]}
// An admin without a scope administers every namespace (the bootstrap operator, as before
// principals had scopes); a reviewer without one reviews in no namespace. Further credentials
// come from an attached CredentialSource.
// A static entry may instead, or besides, be bound to a certificate identity: "cert_san":
// "<subject alternative name>" (e.g. "spiffe://sharedos/authorizer") matches only a caller whose
// client certificate — verified by an mTLS listener (--tls_client_ca) — carries that name. With
// "token_sha256" too, both are required; without, the certificate alone authenticates (no
// authorization header). See RequireWithPeer. Only the SHA-256 of each token is stored; a presented
// token is hashed and compared in constant time with every static entry (no early exit), and is
// never logged or echoed in an error. Thread-safe (the static entries are immutable; the source
// is attached once, before serving).
class Authenticator {
 public:
  // Errors: INVALID_ARGUMENT naming the entry and field (bad JSON, unknown role, hash not 64 hex,
  // duplicate name or hash, a malformed principal, scope on a service credential).
  static absl::StatusOr<std::unique_ptr<Authenticator>> FromJson(absl::string_view json);
  // Errors: as FromJson, plus FAILED_PRECONDITION when the file cannot be read.
  static absl::StatusOr<std::unique_ptr<Authenticator>> FromFile(const std::string& path);

  // Credentials beyond the static file are looked up in `source` (borrowed; must outlive the
  // authenticator). Call before serving.
  void AttachSource(const CredentialSource* source) { source_.store(source); }

  // A bearer token of JWT shape (IsJwtShaped) that no static entry matches is verified by
  // `verifier` (borrowed; must outlive the authenticator) instead of the source: the
  // organisation's identity provider (ADR 0020). Static and source credentials keep working
  // beside it. Call before serving.
  void AttachTokenVerifier(const BearerTokenVerifier* verifier) { verifier_.store(verifier); }

  // `authorization_header` is the raw "authorization" metadata value ("Bearer <token>").
  // Errors: UNAUTHENTICATED (missing, malformed, unknown or revoked credential) — one message for
  // all, so a caller learns nothing about which tokens exist; UNAVAILABLE (the source, or the
  // identity provider's keys, cannot be reached); PERMISSION_DENIED (an identity provider's token
  // that maps to no SharedOS role).
  absl::StatusOr<Principal> Authenticate(absl::string_view authorization_header) const;

  // Authenticate, then require one of `roles`. Errors: as Authenticate; PERMISSION_DENIED for an
  // authenticated credential of another role.
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
  // The static entry `authorization_header` and `peer_sans` authenticate, or null.
  const Entry* Match(absl::string_view authorization_header,
                     const std::vector<std::string>& peer_sans) const;
  // Match, else the attached source by the token's digest. Errors: as Authenticate.
  absl::StatusOr<Principal> Resolve(absl::string_view authorization_header,
                                    const std::vector<std::string>& peer_sans) const;
  explicit Authenticator(std::vector<Entry> entries) : entries_(std::move(entries)) {}
  std::vector<Entry> entries_;
  std::atomic<const CredentialSource*> source_{nullptr};
  std::atomic<const BearerTokenVerifier*> verifier_{nullptr};
};

// "admin" | "service" | "host" | "reviewer".
absl::string_view RoleName(Role role);
// The inverse of RoleName; nullopt for anything else.
std::optional<Role> RoleFromName(absl::string_view name);

// Whether `key` is an address key "<kind>:<id>" with kind human, agent, group or service and a
// non-empty id without ':'.
bool IsAddressKey(absl::string_view key);

// SHA-256 hex of a token, for writing credential files (`sharedosctl` and tests use it).
std::string TokenDigestHex(absl::string_view token);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_AUTH_H_
