// LocalEnvelopeClient over a real TurnEngine (fake authorizer, provider and audit): a driver turn
// runs open → invoke → finish through it, within its host scope only.
#include "envelope_svc/client/local_envelope_client.h"

#include <memory>
#include <string>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::client {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::StatusIs;

class LocalEnvelopeClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = core::testing::TestRegistry();
    files_ = std::make_unique<core::testing::FakeToolProvider>("files");
    tools::AttachedProviders providers;
    providers.files = files_.get();
    engine_ = std::make_unique<core::TurnEngine>(authorizer_, *registry_, providers, audit_, clock_,
                                                 core::TurnEngine::Options());
  }

  static common::server::HostScope Scope(const std::string& world) {
    common::server::HostScope scope;
    scope.namespaces = {world};
    scope.owners = {"*"};
    return scope;
  }

  static v1::OpenTurnRequest Open() {
    v1::OpenTurnRequest request;
    *request.mutable_execution_request() =
        core::testing::TestExecutionRequest({"files.read", "sharedos.escalate"});
    request.set_runtime(v1::RUNTIME_DRIVER);
    return request;
  }

  static v1::InvokeToolRequest Read(const std::string& turn_id) {
    v1::InvokeToolRequest request;
    request.set_turn_id(turn_id);
    request.mutable_call()->set_id("call-1");
    request.mutable_call()->set_tool("files.read");
    request.mutable_call()->set_trace_id("trace-1");
    (*request.mutable_call()->mutable_arguments()->mutable_fields())["path"].set_string_value(
        "notes.txt");
    request.mutable_call()->mutable_requested_at()->set_seconds(1786438801);
    return request;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  authorizer::client::FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<core::testing::FakeToolProvider> files_;
  std::unique_ptr<core::TurnEngine> engine_;
};

TEST_F(LocalEnvelopeClientTest, RunsADriverTurnThroughTheEngine) {
  LocalEnvelopeClient client(*engine_, Scope("world-1"));
  auto opened = client.OpenTurn(Open());
  ASSERT_TRUE(opened.ok()) << opened.status();
  ASSERT_FALSE(opened->has_result()) << opened->result().DebugString();
  EXPECT_EQ(opened->catalog().tools_size(), 2);

  auto read = client.InvokeTool(Read(opened->turn_id()));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->result().status(), pb::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(files_->invocations().size(), 1u);

  v1::FinishTurnRequest finish;
  finish.set_turn_id(opened->turn_id());
  finish.mutable_complete()->mutable_output()->set_string_value("done");
  auto finished = client.FinishTurn(finish);
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->result().status(), pb::EXECUTION_STATUS_SUCCEEDED);

  v1::GetTurnRequest get;
  get.set_turn_id(opened->turn_id());
  auto got = client.GetTurn(get);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->state(), v1::TURN_STATE_ENDED);
}

TEST_F(LocalEnvelopeClientTest, CancelsARunningTurn) {
  LocalEnvelopeClient client(*engine_, Scope("world-1"));
  auto opened = client.OpenTurn(Open());
  ASSERT_TRUE(opened.ok()) << opened.status();
  v1::CancelTurnRequest cancel;
  cancel.set_turn_id(opened->turn_id());
  auto cancelled = client.CancelTurn(cancel);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_EQ(cancelled->result().status(), pb::EXECUTION_STATUS_CANCELLED);
}

TEST_F(LocalEnvelopeClientTest, EveryCallRunsWithinTheClientsScope) {
  LocalEnvelopeClient world_1(*engine_, Scope("world-1"));
  LocalEnvelopeClient world_2(*engine_, Scope("world-2"));
  EXPECT_THAT(world_2.OpenTurn(Open()), StatusIs(absl::StatusCode::kPermissionDenied));
  auto opened = world_1.OpenTurn(Open());
  ASSERT_TRUE(opened.ok()) << opened.status();
  // Another scope's turn is as unknown as one that never was (ADR 0014, T2).
  EXPECT_THAT(world_2.InvokeTool(Read(opened->turn_id())), StatusIs(absl::StatusCode::kNotFound));
  v1::GetTurnRequest get;
  get.set_turn_id(opened->turn_id());
  EXPECT_THAT(world_2.GetTurn(get), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_TRUE(files_->invocations().empty());
}

}  // namespace
}  // namespace sharedos::envelope::client
