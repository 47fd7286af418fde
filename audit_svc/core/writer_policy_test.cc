#include "audit_svc/core/writer_policy.h"

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::audit::core {
namespace {

using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;

v1::LogEntry Event(protocol::v1::AuditEventType type) {
  v1::LogEntry entry;
  entry.mutable_event()->set_type(type);
  return entry;
}

v1::LogEntry ControlPlane() {
  v1::LogEntry entry;
  entry.mutable_control_plane()->set_type(v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  return entry;
}

TEST(WriterPolicyTest, EachWriterWritesOnlyItsOwnRecordTypes) {
  EXPECT_TRUE(CheckWriter("service:authorizer",
                          Event(protocol::v1::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED), "events[0]")
                  .ok());
  EXPECT_TRUE(
      CheckWriter("service:envelope", Event(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED), "e")
          .ok());
  EXPECT_TRUE(CheckWriter("service:grantstore", ControlPlane(), "e").ok());
  // The envelope cannot record that a grant was issued, nor the authority a turn resolved.
  EXPECT_THAT(CheckWriter("service:envelope", ControlPlane(), "entries[0]"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("entries[0]")));
  EXPECT_THAT(CheckWriter("service:envelope",
                          Event(protocol::v1::AUDIT_EVENT_TYPE_AUTHORITY_RESOLVED), "events[3]"),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("events[3].type")));
  // The grant store writes no tool call; an unknown writer nothing.
  EXPECT_THAT(
      CheckWriter("service:grantstore", Event(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED), "e"),
      StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(
      CheckWriter("service:sharedosd", Event(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED), "e"),
      StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST(WriterPolicyTest, TheStampReplacesWhateverTheWriterSent) {
  v1::LogEntry event = Event(protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  (*event.mutable_event()->mutable_metadata()->mutable_fields())["writer"].set_string_value(
      "service:grantstore");
  ASSERT_TRUE(StampWriter("service:envelope", event).ok());
  EXPECT_EQ(event.event().metadata().fields().at("writer").string_value(), "service:envelope");

  v1::LogEntry control = ControlPlane();
  control.mutable_control_plane()->mutable_writer()->set_service_id("envelope");
  ASSERT_TRUE(StampWriter("service:grantstore", control).ok());
  EXPECT_EQ(control.control_plane().writer().service_id(), "grantstore");
}

}  // namespace
}  // namespace sharedos::audit::core
