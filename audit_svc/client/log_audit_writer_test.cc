#include "audit_svc/client/log_audit_writer.h"

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "audit_svc/client/fake_audit_writer.h"
#include "audit_svc/core/audit_log.h"
#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::client {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;
using ::testing::HasSubstr;
using ::testing::SizeIs;

AuditEvent MakeEvent() {
  AuditEvent event;
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_ALLOWED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-1");
  event.set_namespace_id("world");
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_reason("allowed");
  return event;
}

// The SQLite store, whose Append can be made to fail as a full or broken disk would.
class BreakableStore : public storage::AuditStore {
 public:
  BreakableStore(std::unique_ptr<storage::AuditStore> store, std::atomic<bool>& broken)
      : store_(std::move(store)), broken_(broken) {}
  absl::StatusOr<storage::AppendBatchResult> Append(
      const std::vector<std::vector<storage::PendingEvent>>& submissions,
      absl::Time recorded_at) override {
    if (broken_) return absl::UnavailableError("disk I/O error");
    return store_->Append(submissions, recorded_at);
  }
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> Query(
      const sharedos::audit::v1::AuditFilter& filter, int64_t after_sequence, int limit) override {
    return store_->Query(filter, after_sequence, limit);
  }
  absl::StatusOr<std::vector<sharedos::audit::v1::AuditRecord>> QueryNewestFirst(
      const sharedos::audit::v1::AuditFilter& filter, int64_t before_sequence, int limit) override {
    return store_->QueryNewestFirst(filter, before_sequence, limit);
  }
  absl::StatusOr<storage::Head> GetHead() override { return store_->GetHead(); }
  absl::StatusOr<storage::VerifyResult> Verify(std::optional<int64_t> from,
                                               std::optional<int64_t> to) override {
    return store_->Verify(from, to);
  }

 private:
  std::unique_ptr<storage::AuditStore> store_;
  std::atomic<bool>& broken_;
};

class LogAuditWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = storage::SqliteAuditStore::Open(
        std::string(std::getenv("TEST_TMPDIR")) + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db",
        {});
    ASSERT_THAT(store, IsOk());
    log_ = std::make_unique<core::AuditLog>(
        std::make_unique<BreakableStore>(*std::move(store), broken_), clock_,
        core::AuditLog::Options{});
    writer_ = std::make_unique<LogAuditWriter>(*log_, fallback_, "service:envelope");
  }

  int64_t Head() const { return log_->HeadSequence(); }

  std::atomic<bool> broken_{false};
  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::unique_ptr<core::AuditLog> log_;
  FakeAuditWriter fallback_;
  std::unique_ptr<LogAuditWriter> writer_;
};

TEST_F(LogAuditWriterTest, PreEffectIsInTheLogBeforeItReturns) {
  ASSERT_THAT(writer_->RecordPreEffect(MakeEvent()), IsOk());
  EXPECT_EQ(Head(), 1);
  ASSERT_THAT(writer_->RecordPostEffect(MakeEvent()), IsOk());
  EXPECT_EQ(Head(), 2);
  EXPECT_THAT(fallback_.events(), SizeIs(0));
  // Version and a fresh id stamped per event.
  sharedos::audit::v1::QueryRequest query;
  auto page = log_->Query(query);
  ASSERT_THAT(page, IsOk());
  ASSERT_THAT(page->records(), SizeIs(2));
  EXPECT_EQ(page->records(0).event().version(), "1");
  EXPECT_FALSE(page->records(0).event().id().empty());
  EXPECT_NE(page->records(0).event().id(), page->records(1).event().id());
}

TEST_F(LogAuditWriterTest, PreEffectFailsClosedWhenTheLogCannotCommit) {
  broken_ = true;
  EXPECT_THAT(writer_->RecordPreEffect(MakeEvent()),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("audit_unavailable")));
  EXPECT_EQ(Head(), 0);
  EXPECT_THAT(fallback_.events(), SizeIs(0)) << "pre-effect records never wait in an outbox";
}

TEST_F(LogAuditWriterTest, PostEffectGoesToTheFallbackWhenTheLogCannotCommit) {
  broken_ = true;
  ASSERT_THAT(writer_->RecordPostEffect(MakeEvent()), IsOk());
  EXPECT_EQ(Head(), 0);
  ASSERT_THAT(fallback_.recorded(), SizeIs(1));
  EXPECT_FALSE(fallback_.recorded()[0].pre_effect);
  EXPECT_FALSE(fallback_.recorded()[0].event.id().empty());
}

TEST_F(LogAuditWriterTest, MalformedEventsAreRefusedNotRedirected) {
  AuditEvent no_purpose = MakeEvent();
  no_purpose.clear_purpose();
  EXPECT_THAT(writer_->RecordPreEffect(no_purpose), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(writer_->RecordPostEffect(no_purpose), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(fallback_.events(), SizeIs(0));
  EXPECT_EQ(Head(), 0);
}

}  // namespace
}  // namespace sharedos::audit::client
