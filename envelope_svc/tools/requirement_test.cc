#include "envelope_svc/tools/requirement.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/status/status_matchers.h"
#include "envelope_svc/tools/tool_refusal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::tools {
namespace {

using ::sharedos::common::IsOk;
using ::sharedos::common::StatusIs;
using ::sharedos::protocol::v1::Address;
using ::sharedos::protocol::v1::CapabilityRequirement;
using ::testing::HasSubstr;
using Json = nlohmann::json;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

const char kCeiling[] = R"pb(resource { namespace: "files" path: "Workspace" }
                             action: "read")pb";

struct ResolveCase {
  std::string name;
  std::string rule;
  Json arguments;
  // Expected requirement (text proto); empty when resolution fails.
  std::string expected;
  // Substring of the failure detail.
  std::string detail;
};

class ResolveTest : public ::testing::TestWithParam<ResolveCase> {};

TEST_P(ResolveTest, Resolves) {
  const ResolveCase& test = GetParam();
  auto rule = Parse<v1::RequirementRule>(test.rule);
  auto ceiling = Parse<CapabilityRequirement>(kCeiling);
  absl::StatusOr<CapabilityRequirement> resolved =
      ResolveRequirement(rule, ceiling, test.arguments);
  if (test.expected.empty()) {
    ASSERT_THAT(resolved, StatusIs(absl::StatusCode::kFailedPrecondition,
                                   "tool_requirement_resolution_failed"));
    EXPECT_TRUE(IsToolRefusal(resolved.status()));
    EXPECT_THAT(RefusalDetail(resolved.status()), HasSubstr(test.detail));
  } else {
    ASSERT_THAT(resolved, IsOk());
    auto expected = Parse<CapabilityRequirement>(test.expected);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*resolved, expected))
        << resolved->DebugString();
  }
}

const char kAppend[] = "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND }";
const char kReplace[] = "path_from_arguments { path_argument: 'path' mode: PATH_MODE_REPLACE }";
const char kOptional[] =
    "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND path_optional: true }";
const char kOwner[] =
    "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND owner_argument: 'owner' "
    "}";

