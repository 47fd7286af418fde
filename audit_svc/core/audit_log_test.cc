#include "audit_svc/core/audit_log.h"

#include <atomic>
#include <cstdlib>
#include <thread>

#include "audit_svc/storage/sqlite_audit_store.h"
#include "common/status/status_matchers.h"
#include "common/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::audit::v1::AppendRequest;
using ::sharedos::audit::v1::QueryRequest;
using ::sharedos::audit::v1::VerifyRequest;
using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;
using ::testing::HasSubstr;

// The writers: the envelope writes tool.invoked (MakeEvent), the grant store control-plane records.
constexpr char kWriter[] = "service:envelope";
constexpr char kGrantstoreWriter[] = "service:grantstore";

AuditEvent MakeEvent(const std::string& id, const std::string& ns = "world") {
  AuditEvent event;
  event.set_version("1");
  event.set_id(id);
  event.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_DENIED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("trace-1");
  event.set_namespace_id(ns);
  event.mutable_actor()->set_agent_id("mallory");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("probe");
  event.set_reason("tool_unavailable");
  event.set_source(sharedos::protocol::v1::AUDIT_SOURCE_ENVELOPE);
  event.set_cause("not_offered");
  return event;
}

sharedos::audit::v1::ControlPlaneEvent MakeControlPlane(const std::string& id) {
  sharedos::audit::v1::ControlPlaneEvent event;
  event.set_id(id);
  event.set_type(sharedos::audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  event.set_outcome(sharedos::protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_trace_id("grantstore-r1");
  event.set_namespace_id("world");
  event.mutable_actor()->set_service_id("ops");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("sharedos.control-plane");
  event.set_grant_id("g1");
  return event;
}

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                             ".db";
    std::remove(path.c_str());
    auto store = storage::SqliteAuditStore::Open(path, {});
    ASSERT_TRUE(store.ok()) << store.status();
    log_ = std::make_unique<AuditLog>(*std::move(store), clock_, AuditLog::Options{});
  }

  AppendRequest Request(std::initializer_list<AuditEvent> events) {
    AppendRequest request;
    for (const AuditEvent& e : events) *request.add_events() = e;
    return request;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  std::unique_ptr<AuditLog> log_;
};

TEST_F(AuditLogTest, AppendAcknowledgesWithTheNewHead) {
  auto response = log_->Append(Request({MakeEvent("e1"), MakeEvent("e2")}), kWriter);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->appended(), 2);
  EXPECT_EQ(response->duplicates(), 0);
  EXPECT_EQ(response->head_sequence(), 2);
  EXPECT_EQ(response->head_hash().size(), 64u);
  EXPECT_EQ(log_->HeadSequence(), 2);
}

// AppendEvent is Append of a one-event request: same record, same checks, same duplicate rule.
TEST_F(AuditLogTest, AppendEventIsAppendOfOneEvent) {
  auto appended = log_->AppendEvent(MakeEvent("e1"), kWriter);
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->appended(), 1);
  EXPECT_EQ(appended->head_sequence(), 1);
  auto again = log_->AppendEvent(MakeEvent("e1"), kWriter);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->appended(), 0);
  EXPECT_EQ(again->duplicates(), 1);
  AuditEvent changed = MakeEvent("e1");
  changed.set_purpose("another");
  EXPECT_THAT(log_->AppendEvent(changed, kWriter), StatusIs(absl::StatusCode::kFailedPrecondition));
  AuditEvent unversioned = MakeEvent("e2");
  unversioned.clear_version();
  EXPECT_THAT(log_->AppendEvent(unversioned, kWriter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("events[0]")));
  EXPECT_EQ(log_->HeadSequence(), 1);
}

TEST_F(AuditLogTest, ARetriedAppendNeverDoublesARecord) {
  ASSERT_TRUE(log_->Append(Request({MakeEvent("e1")}), kWriter).ok());
  auto retried = log_->Append(Request({MakeEvent("e1"), MakeEvent("e2")}), kWriter);
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(retried->appended(), 1);
  EXPECT_EQ(retried->duplicates(), 1);
  EXPECT_EQ(retried->head_sequence(), 2);
}

