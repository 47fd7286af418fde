// The facade: reading turns (GetTurn, WatchTurn) and the table behind it (retention); each part's
// behaviour is tested in its own file (admission_test, invocation_test, settlement_test).

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/status/status_matchers.h"
#include "envelope_svc/core/turn_engine_fixture.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::authorizer::client::FakeAuthorizerClient;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using testing::FakeToolProvider;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using testing::Parse;
using ::testing::SizeIs;
using ::testing::StartsWith;
using Method = FakeAuthorizerClient::Method;
using testing::TurnEngineTest;

TEST_F(TurnEngineTest, EndedTurnsAreForgottenAfterTheirRetention) {
  TurnEngine::Options options;
  options.ended_turn_retention = absl::Minutes(1);
  MakeEngine(options);
  const std::string turn = OpenRunning();
  Cancel(turn);
  clock_.AdvanceTime(absl::Minutes(2));
  engine_->CancelExpired();
  EXPECT_EQ(engine_->held_turns(), 0u);
  v1::GetTurnRequest get;
  get.set_turn_id(turn);
  EXPECT_THAT(engine_->GetTurn(get, scope_), StatusIs(absl::StatusCode::kNotFound));
  // The execution id is free again.
  EXPECT_TRUE(TryOpen(Request()).ok());
}

TEST_F(TurnEngineTest, WatchTurnStreamsFromASequenceAndEndsAfterTheLastEvent) {
  const std::string turn = OpenRunning();
  std::vector<pb::ExecutionEvent> seen;
  absl::Status watched;
  v1::WatchTurnRequest request;
  request.set_turn_id(turn);
  request.set_from_sequence(1);
  std::thread watcher([&] {
    watched = engine_->WatchTurn(
        request, scope_,
        [&](const pb::ExecutionEvent& event) {
          seen.push_back(event);
          return true;
        },
        [] { return false; });
  });
  Call(turn, "files.read", R"({"path": "a"})");
  Finish(turn, R"pb(complete { output { bool_value: true } })pb");
  watcher.join();
  EXPECT_TRUE(watched.ok()) << watched;
  std::vector<std::string> types;
  for (const auto& event : seen) types.push_back(event.type());
  EXPECT_THAT(types, ElementsAre("tool.requested", "tool.completed", "turn.completed"));
  EXPECT_EQ(seen[0].sequence(), 1);

  // After the end: the tail only, then the stream ends.
  request.set_from_sequence(3);
  seen.clear();
  EXPECT_TRUE(engine_
                  ->WatchTurn(
                      request, scope_,
                      [&](const pb::ExecutionEvent& event) {
                        seen.push_back(event);
                        return true;
                      },
                      [] { return false; })
                  .ok());
  ASSERT_THAT(seen, SizeIs(1));
  EXPECT_EQ(seen[0].type(), "turn.completed");
  request.set_from_sequence(-1);
  EXPECT_THAT(engine_->WatchTurn(
                  request, scope_, [](const auto&) { return true; }, [] { return false; }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("from_sequence")));
}

TEST_F(TurnEngineTest, WatchTurnStopsWhenTheReaderIsGone) {
  const std::string turn = OpenRunning();
  v1::WatchTurnRequest request;
  request.set_turn_id(turn);
  EXPECT_THAT(engine_->WatchTurn(
                  request, scope_, [](const auto&) { return true; }, [] { return true; }),
              StatusIs(absl::StatusCode::kCancelled));
  EXPECT_THAT(engine_->WatchTurn(
                  request, scope_, [](const auto&) { return false; }, [] { return false; }),
              StatusIs(absl::StatusCode::kCancelled));
}

}  // namespace
}  // namespace sharedos::envelope::core
