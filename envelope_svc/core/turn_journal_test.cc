#include "envelope_svc/core/turn_journal.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/sqlite/database.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
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

TurnJournal::Entry::Latch Latch(absl::Time at, const std::string& event_id) {
  TurnJournal::Entry::Latch latch;
  latch.asked_at = at;
  latch.reason_sha256 = "5d41402abc4b2a76b9719d911017c592";
  latch.reason_length = 42;
  latch.requested_event_id = event_id;
  return latch;
}

TEST(TurnJournalTest, ALatchIsWrittenOnceAndSurvivesReopening) {
  const std::string path = JournalPath("latch.db");
  const absl::Time asked = absl::FromUnixMicros(1800000000654321);
  {
    auto journal = Open(path);
    ASSERT_OK(journal->Put(Entry("t1")));
    ASSERT_OK(journal->Put(Entry("t2")));
    ASSERT_OK(journal->MarkLatched("t1", Latch(asked, "requested-1")));
    // A second ask of the same turn changes nothing: the first latch is kept.
    ASSERT_OK(journal->MarkLatched("t1", Latch(asked + absl::Seconds(9), "requested-2")));
    // A turn that has ended (its row removed) is no error, and no row comes back.
    ASSERT_OK(journal->MarkLatched("gone", Latch(asked, "requested-3")));
  }
  auto journal = Open(path);
  absl::StatusOr<std::vector<TurnJournal::Entry>> listed = journal->List();
  ASSERT_OK(listed.status());
  ASSERT_THAT(*listed, SizeIs(2));
  const TurnJournal::Entry& latched = (*listed)[0];
  ASSERT_TRUE(latched.latch.has_value());
  EXPECT_EQ(latched.latch->asked_at, asked);
  EXPECT_EQ(latched.latch->reason_sha256, "5d41402abc4b2a76b9719d911017c592");
  EXPECT_EQ(latched.latch->reason_length, 42);
  EXPECT_EQ(latched.latch->requested_event_id, "requested-1");
  EXPECT_FALSE((*listed)[1].latch.has_value());
  EXPECT_EQ(journal->MarkLatched("t2", Latch(asked, "")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(journal->MarkLatched("", Latch(asked, "requested-4")).code(),
            absl::StatusCode::kInvalidArgument);
}

// A described authority as the kernel mints one (the journal only keeps it).
protocol::v1::CapabilityRequest Described(int n) {
  protocol::v1::CapabilityRequest request;
  request.set_id(absl::StrCat("capreq-", n));
  request.set_namespace_id("ns");
  protocol::v1::Capability* capability = request.add_capabilities();
  capability->mutable_resource()->set_namespace_("files");
  capability->mutable_resource()->add_path("Workspace");
  capability->mutable_resource()->add_path(absl::StrCat("out-", n, ".txt"));
  capability->add_actions("create");
  request.set_purpose("summarise");
  return request;
}

TEST(TurnJournalTest, ALatchKeepsTheDescribedAuthoritiesAndTheNamedOne) {
  const std::string path = JournalPath("latch-described.db");
  {
    auto journal = Open(path);
    ASSERT_OK(journal->Put(Entry("t1")));
    ASSERT_OK(journal->Put(Entry("t2")));
    TurnJournal::Entry::Latch latch = Latch(absl::FromUnixSeconds(7), "requested-1");
    for (int n = 0; n < 3; ++n) latch.described.push_back(Described(n));
    latch.requirement_id = "capreq-1";
    ASSERT_OK(journal->MarkLatched("t1", latch));
    // Bounded as the turn bounds them (semantics §10): 65 are refused, nothing written.
    TurnJournal::Entry::Latch over = Latch(absl::FromUnixSeconds(7), "requested-2");
    for (int n = 0; n < 65; ++n) over.described.push_back(Described(n));
    EXPECT_EQ(journal->MarkLatched("t2", over).code(), absl::StatusCode::kInvalidArgument);
  }
  auto journal = Open(path);
  absl::StatusOr<std::vector<TurnJournal::Entry>> listed = journal->List();
  ASSERT_OK(listed.status());
  ASSERT_THAT(*listed, SizeIs(2));
  ASSERT_TRUE((*listed)[0].latch.has_value());
  const TurnJournal::Entry::Latch& kept = *(*listed)[0].latch;
  ASSERT_THAT(kept.described, SizeIs(3));
  for (int n = 0; n < 3; ++n) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(kept.described[n], Described(n)))
        << n;
  }
  EXPECT_EQ(kept.requirement_id, "capreq-1");
  EXPECT_FALSE((*listed)[1].latch.has_value());
}

