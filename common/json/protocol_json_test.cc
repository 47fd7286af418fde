#include "common/json/protocol_json.h"

#include <nlohmann/json.hpp>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::common {
namespace {

using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::CapabilityGrant;
using ::sharedos::protocol::v1::ToolDefinition;
using ::testing::Eq;
using Json = nlohmann::json;

google::protobuf::Timestamp Seconds(int64_t seconds, int32_t nanos = 0) {
  google::protobuf::Timestamp timestamp;
  timestamp.set_seconds(seconds);
  timestamp.set_nanos(nanos);
  return timestamp;
}

TEST(AddressToJsonTest, EveryKind) {
  Address address;
  address.set_human_user_id("alice");
  EXPECT_EQ(AddressToJson(address), Json::parse(R"({"kind":"human","userId":"alice"})"));
  address.set_agent_id("bot");
  EXPECT_EQ(AddressToJson(address), Json::parse(R"({"kind":"agent","agentId":"bot"})"));
  address.set_group_conversation_id("c1");
  EXPECT_EQ(AddressToJson(address), Json::parse(R"({"kind":"group","conversationId":"c1"})"));
  address.set_service_id("svc");
  EXPECT_EQ(AddressToJson(address), Json::parse(R"({"kind":"service","serviceId":"svc"})"));
  EXPECT_EQ(AddressToJson(Address()), Json::object());
}

TEST(CapabilityToJsonTest, OwnerOnlyWhenSet) {
  protocol::v1::Capability capability;
  capability.mutable_resource()->set_namespace_("files");
  capability.mutable_resource()->add_path("a");
  capability.add_actions("read");
  capability.set_scope(protocol::v1::SCOPE_EXACT);
  EXPECT_EQ(CapabilityToJson(capability),
            Json::parse(R"({"resource":{"namespace":"files","path":["a"]},
                            "actions":["read"],"scope":"exact"})"));
  capability.mutable_resource()->mutable_owner()->set_human_user_id("bob");
  capability.set_scope(protocol::v1::SCOPE_DESCENDANTS);
  EXPECT_EQ(CapabilityToJson(capability)["resource"]["owner"],
            Json::parse(R"({"kind":"human","userId":"bob"})"));
  EXPECT_EQ(CapabilityToJson(capability)["scope"], "descendants");
}

TEST(CapabilityConstraintsToJsonTest, OmitsAbsentFields) {
  protocol::v1::CapabilityConstraints constraints;
  EXPECT_THAT(CapabilityConstraintsToJson(constraints), IsOkAndHolds(Eq(Json::object())));
  constraints.add_purposes("assist");
  *constraints.mutable_not_before() = Seconds(1767225600, 500000000);
  *constraints.mutable_expires_at() = Seconds(1767312000);
  constraints.set_max_uses(3);
  constraints.set_delegation_depth(0);
  EXPECT_THAT(CapabilityConstraintsToJson(constraints),
              IsOkAndHolds(Eq(Json::parse(R"({"purposes":["assist"],
                  "notBefore":"2026-01-01T00:00:00.500Z","expiresAt":"2026-01-02T00:00:00Z",
                  "maxUses":3,"delegationDepth":0})"))));
}

TEST(CapabilityConstraintsToJsonTest, RefusesTimestampOutOfRange) {
  protocol::v1::CapabilityConstraints constraints;
  *constraints.mutable_expires_at() = Seconds(0, -1);
  EXPECT_THAT(CapabilityConstraintsToJson(constraints),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(CapabilityGrantToJsonTest, RequiredAndOptionalFields) {
  CapabilityGrant grant;
  grant.set_id("g1");
  grant.set_namespace_id("world-1");
  grant.mutable_subject()->set_agent_id("bot");
  grant.mutable_issuer()->set_human_user_id("alice");
  *grant.mutable_issued_at() = Seconds(1767225600);
  absl::StatusOr<Json> json = CapabilityGrantToJson(grant);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, Json::parse(R"({"id":"g1","namespaceId":"world-1",
      "subject":{"kind":"agent","agentId":"bot"},"issuer":{"kind":"human","userId":"alice"},
      "capabilities":[],"constraints":{},"issuedAt":"2026-01-01T00:00:00Z"})"));

  *grant.mutable_revoked_at() = Seconds(1767225601);
  grant.set_parent_grant_id("root");
  (*grant.mutable_metadata()->mutable_fields())["n"].set_number_value(2);
  json = CapabilityGrantToJson(grant);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ((*json)["revokedAt"], "2026-01-01T00:00:01Z");
  EXPECT_EQ((*json)["parentGrantId"], "root");
  EXPECT_EQ((*json)["metadata"], Json::parse(R"({"n":2})"));
}

TEST(CapabilityRequestToJsonTest, IdentityLeavesOutIdRequestedAtAndMetadata) {
  protocol::v1::CapabilityRequest request;
  request.set_id("capreq-x");
  request.set_namespace_id("world-1");
  request.mutable_requester()->set_agent_id("bot");
  request.mutable_owner()->set_human_user_id("alice");
  request.set_purpose("assist");
  *request.mutable_requested_at() = Seconds(1767225600);
  (*request.mutable_metadata()->mutable_fields())["k"].set_string_value("v");
  absl::StatusOr<Json> identity = CapabilityRequestIdentityToJson(request);
  ASSERT_TRUE(identity.ok()) << identity.status();
  EXPECT_EQ(*identity, Json::parse(R"({"namespaceId":"world-1",
      "requester":{"kind":"agent","agentId":"bot"},"owner":{"kind":"human","userId":"alice"},
      "capabilities":[],"purpose":"assist"})"));

  request.mutable_constraints();
  absl::StatusOr<Json> full = CapabilityRequestToJson(request);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ((*full)["constraints"], Json::object());
  EXPECT_EQ((*full)["id"], "capreq-x");
  EXPECT_EQ((*full)["requestedAt"], "2026-01-01T00:00:00Z");
  EXPECT_EQ((*full)["metadata"], Json::parse(R"({"k":"v"})"));
}

ToolDefinition Tool(protocol::v1::ReadWrite read_write) {
  ToolDefinition tool;
  tool.set_name("files.read");
  tool.set_description("Read.");
  tool.set_namespace_("files");
  tool.set_source("sharedos");
  tool.set_read_write(read_write);
  (*tool.mutable_input_schema()->mutable_fields())["type"].set_string_value("object");
  tool.mutable_required_capability()->set_action("read");
  (*tool.mutable_metadata()->mutable_fields())["secret"].set_string_value("never published");
  return tool;
}

TEST(PublishToolDefinitionTest, ReadOnlyHintDefaultsToReadWrite) {
  EXPECT_TRUE(
      PublishToolDefinition(Tool(protocol::v1::READ_WRITE_READ)).annotations().read_only_hint());
  const auto write = PublishToolDefinition(Tool(protocol::v1::READ_WRITE_WRITE));
  EXPECT_TRUE(write.annotations().has_read_only_hint());
  EXPECT_FALSE(write.annotations().read_only_hint());
  EXPECT_FALSE(write.annotations().has_destructive_hint());
  EXPECT_FALSE(write.annotations().has_idempotent_hint());
  EXPECT_FALSE(write.annotations().has_open_world_hint());
}

TEST(PublishToolDefinitionTest, DeclaredHintsWinAndNothingElseLeaks) {
  ToolDefinition tool = Tool(protocol::v1::READ_WRITE_WRITE);
  tool.mutable_annotations()->set_read_only(false);
  tool.mutable_annotations()->set_destructive(true);
  tool.mutable_annotations()->set_idempotent(false);
  absl::StatusOr<Json> json = PublishedToolDefinitionToJson(PublishToolDefinition(tool));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, Json::parse(R"({"name":"files.read","description":"Read.",
      "inputSchema":{"type":"object"},
      "annotations":{"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false},
      "metadata":{"namespace":"files","source":"sharedos"}})"));
}

TEST(PublishToolDefinitionTest, OutputSchemaOnlyWhenSet) {
  ToolDefinition tool = Tool(protocol::v1::READ_WRITE_READ);
  EXPECT_FALSE(PublishToolDefinition(tool).has_output_schema());
  tool.mutable_output_schema();
  EXPECT_TRUE(PublishToolDefinition(tool).has_output_schema());
}

TEST(ResourceReachToJsonTest, Shape) {
  protocol::v1::ResourceReach reach;
  reach.set_namespace_("files");
  reach.add_path("a");
  reach.add_actions("read");
  reach.set_scope(protocol::v1::SCOPE_EXACT);
  EXPECT_EQ(
      ResourceReachToJson(reach),
      Json::parse(R"({"namespace":"files","path":["a"],"actions":["read"],"scope":"exact"})"));
}

}  // namespace
}  // namespace sharedos::common