INSTANTIATE_TEST_SUITE_P(
    Rules, ResolveTest,
    ::testing::Values(
        ResolveCase{"Ceiling", "ceiling {}", Json::object(), kCeiling, ""},
        ResolveCase{"Fixed",
                    "fixed { resource { namespace: 'files' path: 'Workspace' path: 'ledger' } "
                    "action: 'list' }",
                    {{"path", "x"}},
                    "resource { namespace: 'files' path: 'Workspace' path: 'ledger' } action: "
                    "'list'",
                    ""},
        ResolveCase{"AppendString",
                    kAppend,
                    {{"path", "scratch/draft.md"}},
                    "resource { namespace: 'files' path: 'Workspace' path: 'scratch' path: "
                    "'draft.md' } action: 'read'",
                    ""},
        ResolveCase{"AppendArray",
                    kAppend,
                    {{"path", {"scratch", "a b"}}},
                    "resource { namespace: 'files' path: 'Workspace' path: 'scratch' path: 'a "
                    "b' } action: 'read'",
                    ""},
        ResolveCase{"AppendEmptyIsTheCeilingPath", kAppend, {{"path", ""}}, kCeiling, ""},
        ResolveCase{"AppendEmptyArray", kAppend, {{"path", Json::array()}}, kCeiling, ""},
        ResolveCase{"Replace",
                    kReplace,
                    {{"path", "Other/x"}},
                    "resource { namespace: 'files' path: 'Other' path: 'x' } action: 'read'",
                    ""},
        ResolveCase{"ReplaceEmptyIsTheRoot",
                    kReplace,
                    {{"path", ""}},
                    "resource { namespace: 'files' } action: 'read'",
                    ""},
        ResolveCase{"OptionalAbsent", kOptional, Json::object(), kCeiling, ""},
        ResolveCase{"RequiredAbsent", kAppend, Json::object(), "", "path argument: missing"},
        ResolveCase{
            "NotAStringOrArray", kAppend, {{"path", 3}}, "", "neither a string nor an array"},
        ResolveCase{
            "ArrayOfNonStrings", kAppend, {{"path", {"a", 1}}}, "", "a segment is not a string"},
        ResolveCase{"DotDot", kAppend, {{"path", "scratch/../ledger"}}, "", "requirement"},
        ResolveCase{"DotDotInArray", kAppend, {{"path", {".."}}}, "", "requirement"},
        ResolveCase{"Dot", kAppend, {{"path", "./a"}}, "", "requirement"},
        ResolveCase{"Absolute", kAppend, {{"path", "/etc/passwd"}}, "", "requirement"},
        ResolveCase{"DoubleSlash", kAppend, {{"path", "a//b"}}, "", "requirement"},
        ResolveCase{"TrailingSlash", kAppend, {{"path", "a/"}}, "", "requirement"},
        ResolveCase{"SlashInsideArraySegment", kAppend, {{"path", {"a/b"}}}, "", "requirement"},
        ResolveCase{"Backslash", kAppend, {{"path", "a\\b"}}, "", "requirement"},
        ResolveCase{
            "ControlCharacter", kAppend, {{"path", std::string("a\x01", 2)}}, "", "requirement"},
        ResolveCase{"SurroundingSpace", kAppend, {{"path", " a"}}, "", "requirement"},
        ResolveCase{"TooManySegments",
                    kAppend,
                    {{"path", Json(std::vector<std::string>(64, "s"))}},
                    "",
                    "more than 64"},
        ResolveCase{"OwnerFromArguments",
                    kOwner,
                    {{"path", "a"}, {"owner", {{"kind", "human"}, {"userId", "user-bob"}}}},
                    "resource { namespace: 'files' path: 'Workspace' path: 'a' owner { "
                    "human_user_id: 'user-bob' } } action: 'read'",
                    ""},
        ResolveCase{"OwnerAgent",
                    kOwner,
                    {{"path", "a"}, {"owner", {{"kind", "agent"}, {"agentId", "a-1"}}}},
                    "resource { namespace: 'files' path: 'Workspace' path: 'a' owner { agent_id: "
                    "'a-1' } } action: 'read'",
                    ""},
        ResolveCase{"OwnerAbsentIsLeftOut",
                    kOwner,
                    {{"path", "a"}},
                    "resource { namespace: 'files' path: 'Workspace' path: 'a' } action: 'read'",
                    ""},
        ResolveCase{"OwnerNotAnObject",
                    kOwner,
                    {{"path", "a"}, {"owner", "human:bob"}},
                    "",
                    "owner argument: not an object"},
        ResolveCase{"OwnerUnknownKind",
                    kOwner,
                    {{"path", "a"}, {"owner", {{"kind", "robot"}, {"robotId", "r"}}}},
                    "",
                    "unknown kind"},
        ResolveCase{"OwnerWrongIdKey",
                    kOwner,
                    {{"path", "a"}, {"owner", {{"kind", "human"}, {"agentId", "r"}}}},
                    "",
                    "expected exactly kind and userId"},
        ResolveCase{
            "OwnerExtraKey",
            kOwner,
            {{"path", "a"}, {"owner", {{"kind", "human"}, {"userId", "u"}, {"grant", "all"}}}},
            "",
            "expected exactly kind and userId"},
        ResolveCase{"OwnerEmptyId",
                    kOwner,
                    {{"path", "a"}, {"owner", {{"kind", "human"}, {"userId", " "}}}},
                    "",
                    "requirement.resource.owner"}),
    [](const ::testing::TestParamInfo<ResolveCase>& info) { return info.param.name; });

TEST(ResolveRequirementTest, ResolutionTrimsLikeTheProtocol) {
  auto rule =
      Parse<v1::RequirementRule>("fixed { resource { namespace: ' files ' } action: ' read ' }");
  auto resolved = ResolveRequirement(rule, Parse<CapabilityRequirement>(kCeiling), Json::object());
  ASSERT_THAT(resolved, IsOk());
  EXPECT_EQ(resolved->action(), "read");
  EXPECT_EQ(resolved->resource().namespace_(), "files");
}

struct CeilingCase {
  std::string name;
  std::string requirement;
  std::string ceiling;
  bool within;
};

class WithinCeilingTest : public ::testing::TestWithParam<CeilingCase> {};

