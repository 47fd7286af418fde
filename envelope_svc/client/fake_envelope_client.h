// A scriptable EnvelopeClient for tests of the envelope's callers (testonly). Thread-safe.

#ifndef SHAREDOS_ENVELOPE_SVC_CLIENT_FAKE_ENVELOPE_CLIENT_H_
#define SHAREDOS_ENVELOPE_SVC_CLIENT_FAKE_ENVELOPE_CLIENT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "envelope_svc/client/envelope_client.h"

namespace sharedos::envelope::client {

// Answers what the test scripted, and records every request. Unscripted: OpenTurn opens
// "turn-1"; InvokeTool answers its call SUCCEEDED; FinishTurn settles the outcome (complete:
// SUCCEEDED, fail: FAILED, escalate and harness_exited: ESCALATED); CancelTurn ends the turn
// CANCELLED (an ended one answers its result); GetTurn the result settled, or TURN_STATE_RUNNING
// before one.
class FakeEnvelopeClient : public EnvelopeClient {
 public:
  void SetOpenTurn(absl::StatusOr<v1::OpenTurnResponse> answer) ABSL_LOCKS_EXCLUDED(mu_);
  // What calls of `tool` answer.
  void SetInvokeTool(const std::string& tool, absl::StatusOr<v1::InvokeToolResponse> answer)
      ABSL_LOCKS_EXCLUDED(mu_);
  void SetFinishTurn(absl::StatusOr<v1::FinishTurnResponse> answer) ABSL_LOCKS_EXCLUDED(mu_);

  std::vector<v1::OpenTurnRequest> open_requests() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<v1::InvokeToolRequest> invoke_requests() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<v1::FinishTurnRequest> finish_requests() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<v1::CancelTurnRequest> cancel_requests() const ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<v1::OpenTurnResponse> OpenTurn(const v1::OpenTurnRequest& request) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::InvokeToolResponse> InvokeTool(const v1::InvokeToolRequest& request) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::FinishTurnResponse> FinishTurn(const v1::FinishTurnRequest& request) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::CancelTurnResponse> CancelTurn(const v1::CancelTurnRequest& request) override
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::GetTurnResponse> GetTurn(const v1::GetTurnRequest& request) override
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::optional<absl::StatusOr<v1::OpenTurnResponse>> open_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, absl::StatusOr<v1::InvokeToolResponse>> tools_
      ABSL_GUARDED_BY(mu_);
  std::optional<absl::StatusOr<v1::FinishTurnResponse>> finish_ ABSL_GUARDED_BY(mu_);
  std::optional<protocol::v1::ExecutionResult> settled_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::OpenTurnRequest> opened_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::InvokeToolRequest> invoked_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::FinishTurnRequest> finished_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::CancelTurnRequest> cancelled_ ABSL_GUARDED_BY(mu_);
};

}  // namespace sharedos::envelope::client

#endif  // SHAREDOS_ENVELOPE_SVC_CLIENT_FAKE_ENVELOPE_CLIENT_H_
