// The one conformance suite of AuditStore (house style 11): every implementation runs it. A
// backend test defines fixtures deriving from AuditStoreTestBase that implement Create() (and,
// where the backend's storage can be edited behind the store's back, Tamperer()), then
// instantiates the typed suite:
//
//   class SqliteFileStore : public AuditStoreTestBase { ...Create() override... };
//   using Backends = ::testing::Types<SqliteFileStore>;
//   INSTANTIATE_TYPED_TEST_SUITE_P(Sqlite, AuditStoreConformanceTest, Backends);
//
// What it holds every backend to (audit_store.h): sequences 1, 2, 3, … without gaps across
// submissions and batches; one hash chain from kGenesisHash whose head is stored; idempotency on
// event id (a duplicate is not a second record; a conflicting id rejects its whole submission
// and only it); queries by every filter field, in sequence order, paged by sequence, and newest
// first, paged backwards; reads
// running beside appends; Verify over the log and any sub-range, detecting an edited event, a
// deleted, reordered or forged record and a truncated or rewritten tail.

#ifndef SHAREDOS_AUDIT_SVC_STORAGE_AUDIT_STORE_CONFORMANCE_H_
#define SHAREDOS_AUDIT_SVC_STORAGE_AUDIT_STORE_CONFORMANCE_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "audit_svc/storage/audit_store.h"
#include "audit_svc/storage/event_codec.h"
#include "common/status/proto_matchers.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"

