#include "grantstore_svc/client/operator_names.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::grantstore::client {
namespace {

TEST(AddressTest, ParsesEveryKind) {
  auto human = ParseAddress("human:alice");
  ASSERT_TRUE(human.ok()) << human.status();
  EXPECT_EQ(human->human_user_id(), "alice");
  EXPECT_EQ(ParseAddress("agent:a-1")->agent_id(), "a-1");
  EXPECT_EQ(ParseAddress("group:g")->group_conversation_id(), "g");
  EXPECT_EQ(ParseAddress("service:s")->service_id(), "s");
  // Only the first colon separates the kind.
  EXPECT_EQ(ParseAddress("agent:x:y")->agent_id(), "x:y");
}

TEST(AddressTest, RefusesMalformedAddresses) {
  for (const char* bad : {"", "alice", "human:", ":alice", "robot:r", "Human:alice"}) {
    auto parsed = ParseAddress(bad);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(AddressTest, FormatsRoundTrip) {
  for (const char* text : {"human:alice", "agent:a", "group:g", "service:s"}) {
    EXPECT_EQ(FormatAddress(*ParseAddress(text)), text);
  }
  EXPECT_EQ(FormatAddress(protocol::v1::Address()), "-");
}

TEST(NamesTest, ARecordTypeSetsTheFilterOfItsKind) {
  audit::v1::AuditFilter control_plane;
  EXPECT_EQ(*ParseRecordType("grant.revoked", control_plane),
            audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED);
  EXPECT_EQ(control_plane.control_plane_type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED);
  EXPECT_FALSE(control_plane.has_type());
  audit::v1::AuditFilter data_plane;
  ASSERT_TRUE(ParseRecordType("tool.invoked", data_plane).ok());
  EXPECT_EQ(data_plane.type(), protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  EXPECT_FALSE(data_plane.has_control_plane_type());
  audit::v1::AuditFilter neither;
  EXPECT_FALSE(ParseRecordType("grant.exploded", neither).ok());
  EXPECT_EQ(ControlPlaneEventTypeName(audit::v1::CONTROL_PLANE_EVENT_TYPE_HOST_POLICY_UPDATED),
            "host_policy.updated");
}

TEST(NamesTest, MapsAuditEventTypeNamesBothWays) {
  EXPECT_EQ(*ParseAuditEventType("tool.invoked"), protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  // Control-plane records are not protocol "1" events (docs/adr/0008).
  EXPECT_FALSE(ParseAuditEventType("grant.issued").ok());
  EXPECT_EQ(*ParseAuditEventType("tool.namespace.selection.updated"),
            protocol::v1::AUDIT_EVENT_TYPE_TOOL_NAMESPACE_SELECTION_UPDATED);
  EXPECT_EQ(AuditEventTypeName(protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED), "turn.ended");
  EXPECT_EQ(AuditEventTypeName(protocol::v1::AUDIT_EVENT_TYPE_UNSPECIFIED), "unspecified");
  // Every named enum value round-trips.
  const auto* descriptor = protocol::v1::AuditEventType_descriptor();
  for (int i = 0; i < descriptor->value_count(); ++i) {
    const auto type = static_cast<protocol::v1::AuditEventType>(descriptor->value(i)->number());
    if (type == protocol::v1::AUDIT_EVENT_TYPE_UNSPECIFIED) continue;
    auto parsed = ParseAuditEventType(AuditEventTypeName(type));
    ASSERT_TRUE(parsed.ok()) << descriptor->value(i)->name();
    EXPECT_EQ(*parsed, type);
  }
}

TEST(NamesTest, RefusesUnknownNames) {
  auto type = ParseAuditEventType("TOOL_INVOKED");
  EXPECT_EQ(type.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(type.status().message()), ::testing::HasSubstr("tool.invoked"));
  EXPECT_FALSE(ParseAuditSource("host").ok());
  EXPECT_FALSE(ParseEscalationStatus("open").ok());
  EXPECT_FALSE(ParseAuditOutcome("ok").ok());
}

TEST(NamesTest, MapsSourcesStatusesAndOutcomes) {
  EXPECT_EQ(*ParseAuditSource("kernel"), protocol::v1::AUDIT_SOURCE_KERNEL);
  EXPECT_EQ(*ParseAuditSource("envelope"), protocol::v1::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(AuditSourceName(protocol::v1::AUDIT_SOURCE_KERNEL), "kernel");
  EXPECT_EQ(AuditSourceName(protocol::v1::AUDIT_SOURCE_ENVELOPE), "envelope");
  EXPECT_EQ(AuditSourceName(protocol::v1::AUDIT_SOURCE_UNSPECIFIED), "unspecified");
  EXPECT_EQ(*ParseEscalationStatus("approved"), grantstore::v1::ESCALATION_RECORD_STATUS_APPROVED);
  EXPECT_EQ(EscalationStatusName(grantstore::v1::ESCALATION_RECORD_STATUS_DENIED), "denied");
  EXPECT_EQ(*ParseAuditOutcome("denied"), protocol::v1::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(AuditOutcomeName(protocol::v1::AUDIT_OUTCOME_SUCCEEDED), "succeeded");
}

TEST(NamesTest, ParsesAndFormatsRfc3339) {
  auto timestamp = ParseTimestamp("2026-08-11T10:00:00Z");
  ASSERT_TRUE(timestamp.ok()) << timestamp.status();
  EXPECT_EQ(timestamp->seconds(), 1786442400);
  EXPECT_EQ(FormatTimestamp(*timestamp), "2026-08-11T10:00:00Z");
  EXPECT_EQ(ParseTimestamp("2026-08-11T12:00:00.5+02:00")->nanos(), 500000000);
  EXPECT_FALSE(ParseTimestamp("tomorrow").ok());
  EXPECT_EQ(FormatTimestamp(google::protobuf::Timestamp()), "-");
}

}  // namespace
}  // namespace sharedos::grantstore::client
