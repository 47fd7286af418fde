#include "envelope_svc/client/fake_envelope_client.h"

#include <utility>

namespace sharedos::envelope::client {
namespace {

namespace pb = ::sharedos::protocol::v1;

pb::ExecutionStatus Settled(const v1::FinishTurnRequest& request) {
  switch (request.outcome_case()) {
    case v1::FinishTurnRequest::kComplete:
      return pb::EXECUTION_STATUS_SUCCEEDED;
    case v1::FinishTurnRequest::kFail:
      return pb::EXECUTION_STATUS_FAILED;
    case v1::FinishTurnRequest::kEscalate:
    case v1::FinishTurnRequest::kHarnessExited:
      return pb::EXECUTION_STATUS_ESCALATED;
    case v1::FinishTurnRequest::OUTCOME_NOT_SET:
      break;
  }
  return pb::EXECUTION_STATUS_UNSPECIFIED;
}

}  // namespace

void FakeEnvelopeClient::SetOpenTurn(absl::StatusOr<v1::OpenTurnResponse> answer) {
  absl::MutexLock lock(&mu_);
  open_ = std::move(answer);
}

void FakeEnvelopeClient::SetInvokeTool(const std::string& tool,
                                       absl::StatusOr<v1::InvokeToolResponse> answer) {
  absl::MutexLock lock(&mu_);
  tools_.insert_or_assign(tool, std::move(answer));
}

void FakeEnvelopeClient::SetFinishTurn(absl::StatusOr<v1::FinishTurnResponse> answer) {
  absl::MutexLock lock(&mu_);
  finish_ = std::move(answer);
}

std::vector<v1::OpenTurnRequest> FakeEnvelopeClient::open_requests() const {
  absl::MutexLock lock(&mu_);
  return opened_;
}

std::vector<v1::InvokeToolRequest> FakeEnvelopeClient::invoke_requests() const {
  absl::MutexLock lock(&mu_);
  return invoked_;
}

std::vector<v1::FinishTurnRequest> FakeEnvelopeClient::finish_requests() const {
  absl::MutexLock lock(&mu_);
  return finished_;
}

std::vector<v1::CancelTurnRequest> FakeEnvelopeClient::cancel_requests() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

absl::StatusOr<v1::OpenTurnResponse> FakeEnvelopeClient::OpenTurn(
    const v1::OpenTurnRequest& request) {
  absl::MutexLock lock(&mu_);
  opened_.push_back(request);
  if (open_.has_value()) return *open_;
  v1::OpenTurnResponse response;
  response.set_turn_id("turn-1");
  return response;
}

absl::StatusOr<v1::InvokeToolResponse> FakeEnvelopeClient::InvokeTool(
    const v1::InvokeToolRequest& request) {
  absl::MutexLock lock(&mu_);
  invoked_.push_back(request);
  if (auto it = tools_.find(request.call().tool()); it != tools_.end()) return it->second;
  v1::InvokeToolResponse response;
  response.mutable_result()->set_call_id(request.call().id());
  response.mutable_result()->set_status(pb::TOOL_RESULT_STATUS_SUCCEEDED);
  return response;
}

absl::StatusOr<v1::FinishTurnResponse> FakeEnvelopeClient::FinishTurn(
    const v1::FinishTurnRequest& request) {
  absl::MutexLock lock(&mu_);
  finished_.push_back(request);
  if (finish_.has_value()) {
    if (finish_->ok()) settled_ = (*finish_)->result();
    return *finish_;
  }
  v1::FinishTurnResponse response;
  response.mutable_result()->set_status(Settled(request));
  settled_ = response.result();
  return response;
}

absl::StatusOr<v1::CancelTurnResponse> FakeEnvelopeClient::CancelTurn(
    const v1::CancelTurnRequest& request) {
  absl::MutexLock lock(&mu_);
  cancelled_.push_back(request);
  if (!settled_.has_value()) {
    settled_.emplace();
    settled_->set_status(pb::EXECUTION_STATUS_CANCELLED);
  }
  v1::CancelTurnResponse response;
  *response.mutable_result() = *settled_;
  return response;
}

absl::StatusOr<v1::GetTurnResponse> FakeEnvelopeClient::GetTurn(const v1::GetTurnRequest&) {
  absl::MutexLock lock(&mu_);
  v1::GetTurnResponse response;
  if (settled_.has_value()) {
    *response.mutable_result() = *settled_;
    response.set_state(v1::TURN_STATE_ENDED);
  } else {
    response.set_state(v1::TURN_STATE_RUNNING);
  }
  return response;
}

}  // namespace sharedos::envelope::client
