// AuthorizerClient over the generated sharedos.authorizer.v1.Authorizer stub: every call
// carries "authorization: Bearer <service token>" and its own deadline; gRPC errors become the
// same absl codes (messages kept, they never reach an agent). Thread-safe (the stub is).

#ifndef SHAREDOS_AUTHORIZER_SVC_CLIENT_GRPC_AUTHORIZER_CLIENT_H_
#define SHAREDOS_AUTHORIZER_SVC_CLIENT_GRPC_AUTHORIZER_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "sharedos/authorizer/v1/authorizer.grpc.pb.h"

namespace sharedos::authorizer::client {

class GrpcAuthorizerClient final : public AuthorizerClient {
 public:
  // `token` is envelope_svc's service credential at authorizer_svc.
  GrpcAuthorizerClient(std::unique_ptr<authorizer::v1::Authorizer::StubInterface> stub,
                       std::string token);

  absl::StatusOr<authorizer::v1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const authorizer::v1::OpenTurnAuthorityRequest& request, absl::Duration timeout) override;
  absl::StatusOr<authorizer::v1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const authorizer::v1::CloseTurnAuthorityRequest& request, absl::Duration timeout) override;
  absl::StatusOr<authorizer::v1::AuthorizeResponse> Authorize(
      const authorizer::v1::AuthorizeRequest& request, absl::Duration timeout) override;
  absl::StatusOr<authorizer::v1::DiscoverResponse> Discover(
      const authorizer::v1::DiscoverRequest& request, absl::Duration timeout) override;
  absl::StatusOr<authorizer::v1::AdmitTurnResponse> AdmitTurn(
      const authorizer::v1::AdmitTurnRequest& request, absl::Duration timeout) override;
  absl::StatusOr<authorizer::v1::ReachResponse> Reach(const authorizer::v1::ReachRequest& request,
                                                      absl::Duration timeout) override;
  absl::StatusOr<authorizer::v1::RecordEscalationResponse> RecordEscalation(
      const authorizer::v1::RecordEscalationRequest& request, absl::Duration timeout) override;

 private:
  const std::unique_ptr<authorizer::v1::Authorizer::StubInterface> stub_;
  const std::string authorization_;
};

}  // namespace sharedos::authorizer::client

#endif  // SHAREDOS_AUTHORIZER_SVC_CLIENT_GRPC_AUTHORIZER_CLIENT_H_
