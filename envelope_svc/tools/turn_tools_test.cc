#include "envelope_svc/tools/turn_tools.h"

#include <google/protobuf/text_format.h>

#include <memory>
#include <string>
#include <vector>

#include "common/json/proto_json.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/tools/tool_refusal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::sharedos::protocol::v1::ToolCall;
using ::sharedos::protocol::v1::ToolDefinition;
using ::sharedos::protocol::v1::ToolResult;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Return;
using ::testing::StrictMock;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

class MockProvider : public ToolProviderInterface {
 public:
  explicit MockProvider(std::string id) : id_(std::move(id)) {}
  absl::string_view id() const override { return id_; }
  MOCK_METHOD(absl::StatusOr<std::vector<ToolDefinition>>, ListTools,
              (const v1::ProviderContext&, absl::Time), (override));
  MOCK_METHOD(absl::StatusOr<ToolResult>, InvokeParsed,
              (const v1::InvokeRequest&, const nlohmann::json&, absl::Time), (override));
  MOCK_METHOD(absl::StatusOr<ToolResult>, Invoke, (const v1::InvokeRequest&, absl::Time),
              (override));

 private:
  std::string id_;
};

const char kConfig[] = R"pb(
  tools {
    definition {
      name: "files.read"
      description: "Read."
      namespace: "files"
      source: "sharedos"
      read_write: READ_WRITE_READ
      required_capability {
        resource { namespace: "files" }
        action: "read"
      }
    }
    requirement { path_from_arguments { path_argument: "path" mode: PATH_MODE_APPEND } }
    provider { files {} }
    input_schema_json: '{"type": "object", "properties": {"path": {"type": "string"}}}'
    output_schema_json: '{"type": "object", "required": ["content"]}'
  }
  tools {
    definition {
      name: "sharedos.escalate"
      description: "Ask a human for authority this turn lacks. Give the reason, and as requirement the capreq- id a refusal of this turn named; the turn ends escalated and a reviewer decides on exactly that authority."
      namespace: "sharedos"
      source: "sharedos"
      read_write: READ_WRITE_READ
      annotations { read_only: true }
      required_capability {
        resource { namespace: "sharedos" path: "escalation" }
        action: "request"
      }
    }
    requirement { ceiling {} }
    provider { none {} }
    input_schema_json: '{"type":"object","properties":{"reason":{"type":"string","minLength":1,"maxLength":512},"requirement":{"type":"string","pattern":"^capreq-[0-9a-f]{64}$"}},"required":["reason"],"additionalProperties":false}'
  }
  tools {
    definition {
      name: "notion.search"
      description: "Search."
      namespace: "notion"
      source: "mcp"
      read_write: READ_WRITE_READ
      required_capability {
        resource { namespace: "notion" }
        action: "search"
      }
    }
    requirement { path_from_arguments { path_argument: "page" mode: PATH_MODE_APPEND } }
    provider { grpc { provider_id: "notion-mcp" } }
    input_schema_json: '{"type": "object", "properties": {"page": {"type": "string"}}}'
  }
  tools {
    definition {
      name: "github.search"
      description: "Search."
      namespace: "github"
      source: "mcp"
      read_write: READ_WRITE_READ
      required_capability {
        resource { namespace: "github" }
        action: "search"
      }
    }
    requirement { ceiling {} }
    provider { grpc { provider_id: "github-mcp" } }
    input_schema_json: '{"type": "object"}'
  }
)pb";

class TurnToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto config = ToolRegistry::ParseConfig(kConfig, "test");
    ASSERT_THAT(config, IsOk());
    auto registry = ToolRegistry::Create({*config});
    ASSERT_THAT(registry, IsOk());
    registry_ = *std::move(registry);
    context_ = Parse<v1::ProviderContext>(R"pb(
      namespace_id: "world"
      actor { agent_id: "agent-1" }
      owner { human_user_id: "user-alice" }
      purpose: "p"
      trace_id: "t"
    )pb");
  }

  std::vector<std::string> Names(const TurnTools& turn) {
    std::vector<std::string> names;
    for (const auto& tool : turn.tools()) names.push_back(tool->name());
    return names;
  }

  ToolDefinition Registered(const std::string& name) { return registry_->Find(name)->definition(); }

  std::unique_ptr<ToolRegistry> registry_;
  v1::ProviderContext context_;
  StrictMock<MockProvider> files_{"files"};
  StrictMock<MockProvider> notion_{"notion-mcp"};
  StrictMock<MockProvider> github_{"github-mcp"};
  const absl::Time deadline_ = absl::FromUnixSeconds(2000000000);
};

TEST_F(TurnToolsTest, NothingAttachedLeavesOnlyProviderlessTools) {
  auto turn = TurnTools::Resolve(*registry_, AttachedProviders{}, context_, deadline_);
  ASSERT_THAT(turn, IsOk());
  EXPECT_THAT(Names(*turn), ElementsAre("sharedos.escalate"));
  EXPECT_EQ(turn->Find("files.read"), nullptr);
  EXPECT_EQ(turn->Find("notion.search"), nullptr);
}

