// GrantStoreClient that calls a GrantStoreCore in the same process (sharedosd): the same logic the
// GrantStore gRPC service adapts, without a channel, serialization or credential in between — the
// authorizer and the grant store are one process there, and a token between them would be a
// secret that only widens who can call (ADR 0014, T4). Escalations are recorded as the authorizer
// (service:authorizer) would record them over gRPC. `options.deadline` is not applied: an
// in-process call cannot be lost, and the store's own waits are bounded (busy timeout).
// Thread-safe (GrantStoreCore is).

#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_LOCAL_GRANT_STORE_CLIENT_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_LOCAL_GRANT_STORE_CLIENT_H_

#include "absl/status/statusor.h"
#include "common/server/access_policy.h"
#include "common/server/auth.h"
#include "grantstore_svc/client/grant_store_client.h"
#include "grantstore_svc/core/grant_store_core.h"

namespace sharedos::grantstore::client {

class LocalGrantStoreClient final : public GrantStoreClient {
 public:
  // Borrows `core`, which must outlive this client.
  explicit LocalGrantStoreClient(core::GrantStoreCore& core) : core_(core) {
    authorizer_.name = "authorizer";
    authorizer_.address = std::string(common::server::kAuthorizerService);
    authorizer_.role = common::server::Role::kService;
  }

  absl::StatusOr<v1::LoadAuthorityResponse> LoadAuthority(const v1::LoadAuthorityRequest& request,
                                                          const CallOptions&) override {
    return core_.LoadAuthority(request);
  }
  absl::StatusOr<v1::ResolveGrantResponse> ResolveGrant(const v1::ResolveGrantRequest& request,
                                                        const CallOptions&) override {
    return core_.ResolveGrant(request);
  }
  absl::StatusOr<v1::TryConsumeResponse> TryConsume(const v1::TryConsumeRequest& request,
                                                    const CallOptions&) override {
    return core_.TryConsume(request);
  }
  absl::StatusOr<v1::GetUsageResponse> GetUsage(const v1::GetUsageRequest& request,
                                                const CallOptions&) override {
    return core_.GetUsage(request);
  }
  absl::StatusOr<v1::CheckRevocationsResponse> CheckRevocations(
      const v1::CheckRevocationsRequest& request, const CallOptions&) override {
    return core_.CheckRevocations(request);
  }
  absl::StatusOr<v1::RecordEscalationResponse> RecordEscalation(
      const v1::RecordEscalationRequest& request, const CallOptions&) override {
    return core_.RecordEscalation(authorizer_, request);
  }

 private:
  core::GrantStoreCore& core_;
  common::server::Principal authorizer_;
};

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_LOCAL_GRANT_STORE_CLIENT_H_