namespace sharedos::audit::storage::testing {

// Edits a backend's stored records behind the store's back, as an attacker with access to its
// storage (the file, the database) would. Each edit leaves the stored head alone.
class AuditStoreTamperer {
 public:
  virtual ~AuditStoreTamperer() = default;
  // Replaces every `from` in record `sequence`'s stored event text with `to`, hashes unchanged.
  virtual absl::Status EditEvent(int64_t sequence, const std::string& from,
                                 const std::string& to) = 0;
  // Deletes the records with sequences in [first, last].
  virtual absl::Status DeleteRecords(int64_t first, int64_t last) = 0;
  // Swaps records `a` and `b`, content, links and all, by renumbering them.
  virtual absl::Status SwapRecords(int64_t a, int64_t b) = 0;
  // Overwrites record `sequence`'s stored hash.
  virtual absl::Status SetHash(int64_t sequence, const std::string& hash) = 0;
  // Stores a copy of record `sequence` (links and all) at sequence `at`, under `event_id`.
  virtual absl::Status CopyRecord(int64_t sequence, int64_t at, const std::string& event_id) = 0;
};

// An authorization.checked event in namespace `ns` (trace "trace-<ns>") by agent:mallory,
// source kernel, at 2026-08-11T09:00:00Z (1786438800).
inline protocol::v1::AuditEvent MakeEvent(const std::string& id, const std::string& ns = "world",
                                          const std::string& reason = "allowed") {
  protocol::v1::AuditEvent event;
  event.set_version("1");
  event.set_id(id);
  event.set_type(protocol::v1::AUDIT_EVENT_TYPE_AUTHORIZATION_CHECKED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_ALLOWED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-" + ns);
  event.set_namespace_id(ns);
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_reason(reason);
  event.set_source(protocol::v1::AUDIT_SOURCE_KERNEL);
  return event;
}

// MakeEvent with its own trace and metadata.executionId.
inline protocol::v1::AuditEvent MakeKeyedEvent(const std::string& id, const std::string& ns,
                                               const std::string& trace,
                                               const std::string& execution) {
  protocol::v1::AuditEvent event = MakeEvent(id, ns);
  event.set_trace_id(trace);
  (*event.mutable_metadata()->mutable_fields())["executionId"].set_string_value(execution);
  return event;
}

// Events ready to append, owning the events so the PendingEvent pointers stay valid.
struct Batch {
  std::vector<std::unique_ptr<protocol::v1::AuditEvent>> events;
  std::vector<PendingEvent> pending;
  void Add(protocol::v1::AuditEvent event) {
    events.push_back(std::make_unique<protocol::v1::AuditEvent>(std::move(event)));
    pending.push_back(
        {events.back().get(), *CanonicalEventJson(*events.back()), DeriveColumns(*events.back())});
  }
};

// What every backend fixture provides: a fresh, empty store per test.
class AuditStoreTestBase : public ::testing::Test {
 protected:
  virtual absl::StatusOr<std::unique_ptr<AuditStore>> Create() = 0;
  // The backend's tamper hook, or null when its storage cannot be edited behind its back (the
  // tamper-evidence cases then skip).
  virtual AuditStoreTamperer* Tamperer() { return nullptr; }

  void SetUp() override {
    absl::StatusOr<std::unique_ptr<AuditStore>> store = Create();
    ASSERT_THAT(store, common::IsOk());
    store_ = *std::move(store);
  }

  // Appends events "e<start>" … "e<start + count - 1>" as one submission.
  AppendBatchResult AppendAll(int count, int start = 1) {
    Batch batch;
    for (int i = start; i < start + count; ++i) batch.Add(MakeEvent("e" + std::to_string(i)));
    auto result = store_->Append({batch.pending}, absl::FromUnixSeconds(1786438801));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *std::move(result) : AppendBatchResult();
  }

  // The ids of the records the filter finds.
  std::vector<std::string> Ids(const sharedos::audit::v1::AuditFilter& filter) {
    auto records = store_->Query(filter, 0, 100);
    EXPECT_TRUE(records.ok()) << records.status();
    std::vector<std::string> ids;
    if (records.ok()) {
      for (const auto& record : *records) ids.push_back(record.event().id());
    }
    return ids;
  }

  VerifyResult VerifyAll() {
    auto result = store_->Verify(std::nullopt, std::nullopt);
    EXPECT_TRUE(result.ok()) << result.status();
    if (result.ok()) return *std::move(result);
    VerifyResult failed;
    failed.ok = false;
    return failed;
  }

  std::unique_ptr<AuditStore> store_;
};

template <typename Fixture>
class AuditStoreConformanceTest : public Fixture {};

TYPED_TEST_SUITE_P(AuditStoreConformanceTest);

using ::sharedos::audit::v1::AuditFilter;
using ::sharedos::audit::v1::AuditRecord;
using ::sharedos::common::EqualsProto;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

inline constexpr char kCannotTamper[] = "this backend's storage cannot be edited behind its back";

TYPED_TEST_P(AuditStoreConformanceTest, AnEmptyLogIsAtGenesis) {
  auto head = this->store_->GetHead();
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->sequence, 0);
  EXPECT_EQ(head->hash, kGenesisHash);
  auto records = this->store_->Query(AuditFilter(), 0, 10);
  ASSERT_THAT(records, IsOk());
  EXPECT_THAT(*records, IsEmpty());
  const VerifyResult verify = this->VerifyAll();
  EXPECT_TRUE(verify.ok) << verify.detail;
  EXPECT_EQ(verify.checked, 0);
  EXPECT_EQ(verify.head_hash, kGenesisHash);
}

TYPED_TEST_P(AuditStoreConformanceTest, AppendLinksEachRecordToThePrevious) {
  AppendBatchResult result = this->AppendAll(3);
  ASSERT_EQ(result.submissions.size(), 1u);
  ASSERT_TRUE(result.submissions[0].accepted);
  EXPECT_EQ(result.head.sequence, 3);
  auto records = this->store_->Query(AuditFilter(), 0, 10);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  std::string prev = kGenesisHash;
  for (int i = 0; i < 3; ++i) {
    const auto& record = (*records)[i];
    EXPECT_EQ(record.sequence(), i + 1);
    EXPECT_EQ(record.prev_hash(), prev);
    EXPECT_EQ(record.hash(), ChainHash(prev, *CanonicalEventJson(record.event())));
    EXPECT_EQ(record.event().id(), "e" + std::to_string(i + 1));
    prev = record.hash();
  }
  EXPECT_EQ(result.head.hash, prev);
  EXPECT_TRUE(this->VerifyAll().ok);
  EXPECT_EQ(this->VerifyAll().checked, 3);
}

TYPED_TEST_P(AuditStoreConformanceTest, SequencesAreGapFreeAcrossSubmissionsAndBatches) {
  Batch first, second, third;
  first.Add(MakeEvent("a1"));
  first.Add(MakeEvent("a2"));
  second.Add(MakeEvent("b1"));
  third.Add(MakeEvent("c1"));
  third.Add(MakeEvent("c2"));
  auto result =
      this->store_->Append({first.pending, second.pending}, absl::FromUnixSeconds(1786438801));
  ASSERT_THAT(result, IsOk());
  ASSERT_EQ(result->submissions.size(), 2u);
  ASSERT_EQ(result->submissions[0].events.size(), 2u);
  EXPECT_EQ(result->submissions[0].events[0].kind, EventOutcome::Kind::kAppended);
  EXPECT_EQ(result->submissions[0].events[0].sequence, 1);
  EXPECT_EQ(result->submissions[0].events[1].sequence, 2);
  ASSERT_EQ(result->submissions[1].events.size(), 1u);
  EXPECT_EQ(result->submissions[1].events[0].sequence, 3);
  EXPECT_EQ(result->head.sequence, 3);
  result = this->store_->Append({third.pending}, absl::FromUnixSeconds(1786438802));
  ASSERT_THAT(result, IsOk());
  ASSERT_EQ(result->submissions[0].events.size(), 2u);
  EXPECT_EQ(result->submissions[0].events[0].sequence, 4);
  EXPECT_EQ(result->submissions[0].events[1].sequence, 5);
  EXPECT_EQ(result->head.sequence, 5);
  // An empty batch changes nothing.
  result = this->store_->Append({}, absl::FromUnixSeconds(1786438803));
  ASSERT_THAT(result, IsOk());
  EXPECT_THAT(result->submissions, IsEmpty());
  EXPECT_EQ(result->head.sequence, 5);

  auto records = this->store_->Query(AuditFilter(), 0, 10);
  ASSERT_THAT(records, IsOk());
  std::vector<std::string> order;
  for (const AuditRecord& record : *records) {
    EXPECT_EQ(record.sequence(), static_cast<int64_t>(order.size()) + 1);
    order.push_back(record.event().id());
  }
  EXPECT_THAT(order, ElementsAre("a1", "a2", "b1", "c1", "c2"));
}

TYPED_TEST_P(AuditStoreConformanceTest, TheHeadIsTheLastRecordOfTheChain) {
  const AppendBatchResult first = this->AppendAll(2);
  auto head = this->store_->GetHead();
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->sequence, 2);
  EXPECT_EQ(head->hash, first.head.hash);
  const AppendBatchResult second = this->AppendAll(2, /*start=*/3);
  head = this->store_->GetHead();
  ASSERT_THAT(head, IsOk());
  EXPECT_EQ(head->sequence, 4);
  EXPECT_EQ(head->hash, second.head.hash);
  auto tail = this->store_->Query(AuditFilter(), 2, 10);
  ASSERT_THAT(tail, IsOk());
  ASSERT_EQ(tail->size(), 2u);
  EXPECT_EQ((*tail)[0].prev_hash(), first.head.hash);  // record 3 links to the former head
  EXPECT_EQ((*tail)[1].hash(), head->hash);
  const VerifyResult verify = this->VerifyAll();
  EXPECT_TRUE(verify.ok) << verify.detail;
  EXPECT_EQ(verify.head_hash, head->hash);
}

