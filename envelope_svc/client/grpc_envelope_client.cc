#include "envelope_svc/client/grpc_envelope_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/client/bearer_call.h"

namespace sharedos::envelope::client {

using ::sharedos::common::BearerCall;

GrpcEnvelopeClient::GrpcEnvelopeClient(std::unique_ptr<v1::Envelope::StubInterface> stub,
                                       std::string host_token, absl::Duration timeout)
    : stub_(std::move(stub)),
      authorization_(absl::StrCat("Bearer ", host_token)),
      timeout_(timeout) {}

absl::StatusOr<v1::OpenTurnResponse> GrpcEnvelopeClient::OpenTurn(
    const v1::OpenTurnRequest& request) {
  return BearerCall<v1::OpenTurnResponse>(
      authorization_, timeout_, [&](auto* c, auto* r) { return stub_->OpenTurn(c, request, r); });
}

absl::StatusOr<v1::InvokeToolResponse> GrpcEnvelopeClient::InvokeTool(
    const v1::InvokeToolRequest& request) {
  return BearerCall<v1::InvokeToolResponse>(
      authorization_, timeout_, [&](auto* c, auto* r) { return stub_->InvokeTool(c, request, r); });
}

absl::StatusOr<v1::FinishTurnResponse> GrpcEnvelopeClient::FinishTurn(
    const v1::FinishTurnRequest& request) {
  return BearerCall<v1::FinishTurnResponse>(
      authorization_, timeout_, [&](auto* c, auto* r) { return stub_->FinishTurn(c, request, r); });
}

absl::StatusOr<v1::CancelTurnResponse> GrpcEnvelopeClient::CancelTurn(
    const v1::CancelTurnRequest& request) {
  return BearerCall<v1::CancelTurnResponse>(
      authorization_, timeout_, [&](auto* c, auto* r) { return stub_->CancelTurn(c, request, r); });
}

absl::StatusOr<v1::GetTurnResponse> GrpcEnvelopeClient::GetTurn(const v1::GetTurnRequest& request) {
  return BearerCall<v1::GetTurnResponse>(
      authorization_, timeout_, [&](auto* c, auto* r) { return stub_->GetTurn(c, request, r); });
}

}  // namespace sharedos::envelope::client
