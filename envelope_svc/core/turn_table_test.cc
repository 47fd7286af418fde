#include "envelope_svc/core/turn_table.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/core/turn.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const absl::Time kStart = absl::FromUnixSeconds(1786438800);

std::shared_ptr<Turn> MakeTurn(const std::string& id, const std::string& execution_id,
                               const std::string& namespace_id = "world-1",
                               absl::Time deadline = kStart + absl::Seconds(10)) {
  auto turn = std::make_shared<Turn>();
  turn->id = id;
  turn->request.set_execution_id(execution_id);
  turn->request.mutable_context()->set_namespace_id(namespace_id);
  turn->context.set_namespace_id(namespace_id);
  turn->context.mutable_owner()->set_human_user_id("user-alice");
  turn->deadline = deadline;
  return turn;
}

common::server::HostScope AliceIn(const std::string& namespace_id) {
  common::server::HostScope scope;
  scope.namespaces = {namespace_id};
  scope.owners = {"human:user-alice"};
  return scope;
}

TurnTable MakeTable(size_t max_turns = 100) {
  return TurnTable(TurnTable::Options{max_turns, absl::Minutes(1)});
}

TEST(ScopeCoversTest, NamespaceAndOwner) {
  pb::AccessContext context;
  context.set_namespace_id("world-1");
  context.mutable_owner()->set_human_user_id("user-alice");
  common::server::HostScope scope;
  EXPECT_FALSE(ScopeCovers(scope, context));
  scope.namespaces = {"world-1"};
  EXPECT_FALSE(ScopeCovers(scope, context));
  scope.owners = {"human:user-alice"};
  EXPECT_TRUE(ScopeCovers(scope, context));
  scope.owners = {"agent:user-alice"};
  EXPECT_FALSE(ScopeCovers(scope, context));
  scope.owners = {"*"};
  EXPECT_TRUE(ScopeCovers(scope, context));
  scope.namespaces = {"world-2"};
  EXPECT_FALSE(ScopeCovers(scope, context));
  // The authority a turn names is bounded too: by the owners, or the authorities when listed.
  scope.namespaces = {"world-1"};
  scope.owners = {"human:user-alice"};
  context.mutable_authority()->set_human_user_id("user-bob");
  EXPECT_FALSE(ScopeCovers(scope, context));
  context.mutable_authority()->set_human_user_id("user-alice");
  EXPECT_TRUE(ScopeCovers(scope, context));
  scope.authorities = {"agent:agent-orchestrator"};
  EXPECT_FALSE(ScopeCovers(scope, context));
  context.mutable_authority()->set_agent_id("agent-orchestrator");
  EXPECT_TRUE(ScopeCovers(scope, context));
}

TEST(CheckTurnIdTest, EmptyIsInvalid) {
  EXPECT_THAT(CheckTurnId(""), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("turn_id")));
  EXPECT_TRUE(CheckTurnId("turn-1").ok());
}

TEST(CheckTurnIdTest, LongerThan256IsInvalidAndNotEchoed) {
  EXPECT_TRUE(CheckTurnId(std::string(256, 't')).ok());
  const absl::Status long_id = CheckTurnId(std::string(70000, 't'));
  EXPECT_THAT(long_id, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("turn_id")));
  EXPECT_THAT(long_id.message(), Not(HasSubstr("tttt")));
}

TEST(TurnTableTest, AnExecutionIsReservedOncePerNamespace) {
  TurnTable table = MakeTable();
  EXPECT_TRUE(table.Reserve(*MakeTurn("turn-1", "exec-1")).ok());
  EXPECT_THAT(table.Reserve(*MakeTurn("turn-2", "exec-1")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("execution_request.execution_id: \"exec-1\" is already used")));
  EXPECT_TRUE(table.Reserve(*MakeTurn("turn-3", "exec-1", "world-2")).ok());
  // Reserved is not yet held.
  EXPECT_EQ(table.held(), 0u);
  EXPECT_EQ(table.Lookup("turn-1"), nullptr);
}

TEST(TurnTableTest, OpenTurnsAreBoundedByMaxTurns) {
  TurnTable table = MakeTable(/*max_turns=*/2);
  EXPECT_TRUE(table.Reserve(*MakeTurn("turn-1", "exec-1")).ok());
  EXPECT_TRUE(table.Reserve(*MakeTurn("turn-2", "exec-2")).ok());
  EXPECT_THAT(table.Reserve(*MakeTurn("turn-3", "exec-3")),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("quota max_turns; --max_turns raises it")));
}

