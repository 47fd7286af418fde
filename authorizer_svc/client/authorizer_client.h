// envelope_svc's seam towards authorizer_svc: the seven Authorizer RPCs as plain calls, so the
// turn logic holds no grpcpp type. The production implementation wraps the generated
// sharedos::authorizer::v1::Authorizer::StubInterface
// (authorizer_svc/client/grpc_authorizer_client.h); tests use a fake or the real AuthorizerCore.
// Implementations must be thread-safe: one client serves every turn.

#ifndef SHAREDOS_AUTHORIZER_SVC_CLIENT_AUTHORIZER_CLIENT_H_
#define SHAREDOS_AUTHORIZER_SVC_CLIENT_AUTHORIZER_CLIENT_H_

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sharedos/authorizer/v1/authorizer.pb.h"

namespace sharedos::authorizer::client {

// Every method answers what authorizer.proto says (denials are responses, never errors); an
// error status is the RPC's own (INVALID_ARGUMENT, NOT_FOUND for an expired lease, UNAVAILABLE
// or DEADLINE_EXCEEDED when authorizer_svc does not answer within `timeout`, UNAUTHENTICATED for
// a bad service credential). The turn logic treats every error on a decision path as a
// fail-closed authority_unavailable.
class AuthorizerClient {
 public:
  virtual ~AuthorizerClient() = default;

  virtual absl::StatusOr<authorizer::v1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const authorizer::v1::OpenTurnAuthorityRequest& request, absl::Duration timeout) = 0;
  virtual absl::StatusOr<authorizer::v1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const authorizer::v1::CloseTurnAuthorityRequest& request, absl::Duration timeout) = 0;
  virtual absl::StatusOr<authorizer::v1::AuthorizeResponse> Authorize(
      const authorizer::v1::AuthorizeRequest& request, absl::Duration timeout) = 0;
  virtual absl::StatusOr<authorizer::v1::DiscoverResponse> Discover(
      const authorizer::v1::DiscoverRequest& request, absl::Duration timeout) = 0;
  virtual absl::StatusOr<authorizer::v1::AdmitTurnResponse> AdmitTurn(
      const authorizer::v1::AdmitTurnRequest& request, absl::Duration timeout) = 0;
  virtual absl::StatusOr<authorizer::v1::ReachResponse> Reach(
      const authorizer::v1::ReachRequest& request, absl::Duration timeout) = 0;
  virtual absl::StatusOr<authorizer::v1::RecordEscalationResponse> RecordEscalation(
      const authorizer::v1::RecordEscalationRequest& request, absl::Duration timeout) = 0;
};

}  // namespace sharedos::authorizer::client

#endif  // SHAREDOS_AUTHORIZER_SVC_CLIENT_AUTHORIZER_CLIENT_H_