TEST_F(AuditLogTest, AnIdReusedForOtherContentIsRefusedWhole) {
  ASSERT_TRUE(log_->Append(Request({MakeEvent("e1")}), kWriter).ok());
  AuditEvent changed = MakeEvent("e1");
  changed.set_reason("no_matching_grant");
  EXPECT_THAT(log_->Append(Request({MakeEvent("e2"), changed}), kWriter),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("events[1].id: already recorded with different content")));
  EXPECT_EQ(log_->HeadSequence(), 1);  // e2 was not appended either
}

TEST_F(AuditLogTest, RejectsInvalidEventsNamingTheField) {
  AuditEvent bad = MakeEvent("e1");
  bad.set_version("2");
  EXPECT_THAT(log_->Append(Request({MakeEvent("e0"), bad}), kWriter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("events[1].version")));
  AuditEvent no_type = MakeEvent("e1");
  no_type.clear_type();
  EXPECT_THAT(log_->Append(Request({no_type}), kWriter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("events[0].type")));
  EXPECT_THAT(log_->Append(Request({MakeEvent("same"), MakeEvent("same")}), kWriter),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("events[1].id: repeated in this request")));
  EXPECT_THAT(log_->Append(AppendRequest(), kWriter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("events: empty")));
  EXPECT_EQ(log_->HeadSequence(), 0);
}

TEST_F(AuditLogTest, RefusesRedactedDataAndStoresNothingOfIt) {
  AuditEvent leaky = MakeEvent("e1");
  (*leaky.mutable_metadata()->mutable_fields())["arguments"].set_string_value("cat /etc/passwd");
  EXPECT_THAT(
      log_->Append(Request({MakeEvent("e0"), leaky}), kWriter),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("events[1].metadata.arguments")));
  EXPECT_EQ(log_->HeadSequence(), 0);
}

TEST_F(AuditLogTest, QueryPagesWithTokensBoundToTheirFilter) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(log_->Append(Request({MakeEvent("a" + std::to_string(i), "world-a"),
                                      MakeEvent("b" + std::to_string(i), "world-b")}),
                             kWriter)
                    .ok());
  }
  QueryRequest request;
  request.mutable_filter()->set_namespace_id("world-a");
  request.set_limit(2);
  std::vector<std::string> ids;
  std::string token;
  do {
    request.set_page_token(token);
    auto page = log_->Query(request);
    ASSERT_TRUE(page.ok()) << page.status();
    for (const auto& record : page->records()) ids.push_back(record.event().id());
    token = page->next_page_token();
  } while (!token.empty());
  EXPECT_EQ(ids, (std::vector<std::string>{"a0", "a1", "a2", "a3", "a4"}));

  // A token issued for one filter is refused for another.
  request.set_page_token("");
  auto first = log_->Query(request);
  ASSERT_TRUE(first.ok());
  QueryRequest other;
  other.mutable_filter()->set_namespace_id("world-b");
  other.set_page_token(first->next_page_token());
  EXPECT_THAT(log_->Query(other), StatusIs(absl::StatusCode::kInvalidArgument,
                                           HasSubstr("page_token: issued for a different filter")));
  other.set_page_token("!!!");
  EXPECT_THAT(log_->Query(other),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("page_token: malformed")));
}

