#include "envelope_svc/tools/tool.h"

#include <google/protobuf/text_format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/json/proto_json.h"
#include "common/status/status_matchers.h"
#include "envelope_svc/tools/tool_refusal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::ToolCall;
using ::sharedos::protocol::v1::ToolDefinition;
using ::sharedos::protocol::v1::ToolResult;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

google::protobuf::Struct ToStruct(const Json& json) {
  auto converted = common::JsonToProtoStruct(json);
  EXPECT_THAT(converted, IsOk());
  return *converted;
}

const Json kInput = {{"type", "object"},
                     {"properties", {{"path", {{"type", "string"}, {"maxLength", 32}}}}},
                     {"required", {"path"}},
                     {"additionalProperties", false}};
const Json kOutput = {{"type", "object"},
                      {"properties", {{"content", {{"type", "string"}}}}},
                      {"required", {"content"}}};

ToolDefinition Definition() {
  ToolDefinition definition = Parse<ToolDefinition>(R"pb(
    name: "files.read"
    description: "Read a file."
    namespace: "files"
    source: "sharedos"
    read_write: READ_WRITE_READ
    required_capability {
      resource { namespace: "files" path: "Workspace" }
      action: "read"
    }
  )pb");
  *definition.mutable_input_schema() = ToStruct(kInput);
  *definition.mutable_output_schema() = ToStruct(kOutput);
  return definition;
}

const char kRule[] = "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND }";

std::shared_ptr<const Tool> MakeTool() {
  auto tool = Tool::Create(Definition(), Parse<v1::RequirementRule>(kRule),
                           Parse<v1::ProviderBinding>("files {}"), "t");
  EXPECT_THAT(tool, IsOk());
  return *tool;
}

TEST(ToolCreateTest, KeepsDefinitionAndPublishes) {
  auto tool = MakeTool();
  EXPECT_EQ(tool->name(), "files.read");
  EXPECT_EQ(tool->tool_namespace(), "files");
  EXPECT_EQ(tool->ceiling().action(), "read");
  EXPECT_EQ(tool->published().name(), "files.read");
  EXPECT_EQ(tool->published().metadata().namespace_(), "files");
  EXPECT_TRUE(tool->published().annotations().read_only_hint());
  EXPECT_TRUE(tool->provider_binding().has_files());
}

struct CreateErrorCase {
  std::string name;
  // Mutates the inputs.
  void (*mutate)(ToolDefinition&, v1::RequirementRule&, v1::ProviderBinding&);
  std::string message;
};

class ToolCreateErrorTest : public ::testing::TestWithParam<CreateErrorCase> {};

