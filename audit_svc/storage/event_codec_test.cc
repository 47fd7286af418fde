#include "audit_svc/storage/event_codec.h"

#include "common/crypto/sha256.h"
#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace sharedos::audit::storage {
namespace {

using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::AuditEvent;

AuditEvent Event() {
  AuditEvent event;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"pb(
                                                              version: "1"
                                                              id: "e-1"
                                                              type: AUDIT_EVENT_TYPE_TOOL_INVOKED
                                                              outcome: AUDIT_OUTCOME_DENIED
                                                              at { seconds: 1786438800 }
                                                              trace_id: "trace-1"
                                                              namespace_id: "world"
                                                              actor { agent_id: "mallory" }
                                                              authority { human_user_id: "alice" }
                                                              owner { human_user_id: "alice" }
                                                              purpose: "probe"
                                                              reason: "tool_unavailable"
                                                              source: AUDIT_SOURCE_ENVELOPE
                                                              cause: "not_offered"
                                                              metadata {
                                                                fields {
                                                                  key: "executionId"
                                                                  value { string_value: "exec-9" }
                                                                }
                                                                fields {
                                                                  key: "b"
                                                                  value { number_value: 2 }
                                                                }
                                                                fields {
                                                                  key: "a"
                                                                  value { number_value: 1 }
                                                                }
                                                              })pb",
                                                            &event));
  return event;
}

TEST(EventCodecTest, CanonicalJsonIsSortedCompactAndStable) {
  auto json = CanonicalEventJson(Event());
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->find(' '), std::string::npos);
  EXPECT_LT(json->find("\"a\":1"), json->find("\"b\":2"));
  EXPECT_LT(json->find("\"actor\""), json->find("\"authority\""));
  // Golden: any change to the canonical form breaks every stored chain.
  EXPECT_EQ(*json, std::string(R"({"actor":{"agentId":"mallory"},"at":"2026-08-11T09:00:00Z",)"
                               R"("authority":{"humanUserId":"alice"},"cause":"not_offered",)"
                               R"("id":"e-1","metadata":{"a":1,"b":2,"executionId":"exec-9"},)"
                               R"("namespaceId":"world","outcome":"AUDIT_OUTCOME_DENIED",)"
                               R"("owner":{"humanUserId":"alice"},"purpose":"probe",)"
                               R"("reason":"tool_unavailable","source":"AUDIT_SOURCE_ENVELOPE",)"
                               R"("traceId":"trace-1","type":"AUDIT_EVENT_TYPE_TOOL_INVOKED",)"
                               R"("version":"1"})"));
}

TEST(EventCodecTest, RoundTripsThroughTheCanonicalForm) {
  auto json = CanonicalEventJson(Event());
  ASSERT_TRUE(json.ok());
  auto parsed = ParseEventJson(*json);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*parsed, Event()));
}