TYPED_TEST_P(AuditStoreConformanceTest, RecordsKeepTheEventAndWhenItWasRecorded) {
  protocol::v1::AuditEvent event = MakeKeyedEvent("kept", "world", "trace-kept", "exec-kept");
  (*event.mutable_metadata()->mutable_fields())["note"].set_string_value("ü and \"quotes\"");
  event.set_operation_id("call-7");
  event.set_grant_id("grant-1");
  Batch batch;
  batch.Add(event);
  const absl::Time recorded_at = absl::FromUnixMicros(1786438801123456);
  ASSERT_THAT(this->store_->Append({batch.pending}, recorded_at), IsOk());
  auto records = this->store_->Query(AuditFilter(), 0, 10);
  ASSERT_THAT(records, IsOk());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_THAT((*records)[0].event(), EqualsProto(event));
  EXPECT_EQ(google::protobuf::util::TimeUtil::TimestampToMicroseconds((*records)[0].recorded_at()),
            absl::ToUnixMicros(recorded_at));
}

TYPED_TEST_P(AuditStoreConformanceTest, SameIdSameContentIsADuplicateNotASecondRecord) {
  this->AppendAll(2);
  AppendBatchResult again = this->AppendAll(1, /*start=*/2);
  ASSERT_TRUE(again.submissions[0].accepted);
  ASSERT_EQ(again.submissions[0].events.size(), 1u);
  EXPECT_EQ(again.submissions[0].events[0].kind, EventOutcome::Kind::kDuplicate);
  EXPECT_EQ(again.submissions[0].events[0].sequence, 2);
  EXPECT_EQ(again.head.sequence, 2);
}