TEST_F(TurnToolsTest, HostProvidersAreAskedOnceAndUnlistedToolsAreAbsent) {
  AttachedProviders providers;
  providers.files = &files_;
  providers.hosts["notion-mcp"] = &notion_;
  providers.hosts["github-mcp"] = &github_;
  ToolDefinition unregistered = Registered("notion.search");
  unregistered.set_name("notion.delete");
  EXPECT_CALL(notion_, ListTools(_, deadline_))
      .WillOnce(Return(std::vector<ToolDefinition>{Registered("notion.search"), unregistered}));
  // github-mcp lists nothing of ours.
  EXPECT_CALL(github_, ListTools(_, deadline_)).WillOnce(Return(std::vector<ToolDefinition>{}));
  auto turn = TurnTools::Resolve(*registry_, providers, context_, deadline_);
  ASSERT_THAT(turn, IsOk());
  EXPECT_THAT(Names(*turn), ElementsAre("files.read", "notion.search", "sharedos.escalate"));
  EXPECT_EQ(turn->Find("notion.delete"), nullptr);
  EXPECT_EQ(turn->Find("github.search"), nullptr);
  // The registered, precompiled tool is reused when the listing matches.
  EXPECT_EQ(turn->Find("notion.search"), registry_->Find("notion.search").get());
}

TEST_F(TurnToolsTest, TheTurnKeepsWhatItListedWhenTheProviderMovesMidTurn) {
  AttachedProviders providers;
  providers.hosts["notion-mcp"] = &notion_;
  ToolDefinition moved = Registered("notion.search");
  moved.mutable_required_capability()->set_action("administer");
  EXPECT_CALL(notion_, ListTools(_, _))
      .WillOnce(Return(std::vector<ToolDefinition>{Registered("notion.search")}))
      .WillOnce(Return(std::vector<ToolDefinition>{moved}));
  auto first = TurnTools::Resolve(*registry_, providers, context_, deadline_);
  auto second = TurnTools::Resolve(*registry_, providers, context_, deadline_);
  ASSERT_THAT(first, IsOk());
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(first->Find("notion.search")->ceiling().action(), "search");
  EXPECT_EQ(second->Find("notion.search")->ceiling().action(), "administer");
}

struct CatalogErrorCase {
  std::string name;
  absl::StatusOr<std::vector<ToolDefinition>> (*listing)(const ToolDefinition& registered);
  std::string detail;
};

class CatalogUnavailableTest : public TurnToolsTest,
                               public ::testing::WithParamInterface<CatalogErrorCase> {};

TEST_P(CatalogUnavailableTest, NeverPartial) {
  AttachedProviders providers;
  providers.files = &files_;
  providers.hosts["notion-mcp"] = &notion_;
  EXPECT_CALL(notion_, ListTools(_, _))
      .WillOnce(Return(GetParam().listing(Registered("notion.search"))));
  auto turn = TurnTools::Resolve(*registry_, providers, context_, deadline_);
  ASSERT_THAT(turn, StatusIs(absl::StatusCode::kFailedPrecondition, "tool_catalog_unavailable"));
  EXPECT_THAT(RefusalDetail(turn.status()), HasSubstr(GetParam().detail));
  EXPECT_THAT(RefusalDetail(turn.status()), Not(HasSubstr("backend exploded")));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, CatalogUnavailableTest,
    ::testing::Values(
        CatalogErrorCase{"ProviderFails",
                         [](const ToolDefinition&) -> absl::StatusOr<std::vector<ToolDefinition>> {
                           return absl::UnavailableError("backend exploded");
                         },
                         "provider \"notion-mcp\": ListTools failed: UNAVAILABLE"},
        CatalogErrorCase{
            "ListsANameTwice",
            [](const ToolDefinition& d) -> absl::StatusOr<std::vector<ToolDefinition>> {
              return std::vector<ToolDefinition>{d, d};
            },
            "lists \"notion.search\" twice"},
        CatalogErrorCase{
            "InvalidDefinition",
            [](const ToolDefinition& d) -> absl::StatusOr<std::vector<ToolDefinition>> {
              ToolDefinition broken = d;
              broken.clear_required_capability();
              return std::vector<ToolDefinition>{broken};
            },
            "definition.required_capability: required"},
        CatalogErrorCase{
            "SchemaDoesNotCompile",
            [](const ToolDefinition& d) -> absl::StatusOr<std::vector<ToolDefinition>> {
              ToolDefinition broken = d;
              (*broken.mutable_input_schema()->mutable_fields())["required"].set_number_value(1);
              return std::vector<ToolDefinition>{broken};
            },
            "not a valid JSON Schema"}),
    [](const ::testing::TestParamInfo<CatalogErrorCase>& info) { return info.param.name; });

ToolCall Call(const std::string& tool) {
  ToolCall call = Parse<ToolCall>(R"pb(id: "call-1" trace_id: "t")pb");
  call.set_tool(tool);
  (*call.mutable_arguments()->mutable_fields())["path"].set_string_value("a.md");
  return call;
}

