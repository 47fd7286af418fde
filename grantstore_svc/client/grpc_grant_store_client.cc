#include "grantstore_svc/client/grpc_grant_store_client.h"

#include "common/client/bearer_call.h"

namespace sharedos::grantstore::client {

template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> GrpcGrantStoreClient::Call(Method method, const Request& request,
                                                    const CallOptions& options) {
  return common::BearerCall<Response>(authorization_, options.deadline,
                                      [&](grpc::ClientContext* context, Response* response) {
                                        return (stub_.get()->*method)(context, request, response);
                                      });
}

absl::StatusOr<v1::LoadAuthorityResponse> GrpcGrantStoreClient::LoadAuthority(
    const v1::LoadAuthorityRequest& request, const CallOptions& options) {
  return Call<v1::LoadAuthorityRequest, v1::LoadAuthorityResponse>(
      &v1::GrantStore::StubInterface::LoadAuthority, request, options);
}

absl::StatusOr<v1::ResolveGrantResponse> GrpcGrantStoreClient::ResolveGrant(
    const v1::ResolveGrantRequest& request, const CallOptions& options) {
  return Call<v1::ResolveGrantRequest, v1::ResolveGrantResponse>(
      &v1::GrantStore::StubInterface::ResolveGrant, request, options);
}

absl::StatusOr<v1::TryConsumeResponse> GrpcGrantStoreClient::TryConsume(
    const v1::TryConsumeRequest& request, const CallOptions& options) {
  return Call<v1::TryConsumeRequest, v1::TryConsumeResponse>(
      &v1::GrantStore::StubInterface::TryConsume, request, options);
}

absl::StatusOr<v1::GetUsageResponse> GrpcGrantStoreClient::GetUsage(
    const v1::GetUsageRequest& request, const CallOptions& options) {
  return Call<v1::GetUsageRequest, v1::GetUsageResponse>(&v1::GrantStore::StubInterface::GetUsage,
                                                         request, options);
}

absl::StatusOr<v1::CheckRevocationsResponse> GrpcGrantStoreClient::CheckRevocations(
    const v1::CheckRevocationsRequest& request, const CallOptions& options) {
  return Call<v1::CheckRevocationsRequest, v1::CheckRevocationsResponse>(
      &v1::GrantStore::StubInterface::CheckRevocations, request, options);
}

absl::StatusOr<v1::RecordEscalationResponse> GrpcGrantStoreClient::RecordEscalation(
    const v1::RecordEscalationRequest& request, const CallOptions& options) {
  return Call<v1::RecordEscalationRequest, v1::RecordEscalationResponse>(
      &v1::GrantStore::StubInterface::RecordEscalation, request, options);
}

}  // namespace sharedos::grantstore::client
