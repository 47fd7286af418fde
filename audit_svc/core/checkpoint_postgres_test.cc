// Signed checkpoints over a PostgreSQL log: the same core check (it reads the log only through
// AuditLog), against rewrites made with SQL by someone with database access — each keeps the
// chain consistent (every later hash and the head recomputed in PL/pgSQL), so Verify alone
// answers ok, and each is detected against a checkpoint taken before it.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/core/checkpoint.h"
#include "audit_svc/core/checkpoint_testing.h"
#include "audit_svc/storage/postgres_audit_store.h"
#include "common/postgres/connection.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/postgres_cluster.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::audit::v1::SignedCheckpoint;
using ::sharedos::audit::v1::VerifyRequest;
using ::sharedos::audit::v1::VerifyResponse;
using ::sharedos::common::IsOk;
using ::sharedos::common::postgres::Connection;
using ::testing::HasSubstr;

protocol::v1::AuditEvent Denied(int i) {
  protocol::v1::AuditEvent event;
  event.set_version("1");
  event.set_id(absl::StrCat("denied-", i));
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_DENIED);
  event.mutable_at()->set_seconds(1786438800 + i);
  event.set_trace_id("trace-1");
  event.set_namespace_id("world");
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_reason("tool_unavailable");
  event.set_source(protocol::v1::AUDIT_SOURCE_ENVELOPE);
  return event;
}

// Relinks records from `from` on and moves the head to the last one, in the database itself.
std::string RelinkSql(int64_t from) {
  return absl::StrCat(R"sql(
    DO $$
    DECLARE r RECORD; prev TEXT; next TEXT; last BIGINT := )sql",
                      from - 1, R"sql(;
    BEGIN
      SELECT hash INTO prev FROM audit_records WHERE sequence = )sql",
                      from - 1, R"sql(;
      IF prev IS NULL THEN prev := repeat('0', 64); END IF;
      FOR r IN SELECT sequence, event_json FROM audit_records
               WHERE sequence >= )sql",
                      from, R"sql( ORDER BY sequence LOOP
        next := encode(sha256(convert_to(prev || r.event_json, 'UTF8')), 'hex');
        UPDATE audit_records SET prev_hash = prev, hash = next WHERE sequence = r.sequence;
        prev := next; last := r.sequence;
      END LOOP;
      UPDATE audit_head SET sequence = last, hash = prev WHERE id = 1;
    END $$;)sql");
}

class CheckpointPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto uri = sharedos::testing::FreshSchema();
    ASSERT_THAT(uri, IsOk());
    uri_ = *uri;
    key_path_ =
        absl::StrCat(std::getenv("TEST_TMPDIR"), "/",
                     ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".key");
    ASSERT_THAT(testing::WriteNewEd25519Key(key_path_), IsOk());
    OpenLog();
    for (int i = 0; i < 6; ++i)
      ASSERT_THAT(log_->AppendEvent(Denied(i), "service:envelope"), IsOk());
    auto made = checkpointer_->CheckpointNow();
    ASSERT_THAT(made, IsOk());
    earlier_ = *made;
    for (int i = 6; i < 9; ++i)
      ASSERT_THAT(log_->AppendEvent(Denied(i), "service:envelope"), IsOk());
  }

  void OpenLog() {
    checkpointer_.reset();
    log_.reset();
    storage::PostgresAuditStore::Options options;
    options.uri = uri_;
    auto store = storage::PostgresAuditStore::Open(options);
    ASSERT_THAT(store, IsOk());
    log_ = std::make_unique<AuditLog>(*std::move(store), clock_, AuditLog::Options{});
    auto key = CheckpointKey::ReadPrivateKeyFile(key_path_, "--checkpoint_key_file");
    ASSERT_THAT(key, IsOk());
    auto checkpointer = Checkpointer::Create(*log_, *std::move(key), clock_, {});
    ASSERT_THAT(checkpointer, IsOk());
    checkpointer_ = *std::move(checkpointer);
  }

  // Runs `sql` over a connection of its own (as someone with database access), then reopens the
  // log as a restarted audit_svc would.
  void Rewrite(const std::string& sql) {
    auto conn = Connection::Open(uri_);
    ASSERT_THAT(conn, IsOk());
    ASSERT_THAT((*conn)->ExecScript(sql), IsOk());
    OpenLog();
  }

  // Plain Verify is ok; Verify against the earlier checkpoint is not, with `expected` in detail.
  void ExpectDetectedOnlyByTheCheckpoint(const std::string& expected) {
    auto plain = log_->Verify(VerifyRequest());
    ASSERT_THAT(plain, IsOk());
    EXPECT_TRUE(plain->ok()) << plain->detail();
    VerifyRequest request;
    *request.add_checkpoints() = earlier_;
    auto checked = VerifyWithCheckpoints(*log_, request, &checkpointer_->key());
    ASSERT_THAT(checked, IsOk());
    EXPECT_FALSE(checked->ok());
    EXPECT_THAT(checked->detail(), HasSubstr(expected));
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::string uri_;
  std::string key_path_;
  std::unique_ptr<AuditLog> log_;
  std::unique_ptr<Checkpointer> checkpointer_;
  SignedCheckpoint earlier_;
};

TEST_F(CheckpointPostgresTest, AnUntouchedLogExtendsTheCheckpoint) {
  OpenLog();
  VerifyRequest request;
  *request.add_checkpoints() = earlier_;
  auto checked = VerifyWithCheckpoints(*log_, request, &checkpointer_->key());
  ASSERT_THAT(checked, IsOk());
  EXPECT_TRUE(checked->ok()) << checked->detail();
  EXPECT_EQ(checked->checked(), 9);
  EXPECT_EQ(checked->checkpoints_verified(), 1);
}

TEST_F(CheckpointPostgresTest, AnEditedRecordWithEveryLaterHashRecomputedIsDetected) {
  ASSERT_NO_FATAL_FAILURE(Rewrite(absl::StrCat(
      "UPDATE audit_records SET outcome = ", protocol::v1::AUDIT_OUTCOME_ALLOWED,
      ", event_json = replace(event_json, '\"AUDIT_OUTCOME_DENIED\"', '\"AUDIT_OUTCOME_ALLOWED\"')"
      " WHERE sequence = 2;",
      RelinkSql(2))));
  ExpectDetectedOnlyByTheCheckpoint("history rewritten");
}

TEST_F(CheckpointPostgresTest, ATruncatedTailWithTheHeadMovedBackIsDetected) {
  ASSERT_NO_FATAL_FAILURE(
      Rewrite(absl::StrCat("DELETE FROM audit_records WHERE sequence > 4;", RelinkSql(5))));
  ExpectDetectedOnlyByTheCheckpoint("no longer holds record 6");
}

TEST_F(CheckpointPostgresTest, AnEmptiedLogIsDetected) {
  ASSERT_NO_FATAL_FAILURE(Rewrite(absl::StrCat("DELETE FROM audit_records;", RelinkSql(1))));
  ExpectDetectedOnlyByTheCheckpoint("no longer holds record 6");
}

}  // namespace
}  // namespace sharedos::audit::core
