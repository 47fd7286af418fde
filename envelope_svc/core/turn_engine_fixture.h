// The turn tests' fixture (testonly): a TurnEngine over the fake authorizer, the fake audit
// writer, the test registry (test_support.h) with a files and a host provider, and a simulated
// clock; helpers to open, call, finish, cancel and read turns through it, and to read what was
// audited. The per-part tests (admission, invocation, settlement) and the facade's test share it.
// Not thread-safe beyond what a test's own threads need (the engine and fakes are thread-safe).

#ifndef SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_FIXTURE_H_
#define SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_FIXTURE_H_

#include <google/protobuf/text_format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/tools/tool_registry.h"
#include "gtest/gtest.h"
#include "sharedos/envelope/v1/envelope.pb.h"
#include "sharedos/protocol/v1/audit.pb.h"
#include "sharedos/protocol/v1/execution.pb.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::core::testing {

// A message from text format; a test failure when the text does not parse.
template <typename T>
T Parse(const std::string& text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
    ADD_FAILURE() << "bad text proto: " << text;
  }
  return message;
}

class TurnEngineTest : public ::testing::Test {
 protected:
  void SetUp() override;

  void MakeEngine(TurnEngine::Options options);

  // TestExecutionRequest with files.read, files.create, files.peek, files.fixed, host.echo,
  // notes.get and sharedos.escalate.
  static protocol::v1::ExecutionRequest Request();

  absl::StatusOr<v1::OpenTurnResponse> TryOpen(const protocol::v1::ExecutionRequest& request);
  v1::OpenTurnResponse Open(const protocol::v1::ExecutionRequest& request = Request());
  // A turn that is running; its id.
  std::string OpenRunning(const protocol::v1::ExecutionRequest& request = Request());

  absl::StatusOr<v1::InvokeToolResponse> TryCall(const std::string& turn_id,
                                                 const std::string& tool,
                                                 const std::string& arguments = "{}",
                                                 std::optional<int64_t> step = std::nullopt,
                                                 const std::string& call_id = "call-1");
  protocol::v1::ToolResult Call(const std::string& turn_id, const std::string& tool,
                                const std::string& arguments = "{}",
                                std::optional<int64_t> step = std::nullopt);

  absl::StatusOr<v1::FinishTurnResponse> TryFinish(const std::string& turn_id,
                                                   const std::string& outcome_text);
  protocol::v1::ExecutionResult Finish(const std::string& turn_id, const std::string& outcome_text);
  protocol::v1::ExecutionResult Cancel(const std::string& turn_id);
  v1::GetTurnResponse Get(const std::string& turn_id);

  static std::vector<std::string> EventTypes(const protocol::v1::ExecutionResult& result);
  std::vector<protocol::v1::AuditEvent> Audited(protocol::v1::AuditEventType type);
  // The one turn.ended recorded, checked post-effect.
  protocol::v1::AuditEvent TurnEnded();

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  authorizer::client::FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<FakeToolProvider> files_;
  std::unique_ptr<FakeToolProvider> host_;
  common::server::HostScope scope_;
  std::unique_ptr<TurnEngine> engine_;
};

}  // namespace sharedos::envelope::core::testing

#endif  // SHAREDOS_ENVELOPE_SVC_CORE_TURN_ENGINE_FIXTURE_H_
