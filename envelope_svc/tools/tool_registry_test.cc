#include "envelope_svc/tools/tool_registry.h"

#include <google/protobuf/util/message_differencer.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/tools/escalation_tool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A valid files-bound tool named `name`, as config text (`extra` added inside `tools {}`).
std::string ToolText(const std::string& name, const std::string& extra = "") {
  return absl::StrReplaceAll(R"txt(
    tools {
      definition {
        name: "$NAME"
        description: "A tool."
        namespace: "files"
        source: "sharedos"
        read_write: READ_WRITE_READ
        required_capability { resource { namespace: "files" } action: "read" }
      }
      requirement { path_from_arguments { path_argument: "path" mode: PATH_MODE_APPEND } }
      provider { files {} }
      input_schema_json: '{"type": "object", "properties": {"path": {"type": "string"}}}'
      $EXTRA
    }
  )txt",
                             {{"$NAME", name}, {"$EXTRA", extra}});
}

std::string EscalateText(const std::string& provider = "none {}") {
  return absl::StrReplaceAll(R"txt(
    tools {
      definition {
        name: "sharedos.escalate"
        description: "Ask a human for authority this turn lacks. Give the reason, and as requirement the capreq- id a refusal of this turn named; the turn ends escalated and a reviewer decides on exactly that authority."
        namespace: "sharedos"
        source: "sharedos"
        read_write: READ_WRITE_READ
        annotations { read_only: true }
        required_capability { resource { namespace: "sharedos" path: "escalation" } action: "request" }
      }
      requirement { ceiling {} }
      provider { $PROVIDER }
      input_schema_json: '{"type":"object","properties":{"reason":{"type":"string","minLength":1,"maxLength":512},"requirement":{"type":"string","pattern":"^capreq-[0-9a-f]{64}$"}},"required":["reason"],"additionalProperties":false}'
    }
  )txt",
                             {{"$PROVIDER", provider}});
}

absl::StatusOr<std::unique_ptr<ToolRegistry>> FromTexts(const std::vector<std::string>& texts) {
  std::vector<v1::ToolRegistryConfig> configs;
  for (size_t i = 0; i < texts.size(); ++i) {
    auto config = ToolRegistry::ParseConfig(texts[i], "config");
    if (!config.ok()) return config.status();
    configs.push_back(*config);
  }
  return ToolRegistry::Create(configs);
}

TEST(ToolRegistryTest, LoadsSortedAndFindsByName) {
  auto registry = FromTexts({ToolText("files.stat") + ToolText("files.read"), EscalateText()});
  ASSERT_THAT(registry, IsOk());
  std::vector<std::string> names;
  for (const auto& tool : (*registry)->tools()) names.push_back(tool->name());
  EXPECT_THAT(names, ElementsAre("files.read", "files.stat", "sharedos.escalate"));
  ASSERT_NE((*registry)->Find("files.read"), nullptr);
  EXPECT_EQ((*registry)->Find("files.read")->name(), "files.read");
  EXPECT_EQ((*registry)->Find("admin.grant.issue"), nullptr);
  // No output_schema_json: no output schema (not even an empty one) in the definition.
  EXPECT_FALSE((*registry)->Find("files.read")->definition().has_output_schema());
  EXPECT_FALSE((*registry)->Find("files.read")->published().has_output_schema());
}

TEST(ToolRegistryTest, SchemaJsonBecomesTheDefinitionsStruct) {
  auto registry =
      FromTexts({ToolText("files.read", "output_schema_json: '{\"type\": \"object\"}'")});
  ASSERT_THAT(registry, IsOk());
  const Tool& tool = *(*registry)->Find("files.read");
  EXPECT_EQ(tool.definition().input_schema().fields().at("type").string_value(), "object");
  EXPECT_TRUE(tool.definition().has_output_schema());
}

TEST(ToolRegistryTest, EscalationEntryEqualsTheBuiltInDefinition) {
  auto registry = FromTexts({EscalateText()});
  ASSERT_THAT(registry, IsOk());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      (*registry)->Find("sharedos.escalate")->definition(), EscalationToolDefinition()));
}

struct ParseErrorCase {
  std::string name;
  std::string text;
  std::string message;
};

class ParseConfigErrorTest : public ::testing::TestWithParam<ParseErrorCase> {};

