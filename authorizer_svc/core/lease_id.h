// Turn authority lease ids (authorizer.proto OpenTurnAuthorityResponse.lease_id): what a lease
// is — (lease key, revision) plus its admission instant, expiry and outcome — encoded so that
// any authorizer replica can rebuild it, and MACed so that no caller can make one up.
//
// Format: "l1." base64url(P) "." base64url(HMAC-SHA256(secret, "sharedos.authorizer.lease.v1\n" P))
// where P is the canonical JSON of
//   {"key": {namespaceId, actor, authority, owner, purpose, traceId, turnId},   (semantics §10.5)
//    "admittedAt": [seconds, nanos], "expiresAtMs": <unix ms>,
//    "status": "resolved" | "unavailable",
//    resolved:    "revision": <store revision>, "authorityHash": <hex>
//    unavailable: "code": "authority_unavailable" | "audit_unavailable", "authority": <internal
//    code>}
// The payload is readable (base64url, not encrypted): it holds nothing the caller did not send
// except the revision, the hash and the expiry. The MAC is what matters. Without the
// per-deployment secret a caller cannot mint a lease for another context, move a lease to an
// older revision (to resurrect a grant revoked since), extend its expiry, move its admission
// instant (issuedAt/notBefore are judged there) or turn an unavailable lease into a resolved one.
// Every replica of one deployment shares the secret. Stateless apart from the secret;
// thread-safe.

#ifndef SHAREDOS_AUTHORIZER_SVC_CORE_LEASE_ID_H_
#define SHAREDOS_AUTHORIZER_SVC_CORE_LEASE_ID_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sharedos/protocol/v1/context.pb.h"

namespace sharedos::authorizer::core {

// Everything a lease id carries.
struct LeaseClaims {
  enum class Status { kResolved, kUnavailable };

  // namespace_id, actor, authority, owner, purpose, trace_id and now (the admission instant);
  // nothing else (enabled_tool_namespaces is not part of a lease).
  protocol::v1::AccessContext context;
  std::string turn_id;
  absl::Time expires_at = absl::InfinitePast();
  Status status = Status::kUnavailable;
  // kResolved.
  int64_t revision = 0;
  std::string authority_hash;
  // kUnavailable: the caller-visible code and the internal one (metadata `authority`).
  std::string code;
  std::string internal_code;
};

// The lease key (semantics §3.2 turnAuthorityKey + turnId): canonical JSON of
// {namespaceId, actor, authority, owner, purpose, traceId, turnId}.
std::string LeaseKey(const protocol::v1::AccessContext& context, absl::string_view turn_id);

// The context a lease is decided under: the fields of the key and the admission instant.
protocol::v1::AccessContext LeaseContext(const protocol::v1::AccessContext& context);

// Encodes and verifies lease ids under one deployment secret.
class LeaseIdCodec {
 public:
  // `secret` should hold at least 32 random bytes; main refuses shorter ones.
  explicit LeaseIdCodec(std::string secret) : secret_(std::move(secret)) {}

  std::string Encode(const LeaseClaims& claims) const;

  // Errors: INVALID_ARGUMENT "lease_id: malformed (…)" (not of this format) or
  // "lease_id: integrity check failed" (the MAC does not verify). Expiry is not judged here.
  absl::StatusOr<LeaseClaims> Decode(absl::string_view lease_id) const;

 private:
  std::string Mac(absl::string_view payload) const;

  const std::string secret_;
};

}  // namespace sharedos::authorizer::core

#endif  // SHAREDOS_AUTHORIZER_SVC_CORE_LEASE_ID_H_