CapabilityRequirement Requirement() {
  return Parse<CapabilityRequirement>(R"pb(resource { namespace: "files" path: "a.md" }
                                           action: "read")pb");
}

ToolResult Result(const std::string& call_id, const std::string& tool) {
  ToolResult result = Parse<ToolResult>(R"pb(
    status: TOOL_RESULT_STATUS_SUCCEEDED
    output {
      struct_value {
        fields {
          key: "content"
          value { string_value: "hi" }
        }
      }
    }
    completed_at { seconds: 1 }
  )pb");
  result.set_call_id(call_id);
  result.set_tool(tool);
  return result;
}

class TurnInvokeTest : public TurnToolsTest {
 protected:
  void SetUp() override {
    TurnToolsTest::SetUp();
    AttachedProviders providers;
    providers.files = &files_;
    auto turn = TurnTools::Resolve(*registry_, providers, context_, deadline_);
    ASSERT_THAT(turn, IsOk());
    turn_ = std::make_unique<TurnTools>(*std::move(turn));
  }

  // The turn's tool `name` (the registry's when the turn has none: a tool outside the turn).
  absl::StatusOr<ToolResult> Invoke(const std::string& name,
                                    const nlohmann::json* arguments = nullptr) {
    const Tool* tool = turn_->Find(name);
    std::shared_ptr<const Tool> registered = registry_->Find(name);
    if (tool == nullptr) tool = registered.get();
    return turn_->Invoke(*tool, Call(name), Requirement(), context_, deadline_, 0, arguments);
  }

  std::unique_ptr<TurnTools> turn_;
};

TEST_F(TurnInvokeTest, ProviderReceivesAuthorizedResourceWithDefaultedOwner) {
  v1::InvokeRequest seen;
  EXPECT_CALL(files_, Invoke(_, deadline_))
      .WillOnce([&](const v1::InvokeRequest& request, absl::Time) {
        seen = request;
        return Result("call-1", "files.read");
      });
  auto result = Invoke("files.read");
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->status(), protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED);
  EXPECT_EQ(seen.call_id(), "call-1");
  EXPECT_EQ(seen.tool(), "files.read");
  EXPECT_EQ(seen.action(), "read");
  EXPECT_EQ(seen.resource().namespace_(), "files");
  EXPECT_THAT(seen.resource().path(), ElementsAre("a.md"));
  EXPECT_EQ(seen.resource().owner().human_user_id(), "user-alice");
  EXPECT_EQ(seen.arguments().fields().at("path").string_value(), "a.md");
  EXPECT_EQ(seen.context().trace_id(), "t");
}

// The arguments the mediator parsed reach the provider as they are: it parses them no second time.
TEST_F(TurnInvokeTest, ParsedArgumentsReachTheProvider) {
  const nlohmann::json parsed = {{"path", "a.md"}};
  EXPECT_CALL(files_, Invoke(_, _)).Times(0);
  EXPECT_CALL(files_, InvokeParsed(_, parsed, deadline_))
      .WillOnce(Return(Result("call-1", "files.read")));
  auto result = Invoke("files.read", &parsed);
  ASSERT_THAT(result, IsOk());
  EXPECT_EQ(result->status(), protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED);
}

TEST_F(TurnInvokeTest, ProviderErrorIsExecutionFailedWithoutItsText) {
  EXPECT_CALL(files_, Invoke(_, _))
      .WillOnce(Return(absl::InternalError("disk on fire at /secret/path")));
  auto result = Invoke("files.read");
  ASSERT_THAT(result, StatusIs(absl::StatusCode::kFailedPrecondition, "tool_execution_failed"));
  EXPECT_EQ(RefusalDetail(result.status()), "provider \"files\": Invoke failed: INTERNAL");
}

TEST_F(TurnInvokeTest, MismatchedResultIsInvalidToolResult) {
  EXPECT_CALL(files_, Invoke(_, _)).WillOnce(Return(Result("call-2", "files.read")));
  auto result = Invoke("files.read");
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_result"));
}

TEST_F(TurnInvokeTest, OutputAgainstSchemaIsChecked) {
  ToolResult wrong = Result("call-1", "files.read");
  wrong.mutable_output()->mutable_struct_value()->mutable_fields()->clear();
  EXPECT_CALL(files_, Invoke(_, _)).WillOnce(Return(wrong));
  auto result = Invoke("files.read");
  ASSERT_THAT(result, StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_result"));
  EXPECT_THAT(RefusalDetail(result.status()), HasSubstr("result.output"));
}

TEST_F(TurnInvokeTest, EscalateIsNeverExecuted) {
  auto result = Invoke("sharedos.escalate");
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kFailedPrecondition, "escalation_not_terminated"));
}

TEST_F(TurnInvokeTest, ToolOutsideTheTurnIsExecutionFailed) {
  auto result = Invoke("notion.search");
  EXPECT_THAT(result, StatusIs(absl::StatusCode::kFailedPrecondition, "tool_execution_failed"));
}

}  // namespace
}  // namespace sharedos::envelope::tools