TEST(TurnTableTest, RetainedTurnsGiveWayToNewOnesWhenTheTableIsFull) {
  TurnTable table = MakeTable(/*max_turns=*/2);
  std::shared_ptr<Turn> ran = MakeTurn("turn-1", "exec-1");
  ASSERT_TRUE(table.Reserve(*ran).ok());
  table.PublishRunning(ran);
  table.Retire(*ran, kStart);
  std::shared_ptr<Turn> open = MakeTurn("turn-2", "exec-2");
  ASSERT_TRUE(table.Reserve(*open).ok());
  table.PublishRunning(open);
  // The ended turn is forgotten early; the open one stays.
  EXPECT_TRUE(table.Reserve(*MakeTurn("turn-3", "exec-3")).ok());
  EXPECT_EQ(table.Lookup("turn-1"), nullptr);
  EXPECT_EQ(table.Lookup("turn-2"), open);
}

std::shared_ptr<Turn> HostTurn(const std::string& id, const std::string& namespace_id,
                               const std::string& host) {
  std::shared_ptr<Turn> turn = MakeTurn(id, "exec-" + id, namespace_id);
  turn->host = host;
  return turn;
}

TEST(TurnTableTest, OpenTurnsAreBoundedPerNamespaceAndOthersKeepOpening) {
  TurnTable::Options options;
  options.max_open_turns_per_namespace = 2;
  TurnTable table(options);
  ASSERT_TRUE(table.Reserve(*HostTurn("a1", "world-bob", "host-bob")).ok());
  std::shared_ptr<Turn> second = HostTurn("a2", "world-bob", "host-bob");
  ASSERT_TRUE(table.Reserve(*second).ok());
  table.PublishRunning(second);
  EXPECT_THAT(table.Reserve(*HostTurn("a3", "world-bob", "host-bob")),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("open turns in namespace \"world-bob\": 2 of 2 (quota "
                                 "max_open_turns_per_namespace; --max_open_turns_per_namespace "
                                 "raises it)")));
  // Another namespace is not affected.
  EXPECT_TRUE(table.Reserve(*HostTurn("b1", "world-alice", "host-alice")).ok());
  // A turn that ends frees its slot.
  table.Retire(*second, kStart);
  EXPECT_EQ(table.open_in_namespace("world-bob"), 1u);
  EXPECT_TRUE(table.Reserve(*HostTurn("a4", "world-bob", "host-bob")).ok());
}

TEST(TurnTableTest, OpenTurnsAreBoundedPerHostCredential) {
  TurnTable::Options options;
  options.max_open_turns_per_host = 1;
  TurnTable table(options);
  std::shared_ptr<Turn> first = HostTurn("a1", "world-1", "host-bob");
  ASSERT_TRUE(table.Reserve(*first).ok());
  EXPECT_THAT(table.Reserve(*HostTurn("a2", "world-2", "host-bob")),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("open turns of host credential \"host-bob\": 1 of 1 (quota "
                                 "max_open_turns_per_host; --max_open_turns_per_host raises it)")));
  EXPECT_TRUE(table.Reserve(*HostTurn("b1", "world-1", "host-alice")).ok());
  // Ended at admission: no longer open.
  table.PublishEnded(first, kStart);
  EXPECT_EQ(table.open_of_host("host-bob"), 0u);
  EXPECT_TRUE(table.Reserve(*HostTurn("a3", "world-2", "host-bob")).ok());
}

TEST(TurnTableTest, TurnsEndedAtAdmissionAreRetainedInABoundedFifo) {
  TurnTable::Options options;
  options.max_admission_ended = 3;
  options.ended_turn_retention = absl::Minutes(1);
  TurnTable table(options);
  for (int i = 0; i < 10; ++i) {
    std::shared_ptr<Turn> turn = HostTurn(absl::StrCat("d", i), "world-1", "host-bob");
    ASSERT_TRUE(table.Reserve(*turn).ok());
    table.PublishEnded(turn, kStart + absl::Seconds(i));
  }
  EXPECT_EQ(table.held(), 3u);
  EXPECT_EQ(table.Lookup("d6"), nullptr);
  EXPECT_NE(table.Lookup("d7"), nullptr);
  EXPECT_NE(table.Lookup("d9"), nullptr);
  // The oldest's execution is free again; the retention still applies to the rest.
  EXPECT_TRUE(table.Reserve(*MakeTurn("again", "exec-d0")).ok());
  table.Sweep(kStart + absl::Seconds(67));
  EXPECT_EQ(table.Lookup("d7"), nullptr);
  EXPECT_NE(table.Lookup("d8"), nullptr);
}