TEST_P(ParseConfigErrorTest, IsInvalidArgumentWithPosition) {
  EXPECT_THAT(ToolRegistry::ParseConfig(GetParam().text, "tools.textproto"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ParseConfigErrorTest,
    ::testing::Values(
        ParseErrorCase{"UnknownTopLevelField", "toolz {}",
                       "tools.textproto:1:7: Message type "
                       "\"sharedos.envelope.v1.ToolRegistryConfig\" has no field named \"toolz\""},
        ParseErrorCase{"UnknownNestedField", "tools { provider { files { root: 'x' } } }",
                       "has no field named \"root\""},
        ParseErrorCase{"UnknownDefinitionField", "tools { definition { ceiling {} } }",
                       "has no field named \"ceiling\""},
        ParseErrorCase{"UnknownEnumValue",
                       "tools { requirement { path_from_arguments { mode: PATH_MODE_PREPEND } } }",
                       "PATH_MODE_PREPEND"},
        ParseErrorCase{"Syntax", "tools {", "tools.textproto:1:"},
        ParseErrorCase{"TwoProvidersOfOneof", "tools { provider { files {} none {} } }", "oneof"}),
    [](const ::testing::TestParamInfo<ParseErrorCase>& info) { return info.param.name; });

struct CreateErrorCase {
  std::string name;
  std::vector<std::string> texts;
  std::string message;
};

class CreateErrorTest : public ::testing::TestWithParam<CreateErrorCase> {};

TEST_P(CreateErrorTest, IsInvalidArgumentNamingToolAndField) {
  EXPECT_THAT(FromTexts(GetParam().texts),
              StatusIs(absl::StatusCode::kInvalidArgument, GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, CreateErrorTest,
    ::testing::Values(
        CreateErrorCase{"DuplicateInOneConfig",
                        {ToolText("files.read") + ToolText("files.read")},
                        "configs[0].tools[1] \"files.read\".definition.name: duplicate "
                        "\"files.read\""},
        CreateErrorCase{"DuplicateAcrossConfigs",
                        {ToolText("files.read"), ToolText("files.read")},
                        "configs[1].tools[0] \"files.read\".definition.name: duplicate "
                        "\"files.read\""},
        CreateErrorCase{"NoDefinition",
                        {"tools { requirement { ceiling {} } provider { none {} } }"},
                        "configs[0].tools[0] \"\".definition: required"},
        CreateErrorCase{"InvalidDefinition",
                        {ToolText("files read")},
                        "configs[0].tools[0] \"files read\".definition.name: invalid character at "
                        "offset 5 (allowed: A-Z a-z 0-9 _ . -)"},
        CreateErrorCase{"SchemaJsonNotJson",
                        {ToolText("files.read", "output_schema_json: '{nope'")},
                        "configs[0].tools[0] \"files.read\".output_schema_json: not valid JSON"},
        CreateErrorCase{"SchemaJsonNestedTooDeep",
                        {ToolText("files.read", "output_schema_json: '" + std::string(20000, '[') +
                                                    std::string(20000, ']') + "'")},
                        "configs[0].tools[0] \"files.read\".output_schema_json: JSON nested "
                        "deeper than 64 levels"},
        CreateErrorCase{"SchemaJsonNotAnObject",
                        {ToolText("files.read", "output_schema_json: '[1]'")},
                        "configs[0].tools[0] \"files.read\".output_schema_json: expected a JSON "
                        "object at \"\""},
        CreateErrorCase{"SchemaJsonAndStruct",
                        {"tools { definition { name: 'files.read' input_schema { fields { key: "
                         "'type' value { string_value: 'object' } } } } input_schema_json: '{}' }"},
                        "configs[0].tools[0] \"files.read\".input_schema_json: set together with "
                        "the definition's Struct"},
        CreateErrorCase{"SchemaDoesNotCompile",
                        {ToolText("files.read", "output_schema_json: '{\"type\": \"objekt\"}'")},
                        "configs[0].tools[0] \"files.read\".definition.output_schema: not a valid "
                        "JSON Schema: Unrecognised JSON type name 'objekt'"},
        CreateErrorCase{"EscalateAltered",
                        {"tools { definition { name: 'sharedos.escalate' description: 'x' "
                         "namespace: 'sharedos' source: 'sharedos' read_write: READ_WRITE_READ "
                         "required_capability { resource { namespace: 'sharedos' path: "
                         "'escalation' } action: 'request' } } requirement { ceiling {} } "
                         "provider { none {} } input_schema_json: '{\"type\": \"object\"}' }"},
                        "configs[0].tools[0] \"sharedos.escalate\".definition: must equal the "
                        "sharedos.escalate definition (semantics §4.5): modified: description: "
                        "\"Ask a human for authority this turn lacks. Give the reason, and as "
                        "requirement the capreq- id a refusal of this turn named; the turn ends "
                        "escalated and a reviewer decides on exactly that authority.\" -> "
                        "\"x\""},
        CreateErrorCase{"EscalateWithAProvider",
                        {EscalateText("files {}")},
                        "configs[0].tools[0] \"sharedos.escalate\".provider: sharedos.escalate "
                        "takes none"}),
    [](const ::testing::TestParamInfo<CreateErrorCase>& info) { return info.param.name; });

TEST(ToolRegistryTest, CreateErrorMessageStartsAsDocumented) {
  // The INVALID_ARGUMENT text above is exact; the Struct-conversion text carries a pointer.
  auto status = FromTexts({ToolText("files.read", "output_schema_json: '[1]'")}).status();
  EXPECT_THAT(status.message(), HasSubstr("output_schema_json"));
}

TEST(ToolRegistryLoadFilesTest, NamesTheFile) {
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/good.textproto";
  const std::string bad = dir + "/bad.textproto";
  std::ofstream(good) << ToolText("files.read");
  std::ofstream(bad) << ToolText("files.read");
  EXPECT_THAT(ToolRegistry::LoadFiles({good}), IsOk());
  EXPECT_THAT(
      ToolRegistry::LoadFiles({good, bad}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               bad + ": tools[0] \"files.read\".definition.name: duplicate \"files.read\""));
  EXPECT_THAT(
      ToolRegistry::LoadFiles({dir + "/missing.textproto"}),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.textproto: cannot be read")));
  std::ofstream(bad) << "tools { bogus: 1 }";
  EXPECT_THAT(ToolRegistry::LoadFiles({bad}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(bad + ":1:")));
}

class ListedDefinitionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = FromTexts(
        {R"pb(
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
         )pb"});
    ASSERT_THAT(registry, IsOk());
    registry_ = *std::move(registry);
    registered_ = registry_->Find("notion.search");
  }

  std::unique_ptr<ToolRegistry> registry_;
  std::shared_ptr<const Tool> registered_;
};

TEST_F(ListedDefinitionTest, SameDefinitionIsTheRegisteredTool) {
  auto tool = registry_->ToolForListedDefinition(registered_, registered_->definition());
  ASSERT_THAT(tool, IsOk());
  EXPECT_EQ(tool->get(), registered_.get());
}

TEST_F(ListedDefinitionTest, ChangedDefinitionIsCompiledOnceAndKeepsTheRule) {
  protocol::v1::ToolDefinition moved = registered_->definition();
  moved.mutable_required_capability()->set_action("administer");
  auto first = registry_->ToolForListedDefinition(registered_, moved);
  ASSERT_THAT(first, IsOk());
  EXPECT_NE(first->get(), registered_.get());
  EXPECT_EQ((*first)->ceiling().action(), "administer");
  EXPECT_TRUE((*first)->requirement_rule().has_path_from_arguments());
  EXPECT_EQ((*first)->provider_binding().grpc().provider_id(), "notion-mcp");
  auto second = registry_->ToolForListedDefinition(registered_, moved);
  ASSERT_THAT(second, IsOk());
  EXPECT_EQ(second->get(), first->get());
}

TEST_F(ListedDefinitionTest, InvalidListedDefinitionIsRefused) {
  protocol::v1::ToolDefinition other = registered_->definition();
  other.set_name("notion.write");
  EXPECT_THAT(registry_->ToolForListedDefinition(registered_, other),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "provider tool \"notion.search\".name: not the registered tool"));
  protocol::v1::ToolDefinition no_page = registered_->definition();
  no_page.mutable_input_schema()->mutable_fields()->erase("properties");
  EXPECT_THAT(registry_->ToolForListedDefinition(registered_, no_page),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("requirement.path_from_arguments.path_argument")));
  protocol::v1::ToolDefinition no_description = registered_->definition();
  no_description.clear_description();
  EXPECT_THAT(registry_->ToolForListedDefinition(registered_, no_description),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "provider tool \"notion.search\".definition.description: empty"));
}

}  // namespace
}  // namespace sharedos::envelope::tools
