// AuthorizerClient that calls an AuthorizerCore in the same process (sharedosd): the same
// logic the Authorizer gRPC service adapts, without a channel, serialization or credential check
// in between — the envelope and the authorizer are one trust domain there. `timeout` is not
// applied: an in-process call cannot be lost, and every wait inside the authorizer (grantstore,
// audit) is bounded by its own deadlines. Thread-safe (AuthorizerCore is).

#ifndef SHAREDOS_AUTHORIZER_SVC_CLIENT_LOCAL_AUTHORIZER_CLIENT_H_
#define SHAREDOS_AUTHORIZER_SVC_CLIENT_LOCAL_AUTHORIZER_CLIENT_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "authorizer_svc/core/authorizer_core.h"

namespace sharedos::authorizer::client {

class LocalAuthorizerClient final : public AuthorizerClient {
 public:
  // Borrows `authorizer`, which must outlive this client.
  explicit LocalAuthorizerClient(authorizer::core::AuthorizerCore& authorizer)
      : authorizer_(authorizer) {}

  absl::StatusOr<authorizer::v1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const authorizer::v1::OpenTurnAuthorityRequest& request, absl::Duration) override {
    return authorizer_.OpenTurnAuthority(request);
  }
  absl::StatusOr<authorizer::v1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const authorizer::v1::CloseTurnAuthorityRequest& request, absl::Duration) override {
    return authorizer_.CloseTurnAuthority(request);
  }
  absl::StatusOr<authorizer::v1::AuthorizeResponse> Authorize(
      const authorizer::v1::AuthorizeRequest& request, absl::Duration) override {
    return authorizer_.Authorize(request);
  }
  absl::StatusOr<authorizer::v1::DiscoverResponse> Discover(
      const authorizer::v1::DiscoverRequest& request, absl::Duration) override {
    return authorizer_.Discover(request);
  }
  absl::StatusOr<authorizer::v1::AdmitTurnResponse> AdmitTurn(
      const authorizer::v1::AdmitTurnRequest& request, absl::Duration) override {
    return authorizer_.AdmitTurn(request);
  }
  absl::StatusOr<authorizer::v1::ReachResponse> Reach(const authorizer::v1::ReachRequest& request,
                                                      absl::Duration) override {
    return authorizer_.Reach(request);
  }
  absl::StatusOr<authorizer::v1::RecordEscalationResponse> RecordEscalation(
      const authorizer::v1::RecordEscalationRequest& request, absl::Duration) override {
    return authorizer_.RecordEscalation(request);
  }

 private:
  authorizer::core::AuthorizerCore& authorizer_;
};

}  // namespace sharedos::authorizer::client

#endif  // SHAREDOS_AUTHORIZER_SVC_CLIENT_LOCAL_AUTHORIZER_CLIENT_H_
