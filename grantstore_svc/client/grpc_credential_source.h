// The CredentialSource of a service that does not hold the grant store (authorizer_svc,
// envelope_svc, audit_svc run as their own processes): credentials issued through the control
// plane, looked up at grantstore_svc (GrantStore.AuthenticateCredential, service-only) with this
// service's credential on every call — no cache, so a revocation holds on the next call (ADR
// 0007). Only the presented token's SHA-256 travels; the token itself never leaves the process.

#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_GRPC_CREDENTIAL_SOURCE_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_GRPC_CREDENTIAL_SOURCE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/client/channel.h"
#include "common/server/auth.h"
#include "grpcpp/channel.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::client {

// Thread-safe (gRPC stubs are). Calls fail fast (no wait-for-ready).
class GrpcCredentialSource final : public common::server::CredentialSource {
 public:
  // The deadline of one lookup.
  static constexpr absl::Duration kDeadline = absl::Seconds(2);

  // `token` is the service credential grantstore_svc knows this caller by.
  GrpcCredentialSource(std::unique_ptr<v1::GrantStore::StubInterface> stub, std::string token)
      : stub_(std::move(stub)), authorization_("Bearer " + std::move(token)) {}
  GrpcCredentialSource(const std::shared_ptr<grpc::ChannelInterface>& channel, std::string token)
      : GrpcCredentialSource(v1::GrantStore::NewStub(channel), std::move(token)) {}

  // The live credential with that digest; nullopt when grantstore_svc knows none (NOT_FOUND:
  // unknown or revoked). Errors: UNAVAILABLE for every other outcome (grantstore_svc away, too
  // slow, or refusing this service) — the Authenticator refuses the caller, fail closed.
  absl::StatusOr<std::optional<common::server::Principal>> FindByDigest(
      const std::string& token_sha256_hex) const override;

 private:
  const std::unique_ptr<v1::GrantStore::StubInterface> stub_;
  const std::string authorization_;
};

// For a composition root: when `target` or `token_file` is set (the values of
// --grantstore_target and --grantstore_token_file), a source reaching grantstore_svc there over
// `tls`, attached to `authenticator`; null when both are empty (static credentials only). The
// caller keeps the source as long as the authenticator serves. Errors: those of
// common::server::ReadUpstream ("--grantstore_target: required", an unreadable token file, a
// plaintext target off loopback).
absl::StatusOr<std::unique_ptr<common::server::CredentialSource>> AttachGrantStoreCredentials(
    common::server::Authenticator& authenticator, const std::string& target,
    const std::string& token_file, const common::client::ChannelTls& tls);

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_GRPC_CREDENTIAL_SOURCE_H_
