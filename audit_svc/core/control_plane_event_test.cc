#include "audit_svc/core/control_plane_event.h"

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::core {
namespace {

namespace v1 = ::sharedos::audit::v1;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

v1::ControlPlaneEvent Valid() {
  v1::ControlPlaneEvent event;
  event.set_id("cp-1");
  event.set_type(v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1700000000);
  event.set_trace_id("grantstore-r1");
  event.set_namespace_id("ns");
  event.mutable_actor()->set_service_id("admin");
  event.mutable_authority()->set_human_user_id("alice");
  event.mutable_owner()->set_human_user_id("alice");
  event.set_purpose("sharedos.control-plane");
  event.set_grant_id("g-1");
  return event;
}

TEST(ControlPlaneEventTest, AValidRecordPasses) {
  v1::ControlPlaneEvent event = Valid();
  EXPECT_OK(ValidateControlPlaneEvent(&event));
}

TEST(ControlPlaneEventTest, EachRuleNamesItsField) {
  struct Case {
    void (*mutate)(v1::ControlPlaneEvent&);
    const char* field;
  };
  const Case cases[] = {
      {[](v1::ControlPlaneEvent& e) { e.clear_id(); }, "control_plane.id"},
      {[](v1::ControlPlaneEvent& e) { e.set_type(v1::CONTROL_PLANE_EVENT_TYPE_UNSPECIFIED); },
       "control_plane.type"},
      {[](v1::ControlPlaneEvent& e) { e.set_type(static_cast<v1::ControlPlaneEventType>(99)); },
       "control_plane.type"},
      {[](v1::ControlPlaneEvent& e) { e.set_outcome(protocol::v1::AUDIT_OUTCOME_UNSPECIFIED); },
       "control_plane.outcome"},
      {[](v1::ControlPlaneEvent& e) { e.clear_at(); }, "control_plane.at"},
      {[](v1::ControlPlaneEvent& e) { e.clear_namespace_id(); }, "control_plane.namespace_id"},
      {[](v1::ControlPlaneEvent& e) { e.clear_actor(); }, "control_plane.actor"},
      {[](v1::ControlPlaneEvent& e) { e.clear_owner(); }, "control_plane.owner"},
      {[](v1::ControlPlaneEvent& e) { e.clear_purpose(); }, "control_plane.purpose"},
      {[](v1::ControlPlaneEvent& e) { e.set_grant_id("  "); }, "control_plane.grant_id"},
      {[](v1::ControlPlaneEvent& e) { e.mutable_at()->set_nanos(-1); }, "control_plane.at"},
  };
  for (const Case& c : cases) {
    v1::ControlPlaneEvent event = Valid();
    c.mutate(event);
    EXPECT_THAT(ValidateControlPlaneEvent(&event),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.field)))
        << c.field;
  }
}

TEST(ControlPlaneEventTest, UnknownFieldsAreRefused) {
  v1::ControlPlaneEvent event = Valid();
  event.GetReflection()->MutableUnknownFields(&event)->AddVarint(99, 1);
  EXPECT_THAT(ValidateControlPlaneEvent(&event),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown field 99")));
}

TEST(ControlPlaneEventTest, TypeNamesRoundTrip) {
  for (int i = 1; i <= 6; ++i) {
    const auto type = static_cast<v1::ControlPlaneEventType>(i);
    const absl::string_view name = ControlPlaneEventTypeName(type);
    ASSERT_FALSE(name.empty()) << i;
    EXPECT_EQ(ParseControlPlaneEventType(name), type);
  }
  EXPECT_EQ(ControlPlaneEventTypeName(v1::CONTROL_PLANE_EVENT_TYPE_ESCALATION_RESOLVED),
            "escalation.resolved");
  EXPECT_EQ(ParseControlPlaneEventType("tool.invoked"), std::nullopt);
  EXPECT_EQ(ControlPlaneEventTypeName(v1::CONTROL_PLANE_EVENT_TYPE_UNSPECIFIED), "");
}

}  // namespace
}  // namespace sharedos::audit::core
