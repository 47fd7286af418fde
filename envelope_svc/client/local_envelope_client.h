// EnvelopeClient over a TurnEngine in the same process: the logic the Envelope gRPC service
// adapts, for one host scope (what that host's credential carries), with no channel,
// serialization or credential check in between — the caller and the envelope are one trust
// domain. Thread-safe (TurnEngine is).

#ifndef SHAREDOS_ENVELOPE_SVC_CLIENT_LOCAL_ENVELOPE_CLIENT_H_
#define SHAREDOS_ENVELOPE_SVC_CLIENT_LOCAL_ENVELOPE_CLIENT_H_

#include "absl/status/statusor.h"
#include "common/server/auth.h"
#include "envelope_svc/client/envelope_client.h"
#include "envelope_svc/core/turn_engine.h"

namespace sharedos::envelope::client {

class LocalEnvelopeClient final : public EnvelopeClient {
 public:
  // Borrows `engine`, which must outlive the client; every call runs within `scope`.
  LocalEnvelopeClient(core::TurnEngine& engine, common::server::HostScope scope);

  absl::StatusOr<v1::OpenTurnResponse> OpenTurn(const v1::OpenTurnRequest& request) override;
  absl::StatusOr<v1::InvokeToolResponse> InvokeTool(const v1::InvokeToolRequest& request) override;
  absl::StatusOr<v1::FinishTurnResponse> FinishTurn(const v1::FinishTurnRequest& request) override;
  absl::StatusOr<v1::CancelTurnResponse> CancelTurn(const v1::CancelTurnRequest& request) override;
  absl::StatusOr<v1::GetTurnResponse> GetTurn(const v1::GetTurnRequest& request) override;

 private:
  core::TurnEngine& engine_;
  const common::server::HostScope scope_;
};

}  // namespace sharedos::envelope::client

#endif  // SHAREDOS_ENVELOPE_SVC_CLIENT_LOCAL_ENVELOPE_CLIENT_H_
