// TurnEngine with a journal of open turns (ADR 0009): a turn running when its engine goes away
// without ending it (the process crashed) is ended by the next engine's RecoverInterrupted —
// failed operation_aborted, fail closed, turn.ended interrupted under the journaled id, its lease
// closed, readable through GetTurn — and a turn that ends normally leaves no row behind.

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "common/crypto/sha256.h"
#include "common/sqlite/database.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/core/turn_engine_fixture.h"
#include "envelope_svc/core/turn_journal.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core::testing {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::sharedos::authorizer::client::FakeAuthorizerClient;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

class TurnRecoveryTest : public TurnEngineTest {
 protected:
  void SetUp() override {
    TurnEngineTest::SetUp();
    path_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    journal_ = OpenJournal();
    Restart();
  }

  std::unique_ptr<TurnJournal> OpenJournal() {
    absl::StatusOr<std::unique_ptr<TurnJournal>> journal = TurnJournal::Open(path_);
    EXPECT_OK(journal.status());
    return journal.ok() ? *std::move(journal) : nullptr;
  }

  // A new engine over the same journal file, as after a restart: the old engine's turns are
  // dropped without ending (a crash ends nothing).
  void Restart() {
    engine_.reset();
    journal_ = OpenJournal();
    TurnEngine::Options options;
    options.journal = journal_.get();
    MakeEngine(options);
  }

  std::vector<TurnJournal::Entry> Rows() {
    absl::StatusOr<std::vector<TurnJournal::Entry>> rows = journal_->List();
    EXPECT_OK(rows.status());
    return rows.ok() ? *rows : std::vector<TurnJournal::Entry>();
  }

  int Recover() {
    absl::StatusOr<int> ended = engine_->RecoverInterrupted();
    EXPECT_OK(ended.status());
    return ended.ok() ? *ended : -1;
  }

  std::string path_;
  std::unique_ptr<TurnJournal> journal_;
};

TEST_F(TurnRecoveryTest, ATurnThatEndsLeavesNoRowAndIsWrittenUnderTheJournaledId) {
  const std::string turn_id = OpenRunning();
  std::vector<TurnJournal::Entry> rows = Rows();
  ASSERT_THAT(rows, SizeIs(1));
  EXPECT_EQ(rows[0].turn_id, turn_id);
  EXPECT_EQ(rows[0].execution_id, "exec-1");
  const std::string event_id = rows[0].ended_event_id;
  Finish(turn_id, R"pb(complete { output { bool_value: true } })pb");
  EXPECT_THAT(Rows(), IsEmpty());
  EXPECT_EQ(TurnEnded().id(), event_id);
  Restart();
  EXPECT_EQ(Recover(), 0);
}

TEST_F(TurnRecoveryTest, ATurnOpenAtACrashIsEndedFailedOperationAbortedOnRestart) {
  const std::string turn_id = OpenRunning();
  const TurnJournal::Entry row = Rows().at(0);
  audit_.Clear();
  Restart();
  EXPECT_EQ(Recover(), 1);

  const v1::GetTurnResponse got = Get(turn_id);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(got.result().error().code(), "operation_aborted");
  EXPECT_FALSE(got.result().error().retryable());
  EXPECT_TRUE(got.result().error().details().fields().at("failClosed").bool_value());
  EXPECT_EQ(got.result().execution_id(), "exec-1");
  EXPECT_THAT(EventTypes(got.result()), Contains("turn.failed"));

  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.id(), row.ended_event_id);
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_INTERRUPTED);
  EXPECT_EQ(ended.reason(), "operation_aborted");
  EXPECT_TRUE(ended.fail_closed());
  EXPECT_EQ(ended.ended_by(), pb::ENDED_BY_ENVELOPE);
  EXPECT_EQ(ended.namespace_id(), row.context.namespace_id());
  EXPECT_THAT(authorizer_.closed_leases(), Contains(row.lease_id));
  EXPECT_THAT(Rows(), IsEmpty());
  // Ended once: a later restart finds nothing to end.
  Restart();
  EXPECT_EQ(Recover(), 0);
}