TYPED_TEST_P(AuditStoreConformanceTest, AnIdTwiceInOneSubmissionIsStoredOnce) {
  Batch batch;
  batch.Add(MakeEvent("twice"));
  batch.Add(MakeEvent("other"));
  batch.Add(MakeEvent("twice"));
  auto result = this->store_->Append({batch.pending}, absl::FromUnixSeconds(1));
  ASSERT_THAT(result, IsOk());
  ASSERT_TRUE(result->submissions[0].accepted);
  ASSERT_EQ(result->submissions[0].events.size(), 3u);
  EXPECT_EQ(result->submissions[0].events[0].kind, EventOutcome::Kind::kAppended);
  EXPECT_EQ(result->submissions[0].events[1].sequence, 2);
  EXPECT_EQ(result->submissions[0].events[2].kind, EventOutcome::Kind::kDuplicate);
  EXPECT_EQ(result->submissions[0].events[2].sequence, 1);
  EXPECT_EQ(result->head.sequence, 2);
  EXPECT_THAT(this->Ids(AuditFilter()), ElementsAre("twice", "other"));
}

TYPED_TEST_P(AuditStoreConformanceTest, SameIdOtherContentRejectsOnlyItsSubmission) {
  this->AppendAll(1);
  Batch conflicting, fine;
  conflicting.Add(MakeEvent("new-1"));
  conflicting.Add(MakeEvent("e1", "world", "no_matching_grant"));  // e1 exists, other content
  fine.Add(MakeEvent("new-2"));
  auto result = this->store_->Append({conflicting.pending, fine.pending}, absl::FromUnixSeconds(1));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->submissions[0].accepted);
  EXPECT_EQ(result->submissions[0].conflict_index, 1);
  ASSERT_TRUE(result->submissions[1].accepted);
  EXPECT_EQ(result->submissions[1].events[0].sequence, 2);  // new-1 was rolled back
  auto records = this->store_->Query(AuditFilter(), 0, 10);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[1].event().id(), "new-2");
  EXPECT_TRUE(this->VerifyAll().ok);
}

TYPED_TEST_P(AuditStoreConformanceTest, ASingleEventConflictWritesNothingAndOthersProceed) {
  this->AppendAll(1);
  Batch conflicting, fine;
  conflicting.Add(MakeEvent("e1", "world", "no_matching_grant"));  // e1 exists, other content
  fine.Add(MakeEvent("new-2"));
  auto result = this->store_->Append({conflicting.pending, fine.pending}, absl::FromUnixSeconds(1));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->submissions[0].accepted);
  EXPECT_EQ(result->submissions[0].conflict_index, 0);
  ASSERT_TRUE(result->submissions[1].accepted);
  EXPECT_EQ(result->submissions[1].events[0].sequence, 2);
  EXPECT_EQ(result->head.sequence, 2);
  auto records = this->store_->Query(AuditFilter(), 0, 10);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].event().reason(), "allowed");
  EXPECT_EQ((*records)[1].event().id(), "new-2");
  EXPECT_TRUE(this->VerifyAll().ok);
}

