#include "envelope_svc/core/turn_journal.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::core {
namespace {

using ::testing::SizeIs;

std::string JournalPath(const std::string& name) {
  return std::string(getenv("TEST_TMPDIR")) + "/" + name;
}

// The journal at `path`, opened (the test fails without one).
std::unique_ptr<TurnJournal> Open(const std::string& path) {
  absl::StatusOr<std::unique_ptr<TurnJournal>> journal = TurnJournal::Open(path);
  EXPECT_OK(journal.status());
  return journal.ok() ? *std::move(journal) : nullptr;
}

TurnJournal::Entry Entry(const std::string& turn_id) {
  TurnJournal::Entry entry;
  entry.turn_id = turn_id;
  entry.execution_id = "exec-" + turn_id;
  entry.runtime = v1::RUNTIME_MCP;
  entry.context.set_namespace_id("ns");
  entry.context.set_trace_id("trace");
  entry.lease_id = "lease-" + turn_id;
  entry.started_at = absl::FromUnixMicros(1700000000123456);
  entry.ended_event_id = "event-" + turn_id;
  return entry;
}

TEST(TurnJournalTest, RowsSurviveReopeningUntilRemoved) {
  const std::string path = JournalPath("reopen.db");
  {
    auto journal = Open(path);
    ASSERT_OK(journal->Put(Entry("t1")));
    ASSERT_OK(journal->Put(Entry("t2")));
    ASSERT_OK(journal->Remove("t1"));
  }
  auto journal = Open(path);
  absl::StatusOr<std::vector<TurnJournal::Entry>> listed = journal->List();
  ASSERT_OK(listed.status());
  const std::vector<TurnJournal::Entry>& entries = *listed;
  ASSERT_THAT(entries, SizeIs(1));
  EXPECT_EQ(entries[0].turn_id, "t2");
  EXPECT_EQ(entries[0].execution_id, "exec-t2");
  EXPECT_EQ(entries[0].runtime, v1::RUNTIME_MCP);
  EXPECT_EQ(entries[0].context.namespace_id(), "ns");
  EXPECT_EQ(entries[0].lease_id, "lease-t2");
  EXPECT_EQ(entries[0].started_at, absl::FromUnixMicros(1700000000123456));
  EXPECT_EQ(entries[0].ended_event_id, "event-t2");
  EXPECT_FALSE(entries[0].interrupted_at.has_value());
}

TEST(TurnJournalTest, TheFirstInterruptionInstantIsKept) {
  auto journal = Open(JournalPath("mark.db"));
  ASSERT_OK(journal->Put(Entry("t1")));
  const absl::Time first = absl::FromUnixSeconds(1800000000);
  absl::StatusOr<absl::Time> at = journal->MarkInterrupted("t1", first);
  ASSERT_OK(at.status());
  EXPECT_EQ(*at, first);
  at = journal->MarkInterrupted("t1", first + absl::Seconds(5));
  ASSERT_OK(at.status());
  EXPECT_EQ(*at, first);
  absl::StatusOr<std::vector<TurnJournal::Entry>> listed = journal->List();
  ASSERT_OK(listed.status());
  const std::vector<TurnJournal::Entry>& entries = *listed;
  ASSERT_THAT(entries, SizeIs(1));
  EXPECT_EQ(entries[0].interrupted_at, first);
}

TEST(TurnJournalTest, RefusesRowsWithoutIds) {
  auto journal = Open(JournalPath("ids.db"));
  TurnJournal::Entry entry = Entry("t1");
  entry.ended_event_id.clear();
  EXPECT_EQ(journal->Put(entry).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(journal->Put(Entry("")).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(journal->MarkInterrupted("absent", absl::Now()).status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace sharedos::envelope::core