TEST_F(TurnRecoveryTest, ARecoveryThatCouldNotWriteIsRepeatedWithTheSameRecord) {
  const std::string turn_id = OpenRunning();
  Restart();
  audit_.Clear();
  audit_.FailPostEffect(true);
  EXPECT_EQ(Recover(), 1);
  // Not in the outbox: the row stays for the next start.
  ASSERT_THAT(Rows(), SizeIs(1));
  const absl::Time fixed = *Rows()[0].interrupted_at;

  clock_.AdvanceTime(absl::Minutes(3));
  audit_.FailPostEffect(false);
  Restart();
  EXPECT_EQ(Recover(), 1);
  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.at().seconds(), absl::ToUnixSeconds(fixed));
  EXPECT_EQ(Get(turn_id).result().error().code(), "operation_aborted");
  EXPECT_THAT(Rows(), IsEmpty());
}

// The latch engaged on `turn_id` with `reason` (as the MCP seat's EscalationLatch steps it).
void Latch(TurnEngine& engine, const std::string& turn_id, const std::string& reason) {
  protocol::v1::ToolCall ask;
  ask.set_id("call-ask");
  ask.set_tool("sharedos.escalate");
  absl::StatusOr<TurnEngine::LatchStep> step =
      engine.StepEscalationLatch(turn_id, TurnEngine::LatchAsk{reason, std::nullopt}, ask);
  ASSERT_OK(step.status());
  ASSERT_EQ(*step, TurnEngine::LatchStep::kAsked);
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_F(TurnRecoveryTest, ATurnLatchedAtACrashEndsEscalatedOnRestart) {
  const std::string turn_id = OpenRunning();
  const std::string reason = "The summary needs a write to Scratch; please approve.";
  const absl::Time asked_at = clock_.Now();
  Latch(*engine_, turn_id, reason);
  // Journaled before the ask was answered: the latch, never the reason's text.
  const TurnJournal::Entry row = Rows().at(0);
  ASSERT_TRUE(row.latch.has_value());
  EXPECT_EQ(row.latch->asked_at, asked_at);
  EXPECT_EQ(row.latch->reason_sha256, common::Sha256Hex(reason));
  EXPECT_EQ(row.latch->reason_length, static_cast<int64_t>(reason.size()));
  EXPECT_FALSE(row.latch->requested_event_id.empty());
  EXPECT_THAT(FileBytes(path_) + FileBytes(path_ + "-wal"), Not(HasSubstr("please approve")));

  audit_.Clear();
  clock_.AdvanceTime(absl::Minutes(1));
  Restart();
  EXPECT_EQ(Recover(), 1);
  const v1::GetTurnResponse got = Get(turn_id);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_FALSE(got.result().has_error());
  EXPECT_EQ(got.result().escalation().reason(), kRecoveredEscalationReason);
  EXPECT_EQ(got.result().escalation().status(), pb::ESCALATION_STATUS_PENDING);
  EXPECT_FALSE(got.escalation_id().empty());
  EXPECT_THAT(EventTypes(got.result()), Contains("turn.escalated"));
  const auto& metadata = got.result().metadata().fields();
  EXPECT_EQ(metadata.at("harnessOutcome").string_value(), "interrupted");
  const auto& asked = metadata.at("escalationAsked").struct_value().fields();
  EXPECT_EQ(asked.at("tool").string_value(), "sharedos.escalate");
  EXPECT_EQ(asked.at("reasonSha256").string_value(), common::Sha256Hex(reason));
  EXPECT_EQ(asked.at("reasonLength").number_value(), static_cast<double>(reason.size()));
  EXPECT_FALSE(metadata.contains("escalationRecorded"));

  // Recorded at the authorizer as a latched ending records it: at the ask's instant, the
  // escalation.requested under the journaled id.
  const auto requests = authorizer_.escalation_requests();
  ASSERT_THAT(requests, SizeIs(1));
  EXPECT_EQ(requests[0].lease_id(), row.lease_id);
  EXPECT_EQ(requests[0].execution_id(), "exec-1");
  EXPECT_EQ(requests[0].reason(), kRecoveredEscalationReason);
  EXPECT_EQ(requests[0].operation_instant().seconds(), absl::ToUnixSeconds(asked_at));
  EXPECT_EQ(requests[0].requested_event_id(), row.latch->requested_event_id);

  const pb::AuditEvent ended = TurnEnded();
  EXPECT_EQ(ended.id(), row.ended_event_id);
  EXPECT_EQ(ended.outcome(), pb::AUDIT_OUTCOME_ESCALATED);
  EXPECT_THAT(authorizer_.closed_leases(), Contains(row.lease_id));
  EXPECT_THAT(Rows(), IsEmpty());
  Restart();
  EXPECT_EQ(Recover(), 0);
  EXPECT_THAT(authorizer_.escalation_requests(), SizeIs(1));
}

// docs/adr/0018: a latched ask names a requirement the kernel described; a crash between the ask
// and the turn's end must not lose it — the recovered escalation names the same capreq- id.
TEST_F(TurnRecoveryTest, ATurnLatchedNamingARequirementEndsEscalatedNamingItAfterACrash) {
  const std::string turn_id = OpenRunning();
  authorizer_.DenyAuthorize("files", "Workspace/out.txt", "create", "no_matching_grant");
  authorizer_.DenyAuthorize("files", "Workspace/other.txt", "create", "no_matching_grant");
  absl::StatusOr<v1::InvokeToolResponse> denied =
      TryCall(turn_id, "files.create", R"({"path": "Workspace/out.txt"})");
  ASSERT_OK(denied.status());
  ASSERT_TRUE(denied->has_required_authority());
  const pb::CapabilityRequest required = denied->required_authority();
  ASSERT_OK(
      TryCall(turn_id, "files.create", R"({"path": "Workspace/other.txt"})", std::nullopt, "call-2")
          .status());
  // The host reads what the kernel described to the turn (a CLI's host never sees _meta).
  const v1::GetTurnResponse running = Get(turn_id);
  ASSERT_THAT(running.described_authorities(), SizeIs(2));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(running.described_authorities(0),
                                                                 required));

  // Two were described: the ask names the first by its id.
  protocol::v1::ToolCall ask;
  ask.set_id("call-ask");
  ask.set_tool("sharedos.escalate");
  absl::StatusOr<TurnEngine::LatchStep> step = engine_->StepEscalationLatch(
      turn_id, TurnEngine::LatchAsk{"need a human", required.id()}, ask);
  ASSERT_OK(step.status());
  ASSERT_EQ(*step, TurnEngine::LatchStep::kAsked);
  const TurnJournal::Entry row = Rows().at(0);
  ASSERT_TRUE(row.latch.has_value());
  EXPECT_EQ(row.latch->requirement_id, required.id());
  EXPECT_THAT(row.latch->described, SizeIs(2));

  audit_.Clear();
  clock_.AdvanceTime(absl::Minutes(1));
  Restart();
  EXPECT_EQ(Recover(), 1);
  const v1::GetTurnResponse got = Get(turn_id);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(got.result().metadata().fields().at("escalationRequirement").string_value(),
            required.id());
  EXPECT_THAT(got.described_authorities(), SizeIs(2));
  // Asked of the authorizer with exactly the described authority (its identity is minted again
  // from the turn's context, so the id round-trips).
  const auto requests = authorizer_.escalation_requests();
  ASSERT_THAT(requests, SizeIs(1));
  ASSERT_TRUE(requests[0].has_requested_authority_ask());
  ASSERT_THAT(requests[0].requested_authority_ask().capabilities(), SizeIs(1));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      requests[0].requested_authority_ask().capabilities(0), required.capabilities(0)));
  EXPECT_EQ(requests[0].requested_authority_ask().purpose(), required.purpose());
  EXPECT_EQ(got.result().escalation().requested_authority().id(), required.id());
  EXPECT_THAT(Rows(), IsEmpty());
}