TYPED_TEST_P(AuditStoreConformanceTest, QueryFiltersAndPaginatesBySequence) {
  Batch batch;
  batch.Add(MakeEvent("a1", "world-a", "allowed"));
  batch.Add(MakeEvent("b1", "world-b", "no_matching_grant"));
  batch.Add(MakeEvent("a2", "world-a", "no_matching_grant"));
  batch.Add(MakeEvent("a3", "world-a", "allowed"));
  ASSERT_TRUE(this->store_->Append({batch.pending}, absl::FromUnixSeconds(1)).ok());

  AuditFilter by_namespace;
  by_namespace.set_namespace_id("world-a");
  auto first = this->store_->Query(by_namespace, 0, 2);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].event().id(), "a1");
  EXPECT_EQ((*first)[1].event().id(), "a2");
  auto second = this->store_->Query(by_namespace, (*first)[1].sequence(), 2);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].event().id(), "a3");

  AuditFilter by_reason = by_namespace;
  by_reason.set_reason("no_matching_grant");
  auto denied = this->store_->Query(by_reason, 0, 10);
  ASSERT_TRUE(denied.ok());
  ASSERT_EQ(denied->size(), 1u);
  EXPECT_EQ((*denied)[0].event().id(), "a2");

  AuditFilter by_actor;
  by_actor.mutable_actor()->set_agent_id("mallory");
  by_actor.set_source(sharedos::protocol::v1::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(this->store_->Query(by_actor, 0, 10)->size(), 4u);
  by_actor.mutable_actor()->set_agent_id("someone-else");
  EXPECT_EQ(this->store_->Query(by_actor, 0, 10)->size(), 0u);

  AuditFilter by_time;
  by_time.mutable_from()->set_seconds(1786438800);
  by_time.mutable_to()->set_seconds(1786438801);
  EXPECT_EQ(this->store_->Query(by_time, 0, 10)->size(), 4u);
  by_time.mutable_from()->set_seconds(1786438801);
  by_time.mutable_to()->set_seconds(1786438802);
  EXPECT_EQ(this->store_->Query(by_time, 0, 10)->size(), 0u);
}

TYPED_TEST_P(AuditStoreConformanceTest, QueryFiltersByTraceExecutionTypeOutcomeAndSource) {
  Batch batch;
  batch.Add(MakeKeyedEvent("x1", "world", "trace-x", "exec-x"));
  protocol::v1::AuditEvent ended = MakeEvent("x-ended");
  ended.set_type(protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED);
  ended.set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  ended.set_trace_id("trace-x");
  ended.set_operation_id("exec-x");  // a turn.ended names its execution in operation_id
  ended.clear_source();
  ended.clear_reason();
  batch.Add(ended);
  batch.Add(MakeKeyedEvent("y1", "world", "trace-y", "exec-y"));
  ASSERT_THAT(this->store_->Append({batch.pending}, absl::FromUnixSeconds(1)), IsOk());

  AuditFilter filter;
  filter.set_trace_id("trace-x");
  EXPECT_THAT(this->Ids(filter), ElementsAre("x1", "x-ended"));
  filter.Clear();
  filter.set_execution_id("exec-x");
  EXPECT_THAT(this->Ids(filter), ElementsAre("x1", "x-ended"));
  filter.set_trace_id("trace-y");  // fields combine
  EXPECT_THAT(this->Ids(filter), IsEmpty());
  filter.Clear();
  filter.set_type(protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED);
  EXPECT_THAT(this->Ids(filter), ElementsAre("x-ended"));
  filter.Clear();
  filter.set_outcome(protocol::v1::AUDIT_OUTCOME_ALLOWED);
  EXPECT_THAT(this->Ids(filter), ElementsAre("x1", "y1"));
  filter.Clear();
  // An event without a source never matches a source.
  filter.set_source(protocol::v1::AUDIT_SOURCE_KERNEL);
  EXPECT_THAT(this->Ids(filter), ElementsAre("x1", "y1"));
  filter.set_source(protocol::v1::AUDIT_SOURCE_ENVELOPE);
  EXPECT_THAT(this->Ids(filter), IsEmpty());
  filter.Clear();
  filter.set_namespace_id("elsewhere");
  EXPECT_THAT(this->Ids(filter), IsEmpty());
}

