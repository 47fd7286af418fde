#include "authorizer_svc/client/grpc_authorizer_client.h"

#include <grpcpp/client_context.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status/grpc_status.h"

namespace sharedos::authorizer::client {
namespace {

namespace az = ::sharedos::authorizer::v1;

template <typename Response, typename Invoke>
absl::StatusOr<Response> Call(const std::string& authorization, absl::Duration timeout,
                              Invoke invoke) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", authorization);
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  Response response;
  grpc::Status status = invoke(&context, &response);
  if (!status.ok()) return common::FromGrpcStatus(status);
  return response;
}

}  // namespace

GrpcAuthorizerClient::GrpcAuthorizerClient(std::unique_ptr<az::Authorizer::StubInterface> stub,
                                           std::string token)
    : stub_(std::move(stub)), authorization_(absl::StrCat("Bearer ", token)) {}

absl::StatusOr<az::OpenTurnAuthorityResponse> GrpcAuthorizerClient::OpenTurnAuthority(
    const az::OpenTurnAuthorityRequest& request, absl::Duration timeout) {
  return Call<az::OpenTurnAuthorityResponse>(authorization_, timeout, [&](auto* c, auto* r) {
    return stub_->OpenTurnAuthority(c, request, r);
  });
}

absl::StatusOr<az::CloseTurnAuthorityResponse> GrpcAuthorizerClient::CloseTurnAuthority(
    const az::CloseTurnAuthorityRequest& request, absl::Duration timeout) {
  return Call<az::CloseTurnAuthorityResponse>(authorization_, timeout, [&](auto* c, auto* r) {
    return stub_->CloseTurnAuthority(c, request, r);
  });
}

absl::StatusOr<az::AuthorizeResponse> GrpcAuthorizerClient::Authorize(
    const az::AuthorizeRequest& request, absl::Duration timeout) {
  return Call<az::AuthorizeResponse>(
      authorization_, timeout, [&](auto* c, auto* r) { return stub_->Authorize(c, request, r); });
}

absl::StatusOr<az::DiscoverResponse> GrpcAuthorizerClient::Discover(
    const az::DiscoverRequest& request, absl::Duration timeout) {
  return Call<az::DiscoverResponse>(
      authorization_, timeout, [&](auto* c, auto* r) { return stub_->Discover(c, request, r); });
}

absl::StatusOr<az::AdmitTurnResponse> GrpcAuthorizerClient::AdmitTurn(
    const az::AdmitTurnRequest& request, absl::Duration timeout) {
  return Call<az::AdmitTurnResponse>(
      authorization_, timeout, [&](auto* c, auto* r) { return stub_->AdmitTurn(c, request, r); });
}

absl::StatusOr<az::ReachResponse> GrpcAuthorizerClient::Reach(const az::ReachRequest& request,
                                                              absl::Duration timeout) {
  return Call<az::ReachResponse>(authorization_, timeout,
                                 [&](auto* c, auto* r) { return stub_->Reach(c, request, r); });
}

absl::StatusOr<az::RecordEscalationResponse> GrpcAuthorizerClient::RecordEscalation(
    const az::RecordEscalationRequest& request, absl::Duration timeout) {
  return Call<az::RecordEscalationResponse>(authorization_, timeout, [&](auto* c, auto* r) {
    return stub_->RecordEscalation(c, request, r);
  });
}

}  // namespace sharedos::authorizer::client
