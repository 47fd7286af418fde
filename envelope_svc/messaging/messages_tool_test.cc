#include "envelope_svc/messaging/messages_tool.h"

#include <nlohmann/json.hpp>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::messaging {
namespace {

using ::sharedos::common::IsOk;
using ::testing::ElementsAre;

TEST(MessagesToolTest, DefinitionIsTheKernelSuppliedOne) {
  const protocol::v1::ToolDefinition definition = MessagesRequestToolDefinition();
  EXPECT_EQ(definition.name(), "messages.request");
  EXPECT_EQ(definition.namespace_(), "messages");
  EXPECT_EQ(definition.read_write(), protocol::v1::READ_WRITE_WRITE);
  EXPECT_TRUE(definition.annotations().destructive());
  EXPECT_FALSE(definition.annotations().idempotent());
  EXPECT_FALSE(definition.annotations().read_only());
  EXPECT_EQ(definition.required_capability().resource().namespace_(), "sharedos.messaging");
  EXPECT_TRUE(definition.required_capability().resource().path().empty());
  EXPECT_EQ(definition.required_capability().action(), "send");
}

TEST(MessagesToolTest, RequirementIsTheRecipientsAddressPath) {
  std::shared_ptr<const tools::Tool> tool = MessagesRequestTool();
  ASSERT_NE(tool, nullptr);
  EXPECT_TRUE(tool->provider_binding().has_messaging());
  const nlohmann::json arguments = {{"recipient", {{"kind", "agent"}, {"agentId", "agent-bob"}}},
                                    {"payload", {{"q", "hi"}}}};
  absl::StatusOr<protocol::v1::CapabilityRequirement> requirement =
      tool->ResolveRequirement(arguments);
  ASSERT_THAT(requirement.status(), IsOk());
  EXPECT_EQ(requirement->resource().namespace_(), "sharedos.messaging");
  EXPECT_THAT(requirement->resource().path(), ElementsAre("agent", "agent-bob"));
  EXPECT_EQ(requirement->action(), "send");
}

TEST(MessagesToolTest, ArgumentsAreRecipientAndPayloadOnly) {
  std::shared_ptr<const tools::Tool> tool = MessagesRequestTool();
  google::protobuf::Struct forged;
  (*forged.mutable_fields())["recipient"].mutable_struct_value();
  (*forged.mutable_fields())["payload"].set_string_value("x");
  (*forged.mutable_fields())["sender"].set_string_value("agent-orchestrator");
  EXPECT_FALSE(tool->ParseArguments(forged).ok());
}

TEST(MessagesToolTest, AnUnknownAddressKindDoesNotResolve) {
  std::shared_ptr<const tools::Tool> tool = MessagesRequestTool();
  const nlohmann::json arguments = {{"recipient", {{"kind", "robot"}, {"robotId", "r"}}},
                                    {"payload", 1}};
  EXPECT_FALSE(tool->ResolveRequirement(arguments).ok());
}

}  // namespace
}  // namespace sharedos::envelope::messaging