TYPED_TEST_P(AuditStoreConformanceTest, PagesCoverTheLogOnceInOrder) {
  for (int i = 1; i <= 7; ++i) this->AppendAll(1, i);
  std::vector<int64_t> sequences;
  int64_t after = 0;
  for (int page = 0; page < 10; ++page) {
    auto records = this->store_->Query(AuditFilter(), after, 3);
    ASSERT_THAT(records, IsOk());
    EXPECT_LE(records->size(), 3u);
    if (records->empty()) break;
    for (const AuditRecord& record : *records) sequences.push_back(record.sequence());
    after = records->back().sequence();
  }
  EXPECT_THAT(sequences, ElementsAre(1, 2, 3, 4, 5, 6, 7));
  auto past = this->store_->Query(AuditFilter(), 7, 3);
  ASSERT_THAT(past, IsOk());
  EXPECT_THAT(*past, IsEmpty());
  auto none = this->store_->Query(AuditFilter(), 0, 0);
  ASSERT_THAT(none, IsOk());
  EXPECT_THAT(*none, IsEmpty());
}

TYPED_TEST_P(AuditStoreConformanceTest, NewestFirstPagesTheLogBackwards) {
  Batch batch;
  for (int i = 1; i <= 7; ++i) {
    protocol::v1::AuditEvent event =
        MakeKeyedEvent("n" + std::to_string(i), i % 2 ? "world-odd" : "world-even",
                       i % 2 ? "trace-odd" : "trace-even", "exec-" + std::to_string(i));
    if (i % 2 == 0) event.set_reason("no_matching_grant");
    batch.Add(event);
  }
  ASSERT_THAT(this->store_->Append({batch.pending}, absl::FromUnixSeconds(1)), IsOk());
  auto ids = [this](const AuditFilter& filter, int64_t before, int limit) {
    std::vector<std::string> found;
    auto records = this->store_->QueryNewestFirst(filter, before, limit);
    EXPECT_THAT(records, IsOk());
    if (records.ok()) {
      for (const AuditRecord& record : *records) found.push_back(record.event().id());
    }
    return found;
  };
  // The whole log from the head, one page.
  EXPECT_THAT(ids(AuditFilter(), kFromTheHead, 10),
              ElementsAre("n7", "n6", "n5", "n4", "n3", "n2", "n1"));
  // A filter on a lookup key (an index) and on a scanned column, each paged backwards: the next
  // page is before the last sequence returned, and the pages cover the matches once.
  AuditFilter by_trace;
  by_trace.set_trace_id("trace-odd");
  AuditFilter by_reason;
  by_reason.set_reason("no_matching_grant");
  for (const AuditFilter& filter : {by_trace, by_reason}) {
    std::vector<int64_t> sequences;
    int64_t before = kFromTheHead;
    for (int page = 0; page < 10; ++page) {
      auto records = this->store_->QueryNewestFirst(filter, before, 2);
      ASSERT_THAT(records, IsOk());
      EXPECT_LE(records->size(), 2u);
      if (records->empty()) break;
      for (const AuditRecord& record : *records) sequences.push_back(record.sequence());
      before = records->back().sequence();
    }
    if (!filter.reason().empty()) {
      EXPECT_THAT(sequences, ElementsAre(6, 4, 2));
    } else {
      EXPECT_THAT(sequences, ElementsAre(7, 5, 3, 1));
    }
  }
  // Strictly before the cursor; nothing before the first record; a limit of 0 reads nothing.
  EXPECT_THAT(ids(AuditFilter(), 4, 2), ElementsAre("n3", "n2"));
  EXPECT_THAT(ids(by_trace, 7, 1), ElementsAre("n5"));
  EXPECT_THAT(ids(AuditFilter(), 1, 10), IsEmpty());
  EXPECT_THAT(ids(AuditFilter(), kFromTheHead, 0), IsEmpty());
  AuditFilter nowhere;
  nowhere.set_trace_id("trace-none");
  EXPECT_THAT(ids(nowhere, kFromTheHead, 10), IsEmpty());
}

