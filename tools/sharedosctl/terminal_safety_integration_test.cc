// Operator output is safe (issue 33, T6; observation 7): text an agent or a host chose reaches
// the operator's terminal through the real sharedosctl only as inert, escaped text. Against a
// real `sharedosd --demo`, a host (host.token, over gRPC):
//   - ends a turn escalated with a reason holding an ANSI title sequence and a newline followed
//     by what looks like an approved row: `escalations list` prints one row for it, no raw
//     control character, and no fake row;
//   - calls a tool whose name holds ANSI escapes and opens a turn for an agent id holding a C1
//     control sequence and a bidi override: `audit query` prints neither raw, and `--json` stays
//     valid JSON with the same values.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedosd/demo_turn.h"
#include "tests/testing/process.h"
#include "tools/sharedosctl/sharedosd_fixture.h"

namespace sharedos {
namespace {

namespace ev1 = ::sharedos::envelope::v1;
namespace pb = ::sharedos::protocol::v1;
using sharedosctl::testing::Result;
using ::testing::HasSubstr;
using ::testing::Not;

// A window title, a line erase and a carriage return, then a newline and a forged row.
constexpr char kHostileReason[] =
    "needs it\x1b]0;pwned\x07\x1b[2K\r\nesc-forged  approved  world-demo  exec-x  ok";
constexpr char kHostileTool[] = "files.read\x1b[31m\x1b]0;tool\x07";
// C0 controls in an agent id are refused at admission (an address becomes a path, which may
// not hold them); a C1 CSI (U+009B, which 8-bit terminals obey) and a right-to-left override
// (U+202E) are not.
constexpr char kHostileAgent[] =
    "agent-\xc2\x9b"
    "8mhidden\xe2\x80\xae";

// The first byte a terminal acts on (C0 but '\n', DEL, a UTF-8 C1), or npos.
size_t FirstRawControl(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if ((byte < 0x20 && byte != '\n') || byte == 0x7F) return i;
    if (byte == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F &&
        static_cast<unsigned char>(text[i + 1]) >= 0x80) {
      return i;
    }
  }
  return std::string::npos;
}

class TerminalSafetyIntegrationTest : public sharedosctl::testing::SharedosdFixture {
 protected:
  TerminalSafetyIntegrationTest() : SharedosdFixture("terminal-safety-data", {"--demo"}) {}

  void SetUp() override {
    SharedosdFixture::SetUp();
    if (HasFatalFailure()) return;
    envelope_ =
        ev1::Envelope::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
    host_token_ = ::sharedos::testing::ReadFirstLine(data_ + "/host.token");
    ASSERT_FALSE(host_token_.empty());
  }

  std::unique_ptr<grpc::ClientContext> AsHost() {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + host_token_);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return context;
  }

  // Opens the demo turn (agent `agent_id`); the turn id ("" when it ended at admission, which
  // `admitted` says is expected or not).
  std::string Open(const std::string& execution_id, const std::string& agent_id,
                   bool admitted = true) {
    google::protobuf::Timestamp now;
    now.set_seconds(std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count());
    ev1::OpenTurnRequest request =
        sharedosd::DemoTurnRequest(ev1::RUNTIME_DRIVER, execution_id, "trace-" + execution_id, now);
    request.mutable_execution_request()->mutable_agent()->set_agent_id(agent_id);
    request.mutable_execution_request()->mutable_context()->mutable_actor()->set_agent_id(agent_id);
    request.mutable_execution_request()->mutable_message()->mutable_receiver()->set_agent_id(
        agent_id);
    ev1::OpenTurnResponse response;
    grpc::Status status = envelope_->OpenTurn(AsHost().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.has_result(), !admitted) << response.result().DebugString();
    return response.turn_id();
  }

  ev1::InvokeToolResponse Invoke(const std::string& turn_id, const std::string& execution_id,
                                 const std::string& tool, const std::string& arguments) {
    ev1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    request.mutable_call()->set_id(absl::StrCat("call-", tool.size()));
    request.mutable_call()->set_tool(tool);
    request.mutable_call()->set_trace_id("trace-" + execution_id);
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    arguments, request.mutable_call()->mutable_arguments())
                    .ok());
    request.mutable_call()->mutable_requested_at()->set_seconds(
        std::chrono::duration_cast<std::chrono::seconds>(
            std::chrono::system_clock::now().time_since_epoch())
            .count());
    ev1::InvokeToolResponse response;
    grpc::Status status = envelope_->InvokeTool(AsHost().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  std::unique_ptr<ev1::Envelope::Stub> envelope_;
  std::string host_token_;
};

