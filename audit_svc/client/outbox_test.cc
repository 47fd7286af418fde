#include "audit_svc/client/outbox.h"

#include <cstdlib>

#include "absl/time/clock.h"
#include "common/metrics/metrics.h"
#include "common/metrics/sinks.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::client {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;
namespace v1 = ::sharedos::audit::v1;
using ::testing::HasSubstr;

std::string Path() {
  std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".outbox";
  std::remove(path.c_str());
  return path;
}

AuditEvent Event(const std::string& id) {
  AuditEvent event;
  event.set_id(id);
  return event;
}

std::vector<std::string> Ids(Outbox& outbox, int limit) {
  std::vector<std::string> ids;
  auto events = outbox.Peek(limit);
  EXPECT_TRUE(events.ok()) << events.status();
  for (const auto& [position, event] : *events) ids.push_back(event.event().id());
  return ids;
}

TEST(OutboxTest, KeepsOrderAndRemovesAcknowledgedEvents) {
  auto outbox = Outbox::Open(Path(), 10);
  ASSERT_TRUE(outbox.ok()) << outbox.status();
  for (const char* id : {"a", "b", "c"}) ASSERT_THAT((*outbox)->Put(Event(id)), IsOk());
  EXPECT_EQ(Ids(**outbox, 10), (std::vector<std::string>{"a", "b", "c"}));
  auto first_two = (*outbox)->Peek(2);
  ASSERT_TRUE(first_two.ok());
  ASSERT_THAT((*outbox)->RemoveThrough((*first_two)[1].first), IsOk());
  EXPECT_EQ(Ids(**outbox, 10), (std::vector<std::string>{"c"}));
  EXPECT_EQ(*(*outbox)->Size(), 1);
}

TEST(OutboxTest, WithoutFsyncItStillSurvivesTheProcessClosingIt) {
  const std::string path = Path();
  {
    auto outbox = Outbox::Open(path, 10, /*fsync=*/false);
    ASSERT_TRUE(outbox.ok());
    ASSERT_THAT((*outbox)->Put(Event("kept")), IsOk());
  }
  auto reopened = Outbox::Open(path, 10);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(Ids(**reopened, 10), (std::vector<std::string>{"kept"}));
}

TEST(OutboxTest, SurvivesReopening) {
  const std::string path = Path();
  {
    auto outbox = Outbox::Open(path, 10);
    ASSERT_TRUE(outbox.ok());
    ASSERT_THAT((*outbox)->Put(Event("kept")), IsOk());
  }
  auto reopened = Outbox::Open(path, 10);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(*(*reopened)->Size(), 1);
  EXPECT_EQ(Ids(**reopened, 10), (std::vector<std::string>{"kept"}));
}

TEST(OutboxTest, AFullOutboxRefusesWithUnavailable) {
  auto outbox = Outbox::Open(Path(), 2);
  ASSERT_TRUE(outbox.ok());
  ASSERT_THAT((*outbox)->Put(Event("a")), IsOk());
  ASSERT_THAT((*outbox)->Put(Event("b")), IsOk());
  EXPECT_THAT((*outbox)->Put(Event("c")),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("outbox full")));
  EXPECT_EQ(*(*outbox)->Size(), 2);
}

TEST(OutboxTest, DeadLettersLeaveTheQueue) {
  auto outbox = Outbox::Open(Path(), 10);
  ASSERT_TRUE(outbox.ok());
  ASSERT_THAT((*outbox)->Put(Event("poison")), IsOk());
  ASSERT_THAT((*outbox)->Put(Event("fine")), IsOk());
  auto events = (*outbox)->Peek(1);
  ASSERT_TRUE(events.ok());
  ASSERT_THAT((*outbox)->DeadLetter((*events)[0].first, "refused"), IsOk());
  EXPECT_EQ(Ids(**outbox, 10), (std::vector<std::string>{"fine"}));
  EXPECT_EQ(*(*outbox)->DeadLetterSize(), 1);
  EXPECT_EQ(*(*outbox)->Size(), 1);
}