TEST_P(WithinCeilingTest, Decides) {
  Address alice;
  alice.set_human_user_id("user-alice");
  EXPECT_EQ(WithinCeiling(Parse<CapabilityRequirement>(GetParam().requirement),
                          Parse<CapabilityRequirement>(GetParam().ceiling), alice),
            GetParam().within);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WithinCeilingTest,
    ::testing::Values(
        CeilingCase{"Equal", kCeiling, kCeiling, true},
        CeilingCase{"Below",
                    "resource { namespace: 'files' path: 'Workspace' path: 'a' } action: 'read'",
                    kCeiling, true},
        CeilingCase{"UnderEmptyCeilingPath",
                    "resource { namespace: 'files' path: 'x' } action: 'read'",
                    "resource { namespace: 'files' } action: 'read'", true},
        CeilingCase{"Above", "resource { namespace: 'files' } action: 'read'", kCeiling, false},
        CeilingCase{"Sibling", "resource { namespace: 'files' path: 'Other' } action: 'read'",
                    kCeiling, false},
        CeilingCase{"SegmentPrefixIsNotStringPrefix",
                    "resource { namespace: 'files' path: 'Workspace2' } action: 'read'", kCeiling,
                    false},
        CeilingCase{"OtherAction",
                    "resource { namespace: 'files' path: 'Workspace' } action: 'replace'", kCeiling,
                    false},
        CeilingCase{"WildcardRequirementUnderNamedCeiling",
                    "resource { namespace: 'files' path: 'Workspace' } action: '*'", kCeiling,
                    false},
        CeilingCase{"OtherNamespace",
                    "resource { namespace: 'repo' path: 'Workspace' } action: 'read'", kCeiling,
                    false},
        CeilingCase{"ExplicitContextOwnerEqualsDefault",
                    "resource { namespace: 'files' path: 'Workspace' owner { human_user_id: "
                    "'user-alice' } } action: 'read'",
                    kCeiling, true},
        CeilingCase{"ForeignOwner",
                    "resource { namespace: 'files' path: 'Workspace' owner { human_user_id: "
                    "'user-bob' } } action: 'read'",
                    kCeiling, false},
        CeilingCase{"CeilingNamesOwner",
                    "resource { namespace: 'files' path: 'Workspace' } action: 'read'",
                    "resource { namespace: 'files' path: 'Workspace' owner { human_user_id: "
                    "'user-bob' } } action: 'read'",
                    false}),
    [](const ::testing::TestParamInfo<CeilingCase>& info) { return info.param.name; });

TEST(WithDefaultOwnerTest, FillsOnlyAnAbsentOwner) {
  Address alice;
  alice.set_human_user_id("user-alice");
  auto absent = WithDefaultOwner(Parse<CapabilityRequirement>(kCeiling), alice);
  EXPECT_EQ(absent.resource().owner().human_user_id(), "user-alice");
  auto named = WithDefaultOwner(
      Parse<CapabilityRequirement>(
          "resource { namespace: 'files' owner { agent_id: 'x' } } action: 'read'"),
      alice);
  EXPECT_EQ(named.resource().owner().agent_id(), "x");
}

struct RuleErrorCase {
  std::string name;
  std::string rule;
  std::string message;
};

class RuleErrorTest : public ::testing::TestWithParam<RuleErrorCase> {};

TEST_P(RuleErrorTest, IsInvalidArgument) {
  const Json schema = {
      {"type", "object"},
      {"properties", {{"path", {{"type", "string"}}}, {"owner", {{"type", "object"}}}}}};
  EXPECT_THAT(ValidateRequirementRule(Parse<v1::RequirementRule>(GetParam().rule), schema, "t"),
              StatusIs(absl::StatusCode::kInvalidArgument, GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, RuleErrorTest,
    ::testing::Values(
        RuleErrorCase{"NoKind", "", "t: required"},
        RuleErrorCase{"FixedWithoutResource", "fixed { action: 'read' }",
                      "t.fixed.resource: required"},
        RuleErrorCase{"FixedEmptyAction", "fixed { resource { namespace: 'files' } }",
                      "t.fixed.action: empty"},
        RuleErrorCase{"FixedBadSegment",
                      "fixed { resource { namespace: 'files' path: '..' } action: 'read' }",
                      "t.fixed.resource.path[0]: is \"..\""},
        RuleErrorCase{"EmptyPathArgument", "path_from_arguments { mode: PATH_MODE_APPEND }",
                      "t.path_from_arguments.path_argument: empty"},
        RuleErrorCase{"UndeclaredPathArgument",
                      "path_from_arguments { path_argument: 'file' mode: PATH_MODE_APPEND }",
                      "t.path_from_arguments.path_argument: argument \"file\" is not declared in "
                      "input_schema.properties"},
        RuleErrorCase{"NoMode", "path_from_arguments { path_argument: 'path' }",
                      "t.path_from_arguments.mode: unspecified"},
        RuleErrorCase{"UndeclaredOwnerArgument",
                      "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND "
                      "owner_argument: 'who' }",
                      "t.path_from_arguments.owner_argument: argument \"who\" is not declared in "
                      "input_schema.properties"},
        RuleErrorCase{"OwnerArgumentIsPathArgument",
                      "path_from_arguments { path_argument: 'path' mode: PATH_MODE_APPEND "
                      "owner_argument: 'path' }",
                      "t.path_from_arguments.owner_argument: same as path_argument"}),
    [](const ::testing::TestParamInfo<RuleErrorCase>& info) { return info.param.name; });

}  // namespace
}  // namespace sharedos::envelope::tools
