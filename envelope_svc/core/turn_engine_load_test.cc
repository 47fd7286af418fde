// 1,000 turns open at once: opened, called and finished from several threads against one
// engine. Checks the table and the records, not timing (timing is tools/bench).

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;

constexpr int kTurns = 1000;
constexpr int kThreads = 8;

TEST(TurnEngineLoadTest, ThousandConcurrentOpenTurns) {
  common::SimulatedClock clock(absl::FromUnixSeconds(1786438800));
  ::sharedos::authorizer::client::FakeAuthorizerClient authorizer;
  audit::client::FakeAuditWriter audit;
  std::unique_ptr<tools::ToolRegistry> registry = testing::TestRegistry();
  testing::FakeToolProvider files("files");
  testing::FakeToolProvider host(
      "host-1", std::vector<pb::ToolDefinition>{registry->Find("host.echo")->definition()});
  tools::AttachedProviders providers;
  providers.files = &files;
  providers.hosts["host-1"] = &host;
  TurnEngine engine(authorizer, *registry, providers, audit, clock, TurnEngine::Options());
  common::server::HostScope scope{{"world-1"}, {"*"}, {}};

  const pb::ExecutionRequest base = testing::TestExecutionRequest({"files.read"});

  std::vector<std::string> turn_ids(kTurns);
  std::atomic<int> failures{0};
  auto each = [&](auto body) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = t; i < kTurns; i += kThreads) body(i);
      });
    }
    for (std::thread& thread : threads) thread.join();
  };

  each([&](int i) {
    v1::OpenTurnRequest open;
    *open.mutable_execution_request() = base;
    open.mutable_execution_request()->set_execution_id(absl::StrCat("exec-", i));
    open.set_runtime(v1::RUNTIME_DRIVER);
    absl::StatusOr<v1::OpenTurnResponse> opened = engine.OpenTurn(open, scope);
    if (!opened.ok() || opened->has_result()) {
      ++failures;
      return;
    }
    turn_ids[i] = opened->turn_id();
  });
  ASSERT_EQ(failures.load(), 0);
  EXPECT_EQ(engine.running_turns(), static_cast<size_t>(kTurns));
  EXPECT_EQ(authorizer.open_leases(), static_cast<size_t>(kTurns));

  each([&](int i) {
    v1::InvokeToolRequest call;
    call.set_turn_id(turn_ids[i]);
    call.mutable_call()->set_id(absl::StrCat("call-", i));
    call.mutable_call()->set_tool("files.read");
    call.mutable_call()->set_trace_id("trace-1");
    (*call.mutable_call()->mutable_arguments()->mutable_fields())["path"].set_string_value("a");
    call.mutable_call()->mutable_requested_at()->set_seconds(1786438800);
    absl::StatusOr<v1::InvokeToolResponse> result = engine.InvokeTool(call, scope);
    if (!result.ok() || result->result().status() != pb::TOOL_RESULT_STATUS_SUCCEEDED) ++failures;
  });
  ASSERT_EQ(failures.load(), 0);

  each([&](int i) {
    v1::FinishTurnRequest finish;
    finish.set_turn_id(turn_ids[i]);
    finish.mutable_complete()->mutable_output()->set_number_value(i);
    absl::StatusOr<v1::FinishTurnResponse> result = engine.FinishTurn(finish, scope);
    if (!result.ok() || result->result().status() != pb::EXECUTION_STATUS_SUCCEEDED) ++failures;
  });
  ASSERT_EQ(failures.load(), 0);
  EXPECT_EQ(engine.running_turns(), 0u);
  EXPECT_EQ(engine.held_turns(), static_cast<size_t>(kTurns));
  EXPECT_EQ(authorizer.open_leases(), 0u);

  int ended = 0;
  int invoked = 0;
  for (const pb::AuditEvent& event : audit.events()) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) ++ended;
    if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) ++invoked;
  }
  EXPECT_EQ(ended, kTurns);
  EXPECT_EQ(invoked, kTurns);
}

}  // namespace
}  // namespace sharedos::envelope::core
