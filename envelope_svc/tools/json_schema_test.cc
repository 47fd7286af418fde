#include "envelope_svc/tools/json_schema.h"

#include <nlohmann/json.hpp>
#include <string>

#include "common/status/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::testing::HasSubstr;
using Json = nlohmann::json;

struct CompileErrorCase {
  std::string name;
  Json schema;
  std::string problem;
};

class CompileErrorTest : public ::testing::TestWithParam<CompileErrorCase> {};

TEST_P(CompileErrorTest, IsInvalidArgument) {
  EXPECT_THAT(JsonSchema::Compile(GetParam().schema),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().problem)));
}

INSTANTIATE_TEST_SUITE_P(
    Schemas, CompileErrorTest,
    ::testing::Values(
        CompileErrorCase{"NotAnObject", Json::array(), "not a JSON object"},
        CompileErrorCase{"StringSchema", "object", "not a JSON object"},
        CompileErrorCase{"UnknownTypeName", {{"type", "objekt"}}, "not a valid JSON Schema"},
        CompileErrorCase{"TypeNotAString", {{"type", 7}}, "not a valid JSON Schema"},
        CompileErrorCase{"RequiredNotAnArray", {{"required", "a"}}, "not a valid JSON Schema"},
        CompileErrorCase{"NegativeMaxLength", {{"maxLength", -1}}, "not a valid JSON Schema"},
        CompileErrorCase{"PropertiesNotAnObject", {{"properties", 3}}, "not a valid JSON Schema"},
        CompileErrorCase{"RemoteRefNeverFetched",
                         {{"$ref", "https://example.com/schema.json"}},
                         "not a valid JSON Schema"},
        CompileErrorCase{
            "DanglingLocalRef", {{"$ref", "#/definitions/missing"}}, "not a valid JSON Schema"},
        // Found by json_schema_fuzzer: valijson follows a $ref naming a $ref by recursion with
        // no cycle check, so each of these overflowed the stack and ended the process.
        CompileErrorCase{"SelfRef", {{"$ref", "#"}}, "a $ref chain is circular"},
        CompileErrorCase{"RelativeRefToTheRoot",
                         Json::parse(R"({"definitions": {"n": {"type": "array"}},
                                         "$ref": "defi~itions/n"})"),
                         "a $ref chain is circular"},
        CompileErrorCase{"RefCycle",
                         Json::parse(R"({"definitions": {"a": {"$ref": "#/definitions/b"},
                                                         "b": {"$ref": "#/definitions/a"}},
                                         "properties": {"x": {"$ref": "#/definitions/a"}}})"),
                         "a $ref chain is circular"},
        CompileErrorCase{"OverlongRef",
                         {{"$ref", "#" + std::string(100000, '/') + "definitions"}},
                         "a $ref is longer than 1024 bytes"}),
    [](const ::testing::TestParamInfo<CompileErrorCase>& info) { return info.param.name; });

const Json kObjectSchema = {
    {"type", "object"},
    {"properties",
     {{"path", {{"type", "string"}, {"maxLength", 8}}},
      {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}}}},
    {"required", {"path"}},
    {"additionalProperties", false},
};

struct ValidateCase {
  std::string name;
  Json value;
  // Empty: valid.
  std::string violation;
};

class ValidateTest : public ::testing::TestWithParam<ValidateCase> {};

TEST_P(ValidateTest, Validates) {
  auto schema = JsonSchema::Compile(kObjectSchema);
  ASSERT_THAT(schema, IsOk());
  if (GetParam().violation.empty()) {
    EXPECT_THAT((*schema)->Validate(GetParam().value), IsOk());
  } else {
    EXPECT_THAT((*schema)->Validate(GetParam().value),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().violation)));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Values, ValidateTest,
    ::testing::Values(ValidateCase{"Minimal", {{"path", "a/b"}}, ""},
                      ValidateCase{"WithLimit", {{"path", "a"}, {"limit", 100}}, ""},
                      ValidateCase{"MissingRequired", Json::object(), "<root>"},
                      ValidateCase{"ExtraKey", {{"path", "a"}, {"extra", 1}}, "<root>"},
                      ValidateCase{"WrongType", {{"path", 3}}, "<root>[path]"},
                      ValidateCase{"TooLong", {{"path", "abcdefghi"}}, "<root>[path]"},
                      ValidateCase{
                          "FloatForInteger", {{"path", "a"}, {"limit", 1.5}}, "<root>[limit]"},
                      ValidateCase{"OverMaximum", {{"path", "a"}, {"limit", 101}}, "<root>[limit]"},
                      ValidateCase{"NotAnObject", Json::array(), "<root>"}),
    [](const ::testing::TestParamInfo<ValidateCase>& info) { return info.param.name; });

