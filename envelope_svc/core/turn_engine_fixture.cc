#include "envelope_svc/core/turn_engine_fixture.h"

#include <google/protobuf/util/json_util.h>

#include <utility>

#include "common/time/proto_time.h"
#include "gmock/gmock.h"

namespace sharedos::envelope::core::testing {

namespace pb = ::sharedos::protocol::v1;
using ::testing::SizeIs;

void TurnEngineTest::SetUp() {
  registry_ = TestRegistry();
  files_ = std::make_unique<FakeToolProvider>("files");
  host_ = std::make_unique<FakeToolProvider>(
      "host-1", std::vector<pb::ToolDefinition>{registry_->Find("host.echo")->definition()});
  scope_.namespaces = {"world-1"};
  scope_.owners = {"human:user-alice"};
  MakeEngine(TurnEngine::Options());
}

void TurnEngineTest::MakeEngine(TurnEngine::Options options) {
  tools::AttachedProviders providers;
  providers.files = files_.get();
  providers.hosts["host-1"] = host_.get();
  engine_ = std::make_unique<TurnEngine>(authorizer_, *registry_, providers, audit_, clock_,
                                         std::move(options));
}

pb::ExecutionRequest TurnEngineTest::Request() {
  return TestExecutionRequest({"files.read", "files.create", "files.peek", "files.fixed",
                               "host.echo", "notes.get", "sharedos.escalate"});
}

absl::StatusOr<v1::OpenTurnResponse> TurnEngineTest::TryOpen(const pb::ExecutionRequest& request) {
  v1::OpenTurnRequest open;
  *open.mutable_execution_request() = request;
  open.set_runtime(v1::RUNTIME_DRIVER);
  return engine_->OpenTurn(open, scope_);
}

v1::OpenTurnResponse TurnEngineTest::Open(const pb::ExecutionRequest& request) {
  absl::StatusOr<v1::OpenTurnResponse> response = TryOpen(request);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : v1::OpenTurnResponse();
}

std::string TurnEngineTest::OpenRunning(const pb::ExecutionRequest& request) {
  v1::OpenTurnResponse response = Open(request);
  EXPECT_FALSE(response.has_result()) << response.result().DebugString();
  return response.turn_id();
}

absl::StatusOr<v1::InvokeToolResponse> TurnEngineTest::TryCall(const std::string& turn_id,
                                                               const std::string& tool,
                                                               const std::string& arguments,
                                                               std::optional<int64_t> step,
                                                               const std::string& call_id) {
  v1::InvokeToolRequest request;
  request.set_turn_id(turn_id);
  pb::ToolCall* call = request.mutable_call();
  call->set_id(call_id);
  call->set_tool(tool);
  call->set_trace_id("trace-1");
  EXPECT_TRUE(
      google::protobuf::util::JsonStringToMessage(arguments, call->mutable_arguments()).ok());
  *call->mutable_requested_at() = *common::ToProtoTimestamp(clock_.Now());
  if (step.has_value()) request.set_step(*step);
  return engine_->InvokeTool(request, scope_);
}

pb::ToolResult TurnEngineTest::Call(const std::string& turn_id, const std::string& tool,
                                    const std::string& arguments, std::optional<int64_t> step) {
  absl::StatusOr<v1::InvokeToolResponse> response = TryCall(turn_id, tool, arguments, step);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->result() : pb::ToolResult();
}

absl::StatusOr<v1::FinishTurnResponse> TurnEngineTest::TryFinish(const std::string& turn_id,
                                                                 const std::string& outcome_text) {
  v1::FinishTurnRequest request = Parse<v1::FinishTurnRequest>(outcome_text);
  request.set_turn_id(turn_id);
  return engine_->FinishTurn(request, scope_);
}

pb::ExecutionResult TurnEngineTest::Finish(const std::string& turn_id,
                                           const std::string& outcome_text) {
  absl::StatusOr<v1::FinishTurnResponse> response = TryFinish(turn_id, outcome_text);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->result() : pb::ExecutionResult();
}

pb::ExecutionResult TurnEngineTest::Cancel(const std::string& turn_id) {
  v1::CancelTurnRequest request;
  request.set_turn_id(turn_id);
  absl::StatusOr<v1::CancelTurnResponse> response = engine_->CancelTurn(request, scope_);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? response->result() : pb::ExecutionResult();
}

v1::GetTurnResponse TurnEngineTest::Get(const std::string& turn_id) {
  v1::GetTurnRequest request;
  request.set_turn_id(turn_id);
  absl::StatusOr<v1::GetTurnResponse> response = engine_->GetTurn(request, scope_);
  EXPECT_TRUE(response.ok()) << response.status();
  return response.ok() ? *response : v1::GetTurnResponse();
}

std::vector<std::string> TurnEngineTest::EventTypes(const pb::ExecutionResult& result) {
  std::vector<std::string> types;
  for (const pb::ExecutionEvent& event : result.events()) types.push_back(event.type());
  return types;
}

std::vector<pb::AuditEvent> TurnEngineTest::Audited(pb::AuditEventType type) {
  std::vector<pb::AuditEvent> events;
  for (const pb::AuditEvent& event : audit_.events()) {
    if (event.type() == type) events.push_back(event);
  }
  return events;
}

pb::AuditEvent TurnEngineTest::TurnEnded() {
  std::vector<pb::AuditEvent> ended;
  for (const auto& recorded : audit_.recorded()) {
    if (recorded.event.type() != pb::AUDIT_EVENT_TYPE_TURN_ENDED) continue;
    EXPECT_FALSE(recorded.pre_effect);
    ended.push_back(recorded.event);
  }
  EXPECT_THAT(ended, SizeIs(1));
  if (ended.empty()) return pb::AuditEvent();
  EXPECT_EQ(ended[0].operation_id(), "exec-1");
  EXPECT_FALSE(ended[0].has_source());
  return ended[0];
}

}  // namespace sharedos::envelope::core::testing