TEST_F(AuditLogTest, QueryRejectsBadFiltersAndLimits) {
  QueryRequest request;
  request.set_limit(1001);
  EXPECT_THAT(log_->Query(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit")));
  request.set_limit(10);
  request.mutable_filter()->set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_UNSPECIFIED);
  EXPECT_THAT(log_->Query(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("filter.type")));
  request.mutable_filter()->clear_type();
  request.mutable_filter()->mutable_from()->set_seconds(10);
  request.mutable_filter()->mutable_to()->set_seconds(5);
  EXPECT_THAT(log_->Query(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("filter.from")));
}

TEST_F(AuditLogTest, ConcurrentWritersAreGroupCommittedIntoOneChain) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        AppendRequest request;
        *request.add_events() = MakeEvent("t" + std::to_string(t) + "-" + std::to_string(i));
        if (!log_->Append(request, kWriter).ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(log_->HeadSequence(), kThreads * kPerThread);
  auto verify = log_->Verify(VerifyRequest());
  ASSERT_TRUE(verify.ok());
  EXPECT_TRUE(verify->ok()) << verify->detail();
  EXPECT_EQ(verify->checked(), kThreads * kPerThread);
}

// A lone caller commits on its own thread, concurrent ones through the writer: both paths mixed
// (one steady writer, bursts of others joining and leaving) still make one gapless chain.
TEST_F(AuditLogTest, LoneAndGroupedCommitsInterleaveIntoOneChain) {
  int total = 0;
  std::atomic<int> failures{0};
  for (int burst = 0; burst < 5; ++burst) {
    for (int i = 0; i < 20; ++i, ++total) {  // alone: committed inline
      if (!log_->Append(Request({MakeEvent(absl::StrCat("lone-", burst, "-", i))}), kWriter).ok()) {
        ++failures;
      }
    }
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, burst, t] {
        for (int i = 0; i < 10; ++i) {
          if (!log_->Append(Request({MakeEvent(absl::StrCat("b", burst, "-", t, "-", i))}), kWriter)
                   .ok()) {
            ++failures;
          }
        }
      });
    }
    for (auto& thread : threads) thread.join();
    total += 40;
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(log_->HeadSequence(), total);
  auto verify = log_->Verify(VerifyRequest());
  ASSERT_TRUE(verify.ok());
  EXPECT_TRUE(verify->ok()) << verify->detail();
  EXPECT_EQ(verify->checked(), total);
}

TEST_F(AuditLogTest, VerifyRejectsABadRange) {
  VerifyRequest request;
  request.set_from_sequence(0);
  EXPECT_THAT(log_->Verify(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("from_sequence")));
  request.set_from_sequence(5);
  request.set_to_sequence(2);
  EXPECT_THAT(log_->Verify(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("after to_sequence")));
}

// T4 (docs/adr/0014): every record carries its writer inside the hashed record, whatever the
// writer claimed; a writer never appends a record type it does not produce, and nothing of such a
// request is written.
TEST_F(AuditLogTest, EveryRecordIsStampedWithItsWriterWhoWritesOnlyItsOwnTypes) {
  AuditEvent claimed = MakeEvent("e1");
  (*claimed.mutable_metadata()->mutable_fields())["writer"].set_string_value("service:grantstore");
  ASSERT_THAT(log_->AppendEvent(claimed, kWriter), IsOk());
  AppendRequest forged;
  *forged.add_entries()->mutable_event() = MakeEvent("e2");
  *forged.add_entries()->mutable_control_plane() = MakeControlPlane("c1");
  EXPECT_THAT(log_->Append(forged, kWriter),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("entries[1]")));
  EXPECT_THAT(log_->AppendEvent(MakeEvent("e3"), kGrantstoreWriter),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("service:grantstore")));
  ASSERT_THAT(log_->AppendControlPlane(MakeControlPlane("c2"), kGrantstoreWriter), IsOk());
  auto records = log_->Query(QueryRequest());
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->records_size(), 2);
  EXPECT_EQ(records->records(0).event().metadata().fields().at("writer").string_value(),
            "service:envelope");
  EXPECT_EQ(records->records(1).control_plane().writer().service_id(), "grantstore");
  auto verified = log_->Verify(VerifyRequest());
  ASSERT_TRUE(verified.ok());
  EXPECT_TRUE(verified->ok()) << verified->detail();
}

TEST_F(AuditLogTest, WaitForHeadAfterReturnsOnceTheHeadMoves) {
  std::thread writer(
      [this] { ASSERT_TRUE(log_->Append(Request({MakeEvent("late")}), kWriter).ok()); });
  const int64_t head = log_->WaitForHeadAfter(0, absl::Seconds(10));
  writer.join();
  EXPECT_EQ(head, 1);
}