TEST(OutboxTest, RejectsANonPositiveBound) {
  EXPECT_THAT(Outbox::Open(Path(), 0).status(), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(OutboxTest, KeepsBothKindsOfRecordInOrderAcrossAReopen) {
  const std::string path = Path();
  {
    auto outbox = Outbox::Open(path, 10);
    ASSERT_TRUE(outbox.ok());
    v1::LogEntry event, control_plane;
    *event.mutable_event() = Event("e1");
    control_plane.mutable_control_plane()->set_id("c1");
    ASSERT_THAT((*outbox)->PutAll({&event, &control_plane}), IsOk());
    ASSERT_THAT((*outbox)->Put(Event("e2")), IsOk());
  }
  auto reopened = Outbox::Open(path, 10);
  ASSERT_TRUE(reopened.ok());
  auto entries = (*reopened)->Peek(10);
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[0].second.event().id(), "e1");
  EXPECT_EQ((*entries)[1].second.control_plane().id(), "c1");
  EXPECT_FALSE((*entries)[1].second.has_event());
  EXPECT_EQ((*entries)[2].second.event().id(), "e2");
}

TEST(OutboxTest, GaugesFollowDepthAgeAndRecordsMovedAside) {
  common::metrics::Metrics metrics;
  auto outbox = Outbox::Open(Path(), 10, /*fsync=*/false,
                             common::metrics::OutboxMetrics(&metrics, "envelope"));
  ASSERT_TRUE(outbox.ok()) << outbox.status();
  EXPECT_THAT(metrics.Serialize(), HasSubstr("sharedos_audit_outbox_depth{writer=\"envelope\"} 0"));
  for (const char* id : {"a", "b", "c"}) ASSERT_THAT((*outbox)->Put(Event(id)), IsOk());
  EXPECT_THAT(metrics.Serialize(), HasSubstr("sharedos_audit_outbox_depth{writer=\"envelope\"} 3"));

  absl::SleepFor(absl::Milliseconds(1100));
  (*outbox)->ReportGauges();
  auto age = (*outbox)->OldestAge();
  ASSERT_TRUE(age.ok()) << age.status();
  EXPECT_GE(*age, absl::Seconds(1));
  EXPECT_LT(*age, absl::Seconds(30));
  EXPECT_THAT(metrics.Serialize(),
              HasSubstr("sharedos_audit_outbox_oldest_age_seconds{writer=\"envelope\"} 1."));

  auto first = (*outbox)->Peek(1);
  ASSERT_TRUE(first.ok());
  ASSERT_THAT((*outbox)->DeadLetter(first->front().first, "refused"), IsOk());
  EXPECT_THAT(metrics.Serialize(),
              HasSubstr("sharedos_audit_undeliverable_total{writer=\"envelope\"} 1"));
  EXPECT_THAT(metrics.Serialize(), HasSubstr("sharedos_audit_outbox_depth{writer=\"envelope\"} 2"));

  auto rest = (*outbox)->Peek(10);
  ASSERT_TRUE(rest.ok());
  ASSERT_THAT((*outbox)->RemoveThrough(rest->back().first), IsOk());
  const std::string text = metrics.Serialize();
  EXPECT_THAT(text, HasSubstr("sharedos_audit_outbox_depth{writer=\"envelope\"} 0"));
  EXPECT_THAT(text, HasSubstr("sharedos_audit_outbox_oldest_age_seconds{writer=\"envelope\"} 0"));
}

TEST(OutboxTest, RecordsOfAnEarlierStartAreAgedFromTheReopen) {
  const std::string path = Path();
  {
    auto outbox = Outbox::Open(path, 10);
    ASSERT_TRUE(outbox.ok()) << outbox.status();
    ASSERT_THAT((*outbox)->Put(Event("a")), IsOk());
  }
  common::metrics::Metrics metrics;
  auto reopened =
      Outbox::Open(path, 10, true, common::metrics::OutboxMetrics(&metrics, "grantstore"));
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  // Reported at open: the depth it found.
  EXPECT_THAT(metrics.Serialize(),
              HasSubstr("sharedos_audit_outbox_depth{writer=\"grantstore\"} 1"));
  auto age = (*reopened)->OldestAge();
  ASSERT_TRUE(age.ok());
  EXPECT_LT(*age, absl::Seconds(30));
}

}  // namespace
}  // namespace sharedos::audit::client