TEST(JsonSchemaTest, IntegralDoubleIsAnInteger) {
  // Arguments arrive as protobuf doubles; proto_json turns 3.0 into the integer 3.
  auto schema = JsonSchema::Compile({{"type", "integer"}});
  ASSERT_THAT(schema, IsOk());
  EXPECT_THAT((*schema)->Validate(Json(3)), IsOk());
}

TEST(JsonSchemaTest, LocalRefsResolve) {
  auto schema = JsonSchema::Compile({{"definitions", {{"name", {{"type", "string"}}}}},
                                     {"type", "object"},
                                     {"properties", {{"a", {{"$ref", "#/definitions/name"}}}}}});
  ASSERT_THAT(schema, IsOk());
  EXPECT_THAT((*schema)->Validate({{"a", "x"}}), IsOk());
  EXPECT_THAT((*schema)->Validate({{"a", 1}}), StatusIs(absl::StatusCode::kInvalidArgument));
}

// A schema recursive through a keyword (not a $ref naming a $ref) is fine: valijson caches it.
TEST(JsonSchemaTest, ARecursiveSchemaThroughItemsCompiles) {
  auto schema = JsonSchema::Compile(Json::parse(
      R"({"definitions": {"n": {"type": "array", "items": {"$ref": "#/definitions/n"}}},
          "$ref": "#/definitions/n"})"));
  ASSERT_THAT(schema, IsOk());
  EXPECT_THAT((*schema)->Validate(Json::parse("[[[], [[]]]]")), IsOk());
  EXPECT_THAT((*schema)->Validate(Json::parse("[[1]]")),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(JsonSchemaTest, ManyViolationsAreCapped) {
  Json properties = Json::object();
  Json value = Json::object();
  for (int i = 0; i < 20; ++i) {
    properties["p" + std::to_string(i)] = {{"type", "string"}};
    value["p" + std::to_string(i)] = i;
  }
  auto schema = JsonSchema::Compile({{"type", "object"}, {"properties", properties}});
  ASSERT_THAT(schema, IsOk());
  absl::Status status = (*schema)->Validate(value);
  ASSERT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_LE(std::count(status.message().begin(), status.message().end(), ';'), 3);
}

}  // namespace
}  // namespace sharedos::envelope::tools

namespace sharedos::envelope::tools {
namespace {

// std::regex recurses per character: without the cap this input kills the process.
TEST(JsonSchemaRegexTest, LongStringUnderPatternIsRefusedNotCrashing) {
  auto schema = JsonSchema::Compile(
      {{"type", "object"}, {"properties", {{"q", {{"type", "string"}, {"pattern", "^(a|b)*$"}}}}}});
  ASSERT_THAT(schema, IsOk());
  EXPECT_THAT((*schema)->Validate({{"q", std::string(JsonSchema::kMaxRegexCheckedBytes, 'a')}}),
              IsOk());
  EXPECT_THAT((*schema)->Validate({{"q", "abc"}}), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT((*schema)->Validate({{"q", std::string(1000000, 'a')}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("<root>[q]: longer than")));
}

TEST(JsonSchemaRegexTest, LongKeyUnderPatternPropertiesIsRefused) {
  auto schema = JsonSchema::Compile(
      {{"type", "object"}, {"patternProperties", {{"^x", {{"type", "string"}}}}}});
  ASSERT_THAT(schema, IsOk());
  EXPECT_THAT((*schema)->Validate({{std::string(100000, 'x'), "v"}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("longer than")));
}

TEST(JsonSchemaRegexTest, LongStringUnderDateTimeFormatIsRefused) {
  auto schema = JsonSchema::Compile({{"type", "string"}, {"format", "date-time"}});
  ASSERT_THAT(schema, IsOk());
  EXPECT_THAT((*schema)->Validate(Json("2026-08-18T09:00:00Z")), IsOk());
  EXPECT_THAT((*schema)->Validate(Json(std::string(100000, '1'))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("longer than")));
}

TEST(JsonSchemaRegexTest, LongStringsAreFineWithoutRegexKeywords) {
  auto schema = JsonSchema::Compile({{"type", "string"}, {"format", "uri"}});
  ASSERT_THAT(schema, IsOk());
  EXPECT_THAT((*schema)->Validate(Json(std::string(1000000, 'a'))), IsOk());
}

TEST(JsonSchemaRegexTest, OverLongPatternDoesNotCompile) {
  EXPECT_THAT(
      JsonSchema::Compile({{"pattern", std::string(JsonSchema::kMaxSchemaPatternBytes + 1, 'a')}}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pattern is longer than")));
}

}  // namespace
}  // namespace sharedos::envelope::tools
