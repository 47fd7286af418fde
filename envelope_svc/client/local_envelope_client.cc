#include "envelope_svc/client/local_envelope_client.h"

#include <utility>

namespace sharedos::envelope::client {

LocalEnvelopeClient::LocalEnvelopeClient(core::TurnEngine& engine, common::server::HostScope scope)
    : engine_(engine), scope_(std::move(scope)) {}

absl::StatusOr<v1::OpenTurnResponse> LocalEnvelopeClient::OpenTurn(
    const v1::OpenTurnRequest& request) {
  return engine_.OpenTurn(request, scope_);
}

absl::StatusOr<v1::InvokeToolResponse> LocalEnvelopeClient::InvokeTool(
    const v1::InvokeToolRequest& request) {
  return engine_.InvokeTool(request, scope_);
}

absl::StatusOr<v1::FinishTurnResponse> LocalEnvelopeClient::FinishTurn(
    const v1::FinishTurnRequest& request) {
  return engine_.FinishTurn(request, scope_);
}

absl::StatusOr<v1::CancelTurnResponse> LocalEnvelopeClient::CancelTurn(
    const v1::CancelTurnRequest& request) {
  return engine_.CancelTurn(request, scope_);
}

absl::StatusOr<v1::GetTurnResponse> LocalEnvelopeClient::GetTurn(
    const v1::GetTurnRequest& request) {
  return engine_.GetTurn(request, scope_);
}

}  // namespace sharedos::envelope::client
