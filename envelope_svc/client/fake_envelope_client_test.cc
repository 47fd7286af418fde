#include "envelope_svc/client/fake_envelope_client.h"

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::client {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::StatusIs;
using ::testing::SizeIs;

v1::InvokeToolRequest Call(const std::string& tool) {
  v1::InvokeToolRequest request;
  request.set_turn_id("turn-1");
  request.mutable_call()->set_id("call-" + tool);
  request.mutable_call()->set_tool(tool);
  return request;
}

TEST(FakeEnvelopeClientTest, UnscriptedATurnOpensEveryCallSucceedsAndTheOutcomeIsSettled) {
  FakeEnvelopeClient fake;
  auto opened = fake.OpenTurn({});
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->turn_id(), "turn-1");
  auto invoked = fake.InvokeTool(Call("files.read"));
  ASSERT_TRUE(invoked.ok());
  EXPECT_EQ(invoked->result().call_id(), "call-files.read");
  EXPECT_EQ(invoked->result().status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);

  v1::GetTurnRequest get;
  EXPECT_EQ(fake.GetTurn(get)->state(), v1::TURN_STATE_RUNNING);
  v1::FinishTurnRequest finish;
  finish.mutable_escalate()->set_reason("needs to write");
  EXPECT_EQ(fake.FinishTurn(finish)->result().status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(fake.GetTurn(get)->state(), v1::TURN_STATE_ENDED);
  // An ended turn answers its result when cancelled.
  EXPECT_EQ(fake.CancelTurn({})->result().status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_THAT(fake.open_requests(), SizeIs(1));
  EXPECT_THAT(fake.invoke_requests(), SizeIs(1));
  EXPECT_THAT(fake.finish_requests(), SizeIs(1));
  EXPECT_THAT(fake.cancel_requests(), SizeIs(1));
}

TEST(FakeEnvelopeClientTest, AnswersWhatWasScripted) {
  FakeEnvelopeClient fake;
  fake.SetOpenTurn(absl::PermissionDeniedError("outside scope"));
  EXPECT_THAT(fake.OpenTurn({}), StatusIs(absl::StatusCode::kPermissionDenied, "outside scope"));
  v1::InvokeToolResponse denied;
  denied.mutable_result()->set_status(pb::TOOL_RESULT_STATUS_DENIED);
  fake.SetInvokeTool("files.create", denied);
  EXPECT_EQ(fake.InvokeTool(Call("files.create"))->result().status(),
            pb::TOOL_RESULT_STATUS_DENIED);
  EXPECT_EQ(fake.InvokeTool(Call("files.read"))->result().status(),
            pb::TOOL_RESULT_STATUS_SUCCEEDED);
  fake.SetFinishTurn(absl::UnavailableError("authorizer away"));
  EXPECT_THAT(fake.FinishTurn({}), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(fake.CancelTurn({})->result().status(), pb::EXECUTION_STATUS_CANCELLED);
}

}  // namespace
}  // namespace sharedos::envelope::client
