// TurnEngine with a journal of open turns (ADR 0009): a turn running when its engine goes away
// without ending it (the process crashed) is ended by the next engine's RecoverInterrupted —
// failed operation_aborted, fail closed, turn.ended interrupted under the journaled id, its lease
// closed, readable through GetTurn — and a turn that ends normally leaves no row behind.

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/sqlite/database.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/core/turn_engine_fixture.h"
#include "envelope_svc/core/turn_journal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core::testing {
namespace {

namespace pb = ::sharedos::protocol::v1;
using ::testing::Contains;
using ::testing::IsEmpty;
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