TYPED_TEST_P(AuditStoreConformanceTest, VerifiesASubRange) {
  this->AppendAll(6);
  auto result = this->store_->Verify(3, 5);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->ok);
  EXPECT_EQ(result->checked, 3);
}

TYPED_TEST_P(AuditStoreConformanceTest, AVerifiedRangeEndsAtTheHead) {
  this->AppendAll(3);
  auto result = this->store_->Verify(1, 5);
  ASSERT_THAT(result, IsOk());
  EXPECT_FALSE(result->ok);
  EXPECT_EQ(result->first_bad_sequence, 4);
  EXPECT_THAT(result->detail, HasSubstr("beyond the stored head"));
}

TYPED_TEST_P(AuditStoreConformanceTest, ReadsRunBesideAppends) {
  constexpr int kBatches = 40;
  // The head of the last Append that returned (a read started after it must see it all).
  std::atomic<int64_t> acknowledged{0};
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < kBatches; ++i) acknowledged = this->AppendAll(2, 2 * i + 1).head.sequence;
    done = true;
  });
  // Every read sees a prefix of the log: sequences from 1 without gaps, each linked to the one
  // before, holding every acknowledged record; the head never moves back. (A record may be in
  // the head before a lookup by key finds it — the SQLite store indexes keys after the commit —
  // so the bound is what Append acknowledged, not what GetHead shows.)
  int64_t last_head = 0;
  AuditFilter by_namespace;
  by_namespace.set_namespace_id("world");
  std::string inconsistency;
  for (int round = 0; inconsistency.empty() && (!done || round < 2); ++round) {
    auto head = this->store_->GetHead();
    const int64_t known = acknowledged;
    auto records = this->store_->Query(round % 2 ? by_namespace : AuditFilter(), 0, 1000);
    if (!head.ok() || !records.ok()) {
      inconsistency = absl::StrCat("a read failed: ", head.status().ToString(), " ",
                                   records.status().ToString());
      break;
    }
    if (head->sequence < last_head) {
      inconsistency = absl::StrCat("the head moved back from ", last_head, " to ", head->sequence);
    } else if (static_cast<int64_t>(records->size()) < known) {
      inconsistency = absl::StrCat("a query returned ", records->size(), " records after ", known,
                                   " were acknowledged");
    }
    last_head = head->sequence;
    std::string prev = kGenesisHash;
    for (size_t i = 0; inconsistency.empty() && i < records->size(); ++i) {
      if ((*records)[i].sequence() != static_cast<int64_t>(i) + 1 ||
          (*records)[i].prev_hash() != prev) {
        inconsistency = absl::StrCat("record ", i + 1, " of a query is not the chain's");
      }
      prev = (*records)[i].hash();
    }
  }
  writer.join();
  EXPECT_EQ(inconsistency, "");
  const VerifyResult verify = this->VerifyAll();
  EXPECT_TRUE(verify.ok) << verify.detail;
  EXPECT_EQ(verify.checked, 2 * kBatches);
}

// --- Tamper evidence: each edit made behind the store's back is detected. ---

TYPED_TEST_P(AuditStoreConformanceTest, DetectsAnEditedEvent) {
  AuditStoreTamperer* tamperer = this->Tamperer();
  if (tamperer == nullptr) GTEST_SKIP() << kCannotTamper;
  this->AppendAll(5);
  ASSERT_THAT(tamperer->EditEvent(3, "allowed", "denied"), IsOk());
  VerifyResult result = this->VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 3);
  EXPECT_THAT(result.detail, HasSubstr("hash"));
}