TEST(TurnTableTest, FindChecksTheCallersScope) {
  TurnTable table = MakeTable();
  std::shared_ptr<Turn> turn = MakeTurn("turn-1", "exec-1");
  ASSERT_TRUE(table.Reserve(*turn).ok());
  table.PublishRunning(turn);
  absl::StatusOr<std::shared_ptr<Turn>> found = table.Find("turn-1", AliceIn("world-1"));
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->get(), turn.get());
  EXPECT_EQ(table.Lookup("turn-1"), turn);
  // Out of scope reads exactly as unknown: nothing about another host's turns leaks.
  EXPECT_THAT(table.Find("turn-1", AliceIn("world-2")),
              StatusIs(absl::StatusCode::kNotFound, "turn \"turn-1\" not found"));
  EXPECT_THAT(table.Find("turn-9", AliceIn("world-1")),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("\"turn-9\"")));
  EXPECT_EQ(table.Lookup("turn-9"), nullptr);
}

TEST(TurnTableTest, RunningTurnsAreDueAtTheirDeadlineUntilRetired) {
  TurnTable table = MakeTable();
  std::shared_ptr<Turn> early = MakeTurn("turn-1", "exec-1", "world-1", kStart + absl::Seconds(5));
  std::shared_ptr<Turn> late = MakeTurn("turn-2", "exec-2", "world-1", kStart + absl::Seconds(9));
  for (const auto& turn : {late, early}) {
    ASSERT_TRUE(table.Reserve(*turn).ok());
    table.PublishRunning(turn);
  }
  EXPECT_EQ(table.held(), 2u);
  EXPECT_EQ(table.running(), 2u);
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(4)), IsEmpty());
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(5)), ElementsAre(early));
  // Sweeping answers due turns; only their ending retires them.
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(9)), ElementsAre(early, late));
  table.Retire(*early, kStart + absl::Seconds(9));
  EXPECT_EQ(table.running(), 1u);
  EXPECT_EQ(table.held(), 2u);
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(9)), ElementsAre(late));
  // Retiring twice changes nothing.
  table.Retire(*early, kStart + absl::Seconds(20));
  EXPECT_EQ(table.running(), 1u);
}

TEST(TurnTableTest, EndedTurnsAreForgottenAfterTheirRetentionAndFreeTheirExecution) {
  TurnTable table = MakeTable();
  std::shared_ptr<Turn> turn = MakeTurn("turn-1", "exec-1");
  ASSERT_TRUE(table.Reserve(*turn).ok());
  table.PublishRunning(turn);
  table.Retire(*turn, kStart + absl::Seconds(2));
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(61)), IsEmpty());
  EXPECT_EQ(table.held(), 1u);
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(62)), IsEmpty());
  EXPECT_EQ(table.held(), 0u);
  EXPECT_EQ(table.Lookup("turn-1"), nullptr);
  EXPECT_TRUE(table.Reserve(*MakeTurn("turn-2", "exec-1")).ok());
}

TEST(TurnTableTest, TurnsEndedWhileOpenedAreRetainedFromTheirEnd) {
  TurnTable table = MakeTable();
  std::shared_ptr<Turn> turn = MakeTurn("turn-1", "exec-1", "world-1", kStart);
  ASSERT_TRUE(table.Reserve(*turn).ok());
  table.PublishEnded(turn, kStart + absl::Seconds(1));
  EXPECT_EQ(table.held(), 1u);
  EXPECT_EQ(table.running(), 0u);
  // Never running: its deadline is not watched, and retiring it changes nothing.
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(60)), IsEmpty());
  table.Retire(*turn, kStart + absl::Minutes(10));
  EXPECT_EQ(table.held(), 1u);
  EXPECT_THAT(table.Sweep(kStart + absl::Seconds(61)), IsEmpty());
  EXPECT_EQ(table.held(), 0u);
}

}  // namespace
}  // namespace sharedos::envelope::core