TEST_F(TerminalSafetyIntegrationTest, AnEscalationReasonPrintsNoFakeRowAndNoRawEscape) {
  const std::string turn = Open("exec-hostile-reason", "agent-assistant");
  ASSERT_FALSE(turn.empty());
  ev1::InvokeToolResponse denied = Invoke(turn, "exec-hostile-reason", "files.create",
                                          R"({"path": "Workspace/summary.txt", "content": "x"})");
  ASSERT_EQ(denied.result().error().code(), "no_matching_grant") << denied.DebugString();
  ASSERT_TRUE(denied.has_required_authority());
  ev1::FinishTurnRequest finish;
  finish.set_turn_id(turn);
  finish.mutable_escalate()->set_reason(kHostileReason);
  *finish.mutable_escalate()->mutable_requested_authority() = denied.required_authority();
  ev1::FinishTurnResponse finished;
  grpc::Status status = envelope_->FinishTurn(AsHost().get(), finish, &finished);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(finished.result().status(), pb::EXECUTION_STATUS_ESCALATED);

  Result listed = Ctl({"escalations", "list", "--namespace=world-demo"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_EQ(FirstRawControl(listed.output), std::string::npos) << listed.output;
  const std::vector<std::string> lines = absl::StrSplit(listed.output, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << listed.output;  // the header and the one escalation
  EXPECT_THAT(lines[1], HasSubstr("pending"));
  EXPECT_THAT(lines[1], HasSubstr("\\x1b]0;pwned\\x07"));
  EXPECT_THAT(lines[1], HasSubstr("\\r\\nesc-forged  approved"));
  for (const std::string& line : lines) EXPECT_THAT(line, Not(::testing::StartsWith("esc-forged")));

  Result shown = Ctl({"escalations", "show", "--id=" + finished.escalation_id()});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_EQ(FirstRawControl(shown.output), std::string::npos) << shown.output;

  // --json: JSON's own escaping; the same value comes back.
  Result json = Ctl({"--json", "escalations", "list", "--namespace=world-demo"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(FirstRawControl(json.output), std::string::npos) << json.output;
  const nlohmann::json parsed = nlohmann::json::parse(json.output);
  EXPECT_EQ(parsed["escalations"][0]["escalation"]["reason"], kHostileReason);
}

TEST_F(TerminalSafetyIntegrationTest, AuditQueryPrintsNoRawEscapeFromAToolNameOrAnAgentId) {
  const std::string turn = Open("exec-hostile-tool", "agent-assistant");
  ASSERT_FALSE(turn.empty());
  ev1::InvokeToolResponse refused = Invoke(turn, "exec-hostile-tool", kHostileTool, "{}");
  EXPECT_EQ(refused.result().error().code(), "tool_unavailable") << refused.DebugString();
  // A turn for an agent id the host chose: no grant names it, so it is refused at admission —
  // and recorded, actor and all.
  Open("exec-hostile-agent", kHostileAgent, /*admitted=*/false);

  Result table = Ctl({"audit", "query", "--namespace=world-demo"});
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_EQ(FirstRawControl(table.output), std::string::npos) << table.output;
  EXPECT_THAT(table.output, HasSubstr("files.read\\x1b[31m\\x1b]0;tool\\x07"));
  EXPECT_THAT(table.output, HasSubstr("agent:agent-\\u009b8mhidden\\u202e"));
  EXPECT_EQ(table.output.find("\xe2\x80\xae"), std::string::npos) << table.output;

  Result json = Ctl({"--json", "audit", "query", "--namespace=world-demo"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_EQ(FirstRawControl(json.output), std::string::npos) << json.output;
  EXPECT_EQ(json.output.find("\xe2\x80\xae"), std::string::npos) << json.output;
  const nlohmann::json parsed = nlohmann::json::parse(json.output);
  bool tool_seen = false;
  bool agent_seen = false;
  for (const auto& record : parsed["records"]) {
    if (!record.contains("event")) continue;
    tool_seen = tool_seen || record["event"].value("tool", "") == kHostileTool;
    agent_seen = agent_seen || (record["event"].contains("actor") &&
                                record["event"]["actor"].value("agentId", "") == kHostileAgent);
  }
  EXPECT_TRUE(tool_seen) << json.output;
  EXPECT_TRUE(agent_seen) << json.output;
}

}  // namespace
}  // namespace sharedos