TEST_P(ToolCreateErrorTest, IsInvalidArgumentNamingTheField) {
  ToolDefinition definition = Definition();
  auto rule = Parse<v1::RequirementRule>(kRule);
  auto provider = Parse<v1::ProviderBinding>("files {}");
  GetParam().mutate(definition, rule, provider);
  EXPECT_THAT(Tool::Create(definition, rule, provider, "tools[0] \"files.read\""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ToolCreateErrorTest,
    ::testing::Values(
        CreateErrorCase{"BadName",
                        [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
                          d.set_name("files read");
                        },
                        "tools[0] \"files.read\".definition.name"},
        CreateErrorCase{"NoDescription",
                        [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
                          d.clear_description();
                        },
                        "tools[0] \"files.read\".definition.description: empty"},
        CreateErrorCase{"NoCeiling",
                        [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
                          d.clear_required_capability();
                        },
                        "definition.required_capability: required"},
        CreateErrorCase{"ReadToolDestructive",
                        [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
                          d.mutable_annotations()->set_destructive(true);
                        },
                        "definition.annotations"},
        CreateErrorCase{"NoInputSchema",
                        [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
                          d.clear_input_schema();
                        },
                        "definition.input_schema: required"},
        CreateErrorCase{"InputNotAnObjectSchema",
                        [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
                          *d.mutable_input_schema() = ToStruct({{"type", "string"}});
                        },
                        "definition.input_schema.type: must be \"object\""},
        CreateErrorCase{
            "InputDoesNotCompile",
            [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
              *d.mutable_input_schema() = ToStruct({{"type", "object"}, {"required", "path"}});
            },
            "definition.input_schema: not a valid JSON Schema"},
        CreateErrorCase{"OutputDoesNotCompile",
                        [](ToolDefinition& d, v1::RequirementRule&, v1::ProviderBinding&) {
                          *d.mutable_output_schema() = ToStruct({{"type", "objekt"}});
                        },
                        "definition.output_schema: not a valid JSON Schema"},
        CreateErrorCase{
            "RuleMissing",
            [](ToolDefinition&, v1::RequirementRule& r, v1::ProviderBinding&) { r.Clear(); },
            "tools[0] \"files.read\".requirement: required"},
        CreateErrorCase{"RuleArgumentUndeclared",
                        [](ToolDefinition&, v1::RequirementRule& r, v1::ProviderBinding&) {
                          r.mutable_path_from_arguments()->set_path_argument("file");
                        },
                        "requirement.path_from_arguments.path_argument"},
        CreateErrorCase{
            "ProviderMissing",
            [](ToolDefinition&, v1::RequirementRule&, v1::ProviderBinding& p) { p.Clear(); },
            "tools[0] \"files.read\".provider: required"},
        CreateErrorCase{
            "ProviderIdEmpty",
            [](ToolDefinition&, v1::RequirementRule&, v1::ProviderBinding& p) { p.mutable_grpc(); },
            "provider.grpc.provider_id: empty"},
        CreateErrorCase{"ProviderIdPadded",
                        [](ToolDefinition&, v1::RequirementRule&, v1::ProviderBinding& p) {
                          p.mutable_grpc()->set_provider_id(" notion ");
                        },
                        "provider.grpc.provider_id: surrounding whitespace"}),
    [](const ::testing::TestParamInfo<CreateErrorCase>& info) { return info.param.name; });

TEST(ToolArgumentsTest, ValidArgumentsParse) {
  auto parsed = MakeTool()->ParseArguments(ToStruct({{"path", "scratch/a.md"}}));
  ASSERT_THAT(parsed, IsOk());
  EXPECT_EQ((*parsed)["path"], "scratch/a.md");
}

struct ArgumentsCase {
  std::string name;
  Json arguments;
  std::string detail;
};

class ToolArgumentsErrorTest : public ::testing::TestWithParam<ArgumentsCase> {};

TEST_P(ToolArgumentsErrorTest, RefusedWithoutLeakingValues) {
  absl::StatusOr<Json> parsed = MakeTool()->ParseArguments(ToStruct(GetParam().arguments));
  // What reaches audit (the status message) and the agent (RefusalError) is the code and a
  // fixed phrase: the argument values never appear there.
  ASSERT_THAT(parsed, StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_arguments"));
  protocol::v1::ProtocolError error = RefusalError(parsed.status());
  EXPECT_EQ(error.code(), "invalid_tool_arguments");
  EXPECT_THAT(error.message(), Not(HasSubstr("SECRET")));
  EXPECT_THAT(RefusalDetail(parsed.status()), HasSubstr(GetParam().detail));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ToolArgumentsErrorTest,
    ::testing::Values(ArgumentsCase{"Missing", Json::object(), "<root>"},
                      ArgumentsCase{"WrongType", {{"path", 7}}, "<root>[path]"},
                      ArgumentsCase{
                          "TooLong", {{"path", std::string(40, 'S') + "SECRET"}}, "<root>[path]"},
                      ArgumentsCase{"ExtraKey", {{"path", "a"}, {"SECRET", "grant"}}, "<root>"}),
    [](const ::testing::TestParamInfo<ArgumentsCase>& info) { return info.param.name; });

TEST(ToolRequirementTest, ResolvesAndChecksTheCeiling) {
  auto tool = MakeTool();
  Address alice;
  alice.set_human_user_id("user-alice");
  auto requirement = tool->ResolveRequirement({{"path", "scratch/a.md"}});
  ASSERT_THAT(requirement, IsOk());
  EXPECT_THAT(requirement->resource().path(),
              ::testing::ElementsAre("Workspace", "scratch", "a.md"));
  EXPECT_THAT(tool->CheckWithinCeiling(*requirement, alice), IsOk());

  requirement->mutable_resource()->mutable_owner()->set_human_user_id("user-bob");
  absl::Status outside = tool->CheckWithinCeiling(*requirement, alice);
  EXPECT_THAT(outside, StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_requirement"));
  EXPECT_TRUE(IsToolRefusal(outside));
}

ToolCall Call() { return Parse<ToolCall>(R"pb(id: "call-1" tool: "files.read" trace_id: "t")pb"); }

ToolResult Succeeded(const Json& output) {
  ToolResult result = Parse<ToolResult>(R"pb(
    call_id: "call-1"
    tool: "files.read"
    status: TOOL_RESULT_STATUS_SUCCEEDED
    completed_at { seconds: 1786957200 }
  )pb");
  *result.mutable_output() = *common::JsonToProtoValue(output);
  return result;
}

TEST(ToolResultTest, ValidResultPasses) {
  auto checked = MakeTool()->ValidateResult(Succeeded({{"content", "hi"}}), Call());
  ASSERT_THAT(checked, IsOk());
  EXPECT_EQ(checked->call_id(), "call-1");
}

TEST(ToolResultTest, FailedResultNeedsNoOutputSchemaMatch) {
  ToolResult failed = Parse<ToolResult>(R"pb(
    call_id: "call-1"
    tool: "files.read"
    status: TOOL_RESULT_STATUS_FAILED
    error { code: "not_found" message: "No file." retryable: false }
    completed_at { seconds: 1 }
  )pb");
  EXPECT_THAT(MakeTool()->ValidateResult(failed, Call()), IsOk());
}

struct ResultCase {
  std::string name;
  ToolResult result;
  std::string detail;
};

class ToolResultErrorTest : public ::testing::TestWithParam<ResultCase> {};

TEST_P(ToolResultErrorTest, IsInvalidToolResult) {
  auto checked = MakeTool()->ValidateResult(GetParam().result, Call());
  ASSERT_THAT(checked, StatusIs(absl::StatusCode::kFailedPrecondition, "invalid_tool_result"));
  EXPECT_THAT(RefusalDetail(checked.status()), HasSubstr(GetParam().detail));
}

ToolResult With(ToolResult result, void (*mutate)(ToolResult&)) {
  mutate(result);
  return result;
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ToolResultErrorTest,
    ::testing::Values(
        ResultCase{
            "OtherCallId",
            With(Succeeded({{"content", "x"}}), [](ToolResult& r) { r.set_call_id("call-2"); }),
            "result.call_id"},
        ResultCase{
            "OtherTool",
            With(Succeeded({{"content", "x"}}), [](ToolResult& r) { r.set_tool("files.stat"); }),
            "result.tool"},
        ResultCase{
            "NoStatus",
            With(Succeeded({{"content", "x"}}),
                 [](ToolResult& r) { r.set_status(protocol::v1::TOOL_RESULT_STATUS_UNSPECIFIED); }),
            "result.status"},
        ResultCase{"SucceededWithError",
                   With(Succeeded({{"content", "x"}}),
                        [](ToolResult& r) {
                          r.mutable_error()->set_code("x");
                          r.mutable_error()->set_message("x");
                        }),
                   "result"},
        ResultCase{
            "FailedWithoutError",
            With(Succeeded({{"content", "x"}}),
                 [](ToolResult& r) { r.set_status(protocol::v1::TOOL_RESULT_STATUS_FAILED); }),
            "result"},
        ResultCase{
            "NoCompletedAt",
            With(Succeeded({{"content", "x"}}), [](ToolResult& r) { r.clear_completed_at(); }),
            "result.completed_at"},
        ResultCase{"OutputViolatesSchema", Succeeded({{"size", 3}}), "result.output: <root>"},
        ResultCase{"OutputNotAnObject", Succeeded(Json("text")), "result.output: <root>"},
        ResultCase{"EmptyResult", ToolResult(), "result.call_id: empty"}),
    [](const ::testing::TestParamInfo<ResultCase>& info) { return info.param.name; });

}  // namespace
}  // namespace sharedos::envelope::tools
