#include "authorizer_svc/client/grpc_authorizer_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/client/bearer_call.h"

namespace sharedos::authorizer::client {
namespace {

namespace az = ::sharedos::authorizer::v1;
using ::sharedos::common::BearerCall;

}  // namespace

GrpcAuthorizerClient::GrpcAuthorizerClient(std::unique_ptr<az::Authorizer::StubInterface> stub,
                                           std::string token)
    : stub_(std::move(stub)), authorization_(absl::StrCat("Bearer ", token)) {}

absl::StatusOr<az::OpenTurnAuthorityResponse> GrpcAuthorizerClient::OpenTurnAuthority(
    const az::OpenTurnAuthorityRequest& request, absl::Duration timeout) {
  return BearerCall<az::OpenTurnAuthorityResponse>(authorization_, timeout, [&](auto* c, auto* r) {
    return stub_->OpenTurnAuthority(c, request, r);
  });
}

absl::StatusOr<az::CloseTurnAuthorityResponse> GrpcAuthorizerClient::CloseTurnAuthority(
    const az::CloseTurnAuthorityRequest& request, absl::Duration timeout) {
  return BearerCall<az::CloseTurnAuthorityResponse>(authorization_, timeout, [&](auto* c, auto* r) {
    return stub_->CloseTurnAuthority(c, request, r);
  });
}

absl::StatusOr<az::AuthorizeResponse> GrpcAuthorizerClient::Authorize(
    const az::AuthorizeRequest& request, absl::Duration timeout) {
  return BearerCall<az::AuthorizeResponse>(
      authorization_, timeout, [&](auto* c, auto* r) { return stub_->Authorize(c, request, r); });
}

absl::StatusOr<az::DiscoverResponse> GrpcAuthorizerClient::Discover(
    const az::DiscoverRequest& request, absl::Duration timeout) {
  return BearerCall<az::DiscoverResponse>(
      authorization_, timeout, [&](auto* c, auto* r) { return stub_->Discover(c, request, r); });
}

absl::StatusOr<az::AdmitTurnResponse> GrpcAuthorizerClient::AdmitTurn(
    const az::AdmitTurnRequest& request, absl::Duration timeout) {
  return BearerCall<az::AdmitTurnResponse>(
      authorization_, timeout, [&](auto* c, auto* r) { return stub_->AdmitTurn(c, request, r); });
}

absl::StatusOr<az::ReachResponse> GrpcAuthorizerClient::Reach(const az::ReachRequest& request,
                                                              absl::Duration timeout) {
  return BearerCall<az::ReachResponse>(
      authorization_, timeout, [&](auto* c, auto* r) { return stub_->Reach(c, request, r); });
}

absl::StatusOr<az::RecordEscalationResponse> GrpcAuthorizerClient::RecordEscalation(
    const az::RecordEscalationRequest& request, absl::Duration timeout) {
  return BearerCall<az::RecordEscalationResponse>(authorization_, timeout, [&](auto* c, auto* r) {
    return stub_->RecordEscalation(c, request, r);
  });
}

}  // namespace sharedos::authorizer::client