TEST_F(TurnRecoveryTest, ARepeatedRecoveryOfALatchedTurnAsksTheSameWay) {
  const std::string turn_id = OpenRunning();
  Latch(*engine_, turn_id, "need a human");
  Restart();
  audit_.Clear();
  audit_.FailPostEffect(true);
  EXPECT_EQ(Recover(), 1);
  ASSERT_THAT(Rows(), SizeIs(1));  // turn.ended not in the outbox: ended again next start

  clock_.AdvanceTime(absl::Minutes(3));
  audit_.FailPostEffect(false);
  Restart();
  EXPECT_EQ(Recover(), 1);
  const auto requests = authorizer_.escalation_requests();
  ASSERT_THAT(requests, SizeIs(2));
  // The same request: the authorizer derives the same escalation id and writes the same record
  // under the same event id (stored once, kept once).
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(requests[0], requests[1]));
  EXPECT_EQ(Get(turn_id).result().status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_THAT(Rows(), IsEmpty());
}

TEST_F(TurnRecoveryTest, ALatchedTurnWhoseAskIsNotRecordedEndsInterruptedWithTheAskVisible) {
  const std::string turn_id = OpenRunning();
  Latch(*engine_, turn_id, "need a human");
  Restart();
  authorizer_.FailMethod(FakeAuthorizerClient::Method::kRecordEscalation,
                         absl::UnavailableError("down"));
  EXPECT_EQ(Recover(), 1);
  const v1::GetTurnResponse got = Get(turn_id);
  EXPECT_EQ(got.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(got.result().error().code(), "operation_aborted");
  const auto& metadata = got.result().metadata().fields();
  EXPECT_FALSE(metadata.at("escalationRecorded").bool_value());
  EXPECT_EQ(metadata.at("harnessOutcome").string_value(), "interrupted");
  EXPECT_TRUE(metadata.contains("escalationAsked"));
  EXPECT_EQ(TurnEnded().outcome(), pb::AUDIT_OUTCOME_INTERRUPTED);
  EXPECT_THAT(Rows(), IsEmpty());
}

TEST_F(TurnRecoveryTest, ALatchedTurnThatEndsNormallyLeavesNoRow) {
  const std::string turn_id = OpenRunning();
  Latch(*engine_, turn_id, "need a human");
  const pb::ExecutionResult result =
      Finish(turn_id, R"pb(complete { output { bool_value: true } })pb");
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(result.escalation().reason(), "need a human");
  EXPECT_THAT(Rows(), IsEmpty());
  ASSERT_THAT(authorizer_.escalation_requests(), SizeIs(1));
  EXPECT_TRUE(authorizer_.escalation_requests()[0].requested_event_id().empty());
}

TEST_F(TurnRecoveryTest, ATurnThatCannotBeJournaledDoesNotRun) {
  // Another connection makes every insert into the journal fail.
  absl::StatusOr<std::unique_ptr<common::sqlite::Database>> db =
      common::sqlite::Database::Open(path_);
  ASSERT_OK(db.status());
  ASSERT_OK(
      (*db)->Exec("CREATE TRIGGER refuse BEFORE INSERT ON open_turns "
                  "BEGIN SELECT RAISE(FAIL, 'refused'); END;"));
  const v1::OpenTurnResponse opened = Open();
  ASSERT_TRUE(opened.has_result());
  EXPECT_EQ(opened.result().status(), pb::EXECUTION_STATUS_FAILED);
  EXPECT_EQ(opened.result().error().code(), "audit_unavailable");
  EXPECT_FALSE(opened.has_mcp());
  EXPECT_THAT(Rows(), IsEmpty());
}

}  // namespace
}  // namespace sharedos::envelope::core::testing