TYPED_TEST_P(AuditStoreConformanceTest, DetectsADeletedRecord) {
  AuditStoreTamperer* tamperer = this->Tamperer();
  if (tamperer == nullptr) GTEST_SKIP() << kCannotTamper;
  this->AppendAll(5);
  ASSERT_THAT(tamperer->DeleteRecords(2, 2), IsOk());
  VerifyResult result = this->VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 2);
  EXPECT_THAT(result.detail, HasSubstr("missing"));
}

TYPED_TEST_P(AuditStoreConformanceTest, DetectsReorderedRecords) {
  AuditStoreTamperer* tamperer = this->Tamperer();
  if (tamperer == nullptr) GTEST_SKIP() << kCannotTamper;
  this->AppendAll(5);
  ASSERT_THAT(tamperer->SwapRecords(2, 3), IsOk());
  VerifyResult result = this->VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 2);
}

TYPED_TEST_P(AuditStoreConformanceTest, DetectsATruncatedTail) {
  AuditStoreTamperer* tamperer = this->Tamperer();
  if (tamperer == nullptr) GTEST_SKIP() << kCannotTamper;
  this->AppendAll(5);
  ASSERT_THAT(tamperer->DeleteRecords(4, std::numeric_limits<int64_t>::max()), IsOk());
  VerifyResult result = this->VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 4);
}

TYPED_TEST_P(AuditStoreConformanceTest, DetectsARewrittenChainAgainstTheStoredHead) {
  AuditStoreTamperer* tamperer = this->Tamperer();
  if (tamperer == nullptr) GTEST_SKIP() << kCannotTamper;
  this->AppendAll(3);
  // An attacker recomputes a consistent chain for an edited last record but cannot know to
  // leave the head alone: the head no longer matches.
  auto last = this->store_->Query(AuditFilter(), 2, 1);
  ASSERT_THAT(last, IsOk());
  ASSERT_EQ(last->size(), 1u);
  std::string forged = (*last)[0].hash();
  forged[0] = forged[0] == 'f' ? '0' : 'f';
  ASSERT_THAT(tamperer->SetHash(3, forged), IsOk());
  VerifyResult result = this->VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 3);
}

TYPED_TEST_P(AuditStoreConformanceTest, DetectsRecordsAppendedBehindTheChain) {
  AuditStoreTamperer* tamperer = this->Tamperer();
  if (tamperer == nullptr) GTEST_SKIP() << kCannotTamper;
  this->AppendAll(2);
  ASSERT_THAT(tamperer->CopyRecord(2, 7, "forged"), IsOk());
  VerifyResult result = this->VerifyAll();
  EXPECT_FALSE(result.ok);
  EXPECT_EQ(result.first_bad_sequence, 7);
}

REGISTER_TYPED_TEST_SUITE_P(
    AuditStoreConformanceTest, AnEmptyLogIsAtGenesis, AppendLinksEachRecordToThePrevious,
    SequencesAreGapFreeAcrossSubmissionsAndBatches, TheHeadIsTheLastRecordOfTheChain,
    RecordsKeepTheEventAndWhenItWasRecorded, SameIdSameContentIsADuplicateNotASecondRecord,
    AnIdTwiceInOneSubmissionIsStoredOnce, SameIdOtherContentRejectsOnlyItsSubmission,
    ASingleEventConflictWritesNothingAndOthersProceed, QueryFiltersAndPaginatesBySequence,
    QueryFiltersByTraceExecutionTypeOutcomeAndSource, PagesCoverTheLogOnceInOrder,
    NewestFirstPagesTheLogBackwards, VerifiesASubRange, AVerifiedRangeEndsAtTheHead,
    ReadsRunBesideAppends, DetectsAnEditedEvent, DetectsADeletedRecord, DetectsReorderedRecords,
    DetectsATruncatedTail, DetectsARewrittenChainAgainstTheStoredHead,
    DetectsRecordsAppendedBehindTheChain);

}  // namespace sharedos::audit::storage::testing

#endif  // SHAREDOS_AUDIT_SVC_STORAGE_AUDIT_STORE_CONFORMANCE_H_