// Control-plane records (docs/adr/0008): in the same chain, in order with "1" events, idempotent
// on id across both kinds, verified, and queried apart from the "1" types.
TEST_F(AuditLogTest, ControlPlaneRecordsShareTheChainButNotProtocol1) {
  ASSERT_TRUE(log_->Append(Request({MakeEvent("e1")}), kWriter).ok());
  AppendRequest control;
  *control.add_entries()->mutable_control_plane() = MakeControlPlane("c1");
  auto appended = log_->Append(control, kGrantstoreWriter);
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->appended(), 1);
  AppendRequest event;
  *event.add_entries()->mutable_event() = MakeEvent("e2");
  ASSERT_TRUE(log_->Append(event, kWriter).ok());
  ASSERT_TRUE(log_->AppendControlPlane(MakeControlPlane("c2"), kGrantstoreWriter).ok());
  // A retry is a duplicate; the same id with other content, of either kind, is refused.
  auto again = log_->AppendControlPlane(MakeControlPlane("c1"), kGrantstoreWriter);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->duplicates(), 1);
  EXPECT_THAT(log_->AppendEvent(MakeEvent("c1"), kWriter),
              StatusIs(absl::StatusCode::kFailedPrecondition));

  QueryRequest all;
  auto records = log_->Query(all);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->records_size(), 4);
  EXPECT_EQ(records->records(0).event().id(), "e1");
  EXPECT_EQ(records->records(1).control_plane().id(), "c1");
  EXPECT_FALSE(records->records(1).has_event());
  EXPECT_EQ(records->records(2).event().id(), "e2");
  EXPECT_EQ(records->records(3).control_plane().id(), "c2");

  QueryRequest issued;
  issued.mutable_filter()->set_control_plane_type(
      sharedos::audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  auto only_issued = log_->Query(issued);
  ASSERT_TRUE(only_issued.ok());
  EXPECT_EQ(only_issued->records_size(), 2);
  QueryRequest invoked;
  invoked.mutable_filter()->set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  auto only_invoked = log_->Query(invoked);
  ASSERT_TRUE(only_invoked.ok());
  EXPECT_EQ(only_invoked->records_size(), 2);

  auto verified = log_->Verify(VerifyRequest());
  ASSERT_TRUE(verified.ok());
  EXPECT_TRUE(verified->ok()) << verified->detail();
  EXPECT_EQ(verified->checked(), 4);
}

TEST_F(AuditLogTest, ControlPlaneRecordsAreValidatedAndGuarded) {
  auto no_actor = MakeControlPlane("c1");
  no_actor.clear_actor();
  AppendRequest request;
  *request.add_entries()->mutable_control_plane() = no_actor;
  EXPECT_THAT(
      log_->Append(request, kGrantstoreWriter),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entries[0].control_plane.actor")));
  auto leaky = MakeControlPlane("c2");
  (*leaky.mutable_metadata()->mutable_fields())["apiKey"].set_string_value("s3cret");
  EXPECT_THAT(log_->AppendControlPlane(leaky, kGrantstoreWriter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("apiKey")));
  AppendRequest empty_entry;
  empty_entry.add_entries();
  EXPECT_THAT(log_->Append(empty_entry, kWriter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("entries[0]")));
  // A retired protocol "1" type (12 was grant.issued) is not a "1" event any more.
  AuditEvent retired = MakeEvent("e1");
  retired.set_type(static_cast<sharedos::protocol::v1::AuditEventType>(12));
  EXPECT_THAT(log_->AppendEvent(retired, kWriter),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("type")));
  auto head = log_->Query(QueryRequest());
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->records_size(), 0);
}

TEST_F(AuditLogTest, FiltersNeverMixTheKinds) {
  QueryRequest both;
  both.mutable_filter()->set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  both.mutable_filter()->set_control_plane_type(
      sharedos::audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  EXPECT_THAT(log_->Query(both),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("filter.control_plane_type")));
  QueryRequest retired;  // 12 would hit a control-plane record's indexed column
  retired.mutable_filter()->set_type(static_cast<sharedos::protocol::v1::AuditEventType>(12));
  EXPECT_THAT(log_->Query(retired),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("filter.type")));
}

}  // namespace
}  // namespace sharedos::audit::core
