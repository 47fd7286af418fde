// The stub envelope_svc offers those who run turns (a host's agent loop, sharedosctl's `turn`):
// the Envelope service's unary RPCs as plain calls answering absl::StatusOr, with no grpcpp type.
// Implementations: over gRPC with a host credential (grpc_envelope_client.h), in-process over a
// TurnEngine for one host scope (local_envelope_client.h), and a scriptable fake for tests
// (fake_envelope_client.h). Implementations are thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CLIENT_ENVELOPE_CLIENT_H_
#define SHAREDOS_ENVELOPE_SVC_CLIENT_ENVELOPE_CLIENT_H_

#include "absl/status/statusor.h"
#include "sharedos/envelope/v1/envelope.pb.h"

namespace sharedos::envelope::client {

// Every method answers what envelope.proto says: a refusal (a turn denied at admission, a tool
// call refused) is a response, never an error. Errors are the RPC's own, as TurnEngine documents
// them per method (envelope_svc/core/turn_engine.h: INVALID_ARGUMENT naming the field, NOT_FOUND
// for an unknown turn, PERMISSION_DENIED outside the host's scope, FAILED_PRECONDITION for an
// ended turn, RESOURCE_EXHAUSTED), and over the wire UNAUTHENTICATED (no or an unknown credential),
// PERMISSION_DENIED (not a host credential), UNAVAILABLE and DEADLINE_EXCEEDED (envelope_svc did
// not answer in time).
class EnvelopeClient {
 public:
  virtual ~EnvelopeClient() = default;

  virtual absl::StatusOr<v1::OpenTurnResponse> OpenTurn(const v1::OpenTurnRequest& request) = 0;
  virtual absl::StatusOr<v1::InvokeToolResponse> InvokeTool(
      const v1::InvokeToolRequest& request) = 0;
  virtual absl::StatusOr<v1::FinishTurnResponse> FinishTurn(
      const v1::FinishTurnRequest& request) = 0;
  virtual absl::StatusOr<v1::CancelTurnResponse> CancelTurn(
      const v1::CancelTurnRequest& request) = 0;
  virtual absl::StatusOr<v1::GetTurnResponse> GetTurn(const v1::GetTurnRequest& request) = 0;
};

}  // namespace sharedos::envelope::client

#endif  // SHAREDOS_ENVELOPE_SVC_CLIENT_ENVELOPE_CLIENT_H_
