// EnvelopeClient over the generated sharedos.envelope.v1.Envelope stub: every call carries
// "authorization: Bearer <host token>" and a deadline; gRPC errors become the same absl codes,
// messages kept. Thread-safe (the stub is).

#ifndef SHAREDOS_ENVELOPE_SVC_CLIENT_GRPC_ENVELOPE_CLIENT_H_
#define SHAREDOS_ENVELOPE_SVC_CLIENT_GRPC_ENVELOPE_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "envelope_svc/client/envelope_client.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"

namespace sharedos::envelope::client {

class GrpcEnvelopeClient final : public EnvelopeClient {
 public:
  // `host_token` is the caller's host credential (never logged); each call is bounded by
  // `timeout` (FinishTurn waits up to the envelope's finish_wait for calls still running).
  GrpcEnvelopeClient(std::unique_ptr<v1::Envelope::StubInterface> stub, std::string host_token,
                     absl::Duration timeout = absl::Seconds(30));

  absl::StatusOr<v1::OpenTurnResponse> OpenTurn(const v1::OpenTurnRequest& request) override;
  absl::StatusOr<v1::InvokeToolResponse> InvokeTool(const v1::InvokeToolRequest& request) override;
  absl::StatusOr<v1::FinishTurnResponse> FinishTurn(const v1::FinishTurnRequest& request) override;
  absl::StatusOr<v1::CancelTurnResponse> CancelTurn(const v1::CancelTurnRequest& request) override;
  absl::StatusOr<v1::GetTurnResponse> GetTurn(const v1::GetTurnRequest& request) override;

 private:
  const std::unique_ptr<v1::Envelope::StubInterface> stub_;
  const std::string authorization_;
  const absl::Duration timeout_;
};

}  // namespace sharedos::envelope::client

#endif  // SHAREDOS_ENVELOPE_SVC_CLIENT_GRPC_ENVELOPE_CLIENT_H_
