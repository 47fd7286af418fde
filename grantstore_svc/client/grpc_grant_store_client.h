// The default GrantStoreClient: grantstore_svc over gRPC, authenticated with this service's
// credential ("authorization: Bearer <token>"; the token is never logged or put in an error).

#ifndef SHAREDOS_GRANTSTORE_SVC_CLIENT_GRPC_GRANT_STORE_CLIENT_H_
#define SHAREDOS_GRANTSTORE_SVC_CLIENT_GRPC_GRANT_STORE_CLIENT_H_

#include <memory>
#include <string>

#include "grantstore_svc/client/grant_store_client.h"
#include "grpcpp/channel.h"
#include "sharedos/grantstore/v1/grantstore.grpc.pb.h"

namespace sharedos::grantstore::client {

// Thread-safe (gRPC stubs are). Calls fail fast (no wait-for-ready): a store that is away is
// UNAVAILABLE at once, not after the deadline.
class GrpcGrantStoreClient : public GrantStoreClient {
 public:
  // `token` is the service credential grantstore_svc knows this caller by.
  GrpcGrantStoreClient(std::unique_ptr<v1::GrantStore::StubInterface> stub, std::string token)
      : stub_(std::move(stub)), authorization_("Bearer " + std::move(token)) {}
  GrpcGrantStoreClient(const std::shared_ptr<grpc::ChannelInterface>& channel, std::string token)
      : GrpcGrantStoreClient(v1::GrantStore::NewStub(channel), std::move(token)) {}

  absl::StatusOr<v1::LoadAuthorityResponse> LoadAuthority(const v1::LoadAuthorityRequest& request,
                                                          const CallOptions& options) override;
  absl::StatusOr<v1::ResolveGrantResponse> ResolveGrant(const v1::ResolveGrantRequest& request,
                                                        const CallOptions& options) override;
  absl::StatusOr<v1::TryConsumeResponse> TryConsume(const v1::TryConsumeRequest& request,
                                                    const CallOptions& options) override;
  absl::StatusOr<v1::GetUsageResponse> GetUsage(const v1::GetUsageRequest& request,
                                                const CallOptions& options) override;
  absl::StatusOr<v1::CheckRevocationsResponse> CheckRevocations(
      const v1::CheckRevocationsRequest& request, const CallOptions& options) override;
  absl::StatusOr<v1::RecordEscalationResponse> RecordEscalation(
      const v1::RecordEscalationRequest& request, const CallOptions& options) override;

 private:
  // Runs one unary call with the credential and the deadline of `options`.
  template <typename Request, typename Response, typename Method>
  absl::StatusOr<Response> Call(Method method, const Request& request, const CallOptions& options);

  const std::unique_ptr<v1::GrantStore::StubInterface> stub_;
  const std::string authorization_;
};

}  // namespace sharedos::grantstore::client

#endif  // SHAREDOS_GRANTSTORE_SVC_CLIENT_GRPC_GRANT_STORE_CLIENT_H_