TEST(TurnJournalTest, ALatchWithoutDescribedAuthoritiesNamesNone) {
  const std::string path = JournalPath("latch-none.db");
  auto journal = Open(path);
  ASSERT_OK(journal->Put(Entry("t1")));
  ASSERT_OK(journal->MarkLatched("t1", Latch(absl::FromUnixSeconds(7), "requested-1")));
  absl::StatusOr<std::vector<TurnJournal::Entry>> listed = journal->List();
  ASSERT_OK(listed.status());
  ASSERT_TRUE((*listed)[0].latch.has_value());
  EXPECT_THAT((*listed)[0].latch->described, SizeIs(0));
  EXPECT_EQ((*listed)[0].latch->requirement_id, "");
}

TEST(TurnJournalTest, ADamagedDescribedListIsDataLoss) {
  const std::string path = JournalPath("latch-damaged.db");
  auto journal = Open(path);
  ASSERT_OK(journal->Put(Entry("t1")));
  ASSERT_OK(journal->MarkLatched("t1", Latch(absl::FromUnixSeconds(7), "requested-1")));
  auto db = common::sqlite::Database::Open(path);
  ASSERT_OK(db.status());
  // A length prefix longer than what follows.
  ASSERT_OK((*db)->Exec("UPDATE open_turns SET latch_described = x'7f0a01'"));
  EXPECT_EQ(journal->List().status().code(), absl::StatusCode::kDataLoss);
}

TEST(TurnJournalTest, AVersionOneJournalIsMigratedWithItsRows) {
  const std::string path = JournalPath("v1.db");
  {
    // The schema as version 1 wrote it, with a row.
    auto db = common::sqlite::Database::Open(path);
    ASSERT_OK(db.status());
    ASSERT_OK((*db)->Exec(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT);"
        "INSERT INTO schema_migrations VALUES (1, '2026-12-01T00:00:00Z');"
        "CREATE TABLE open_turns (turn_id TEXT PRIMARY KEY, execution_id TEXT NOT NULL, "
        "runtime INTEGER NOT NULL, context BLOB NOT NULL, lease_id TEXT NOT NULL, "
        "started_at_us INTEGER NOT NULL, ended_event_id TEXT NOT NULL, interrupted_at_us INTEGER);"
        "INSERT INTO open_turns VALUES ('t1', 'exec-t1', 1, x'', 'lease-t1', 5, 'event-t1', "
        "NULL);"));
  }
  auto journal = Open(path);
  ASSERT_NE(journal, nullptr);
  absl::StatusOr<std::vector<TurnJournal::Entry>> listed = journal->List();
  ASSERT_OK(listed.status());
  ASSERT_THAT(*listed, SizeIs(1));
  EXPECT_EQ((*listed)[0].ended_event_id, "event-t1");
  EXPECT_FALSE((*listed)[0].latch.has_value());
  ASSERT_OK(journal->MarkLatched("t1", Latch(absl::FromUnixSeconds(7), "requested-1")));
  listed = journal->List();
  ASSERT_OK(listed.status());
  ASSERT_TRUE((*listed)[0].latch.has_value());
}

TEST(TurnJournalTest, ANewerSchemaIsRefused) {
  const std::string path = JournalPath("newer.db");
  { ASSERT_NE(Open(path), nullptr); }
  {
    auto db = common::sqlite::Database::Open(path);
    ASSERT_OK(db.status());
    ASSERT_OK((*db)->Exec("INSERT INTO schema_migrations VALUES (4, '2027-01-01T00:00:00Z');"));
  }
  absl::StatusOr<std::unique_ptr<TurnJournal>> journal = TurnJournal::Open(path);
  EXPECT_EQ(journal.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace sharedos::envelope::core