TEST(EventCodecTest, ParseRefusesUnknownFieldsAndGarbage) {
  EXPECT_THAT(ParseEventJson(R"({"id":"x","surprise":1})"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(ParseEventJson("not json"), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(EventCodecTest, ChainHashCoversThePreviousHashAndTheEvent) {
  const std::string genesis(64, '0');
  EXPECT_EQ(ChainHash(genesis, "{}"), common::Sha256Hex(genesis + "{}"));
  EXPECT_NE(ChainHash(genesis, "{}"), ChainHash(std::string(64, '1'), "{}"));
  EXPECT_NE(ChainHash(genesis, "{}"), ChainHash(genesis, "{ }"));
}

TEST(EventCodecTest, DerivesTheIndexedColumnsFromTheEvent) {
  IndexedColumns columns = DeriveColumns(Event());
  EXPECT_EQ(columns.type, sharedos::protocol::v1::AUDIT_EVENT_TYPE_TOOL_INVOKED);
  EXPECT_EQ(columns.outcome, sharedos::protocol::v1::AUDIT_OUTCOME_DENIED);
  EXPECT_EQ(columns.namespace_id, "world");
  EXPECT_EQ(columns.trace_id, "trace-1");
  EXPECT_EQ(columns.execution_id, "exec-9");
  EXPECT_EQ(columns.reason, "tool_unavailable");
  EXPECT_EQ(columns.source, sharedos::protocol::v1::AUDIT_SOURCE_ENVELOPE);
  EXPECT_EQ(columns.actor, "agent:mallory");
  EXPECT_EQ(columns.at_micros, 1786438800LL * 1000000);

  AuditEvent ended = Event();
  ended.set_type(sharedos::protocol::v1::AUDIT_EVENT_TYPE_TURN_ENDED);
  ended.set_operation_id("exec-7");
  ended.clear_source();
  EXPECT_EQ(DeriveColumns(ended).execution_id, "exec-7");
  EXPECT_FALSE(DeriveColumns(ended).source.has_value());
}

// Control-plane records (docs/adr/0008): never a "1" event's shape, and the ones earlier builds
// wrote as "1" events with the retired types read back as what they were.
TEST(EventCodecTest, AControlPlaneRecordIsStoredInItsOwnShape) {
  audit::v1::ControlPlaneEvent event;
  event.set_id("c-1");
  event.set_type(audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED);
  event.set_outcome(protocol::v1::AUDIT_OUTCOME_SUCCEEDED);
  event.mutable_at()->set_seconds(1786438800);
  event.set_namespace_id("world");
  event.set_grant_id("g1");
  auto json = CanonicalControlPlaneJson(event);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, std::string(R"({"controlPlane":{"at":"2026-08-11T09:00:00Z","grantId":"g1",)"
                               R"("id":"c-1","namespaceId":"world",)"
                               R"("outcome":"AUDIT_OUTCOME_SUCCEEDED",)"
                               R"("type":"CONTROL_PLANE_EVENT_TYPE_GRANT_REVOKED"}})"));
  audit::v1::AuditRecord record;
  ASSERT_TRUE(ParseRecordJson(*json, record).ok());
  EXPECT_FALSE(record.has_event());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(record.control_plane(), event));
  auto keys = StoredKeysFromJson(*json);
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->id, "c-1");
  EXPECT_EQ(keys->columns.type, 14);  // the number protocol "1" retired for grant.revoked
  EXPECT_EQ(keys->columns, DeriveColumns(event));
}

TEST(EventCodecTest, LegacyControlPlaneEventsReadBackAsControlPlaneRecords) {
  const std::string legacy =
      R"({"actor":{"serviceId":"ops"},"at":"2026-08-11T09:00:00Z",)"
      R"("authority":{"humanUserId":"alice"},"grantId":"g1","id":"old-1",)"
      R"("metadata":{"revision":1},"namespaceId":"world","outcome":"AUDIT_OUTCOME_SUCCEEDED",)"
      R"("owner":{"humanUserId":"alice"},"purpose":"sharedos.control-plane",)"
      R"("traceId":"grantstore-r1","type":"AUDIT_EVENT_TYPE_GRANT_ISSUED","version":"1"})";
  audit::v1::AuditRecord record;
  ASSERT_TRUE(ParseRecordJson(legacy, record).ok());
  ASSERT_TRUE(record.has_control_plane());
  EXPECT_EQ(record.control_plane().type(), audit::v1::CONTROL_PLANE_EVENT_TYPE_GRANT_ISSUED);
  EXPECT_EQ(record.control_plane().grant_id(), "g1");
  EXPECT_EQ(record.control_plane().actor().service_id(), "ops");
  auto keys = StoredKeysFromJson(legacy);
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys->id, "old-1");
  EXPECT_EQ(keys->columns.type, 12);  // what the earlier build indexed it under
  // Anything else that does not parse is still refused.
  EXPECT_THAT(ParseRecordJson(R"({"type":"AUDIT_EVENT_TYPE_MADE_UP","version":"1"})", record),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(StoredKeysFromJson(R"({"controlPlane":{"surprise":1}})"),
              StatusIs(absl::StatusCode::kDataLoss));
}

}  // namespace
}  // namespace sharedos::audit::storage
