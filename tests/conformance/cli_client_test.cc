#include "tests/conformance/cli_client.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::conformance {
namespace {

using nlohmann::json;

TEST(ResultFromModelTextTest, ARefusalCountsOnlyWhenItsSentenceReachedTheModel) {
  const std::string id = "capreq-" + std::string(64, 'a');
  // As Gemini CLI wraps it.
  const json denied = ResultFromModelText(
      "MCP tool 'files.create' reported tool error ... \"text\":\"SharedOS refused this call: "
      "no_matching_grant (denied). No grant authorizes this operation. It needs "
      "files:Workspace/s.md [create], requirement " +
      id + ".\"");
  EXPECT_EQ(denied["isError"], true);
  EXPECT_EQ(denied["_meta"]["sharedos/code"], "no_matching_grant");
  EXPECT_EQ(denied["_meta"]["sharedos/status"], "denied");
  EXPECT_EQ(denied["_meta"]["sharedos/requiredAuthority"]["id"], id);

  // The CLI's own error in its place (e.g. a schema complaint): no code reached the model.
  const json lost = ResultFromModelText(
      "MCP error -32602: Structured content does not match the tool's output schema");
  EXPECT_EQ(lost["isError"], true);
  EXPECT_FALSE(lost["_meta"].contains("sharedos/code"));
}

TEST(ResultFromModelTextTest, ASuccessIsTheJsonTheTextHolds) {
  // As Codex wraps it.
  const json read = ResultFromModelText("Wall time: 0.07 seconds\nOutput:\n{\"content\":\"hi\"}");
  EXPECT_EQ(read["isError"], false);
  EXPECT_EQ(read["structuredContent"]["content"], "hi");
}

TEST(CliOfColumnTest, EveryCliColumnHasItsCli) {
  EXPECT_EQ(CliOfColumn("claude-code"), "claude");
  EXPECT_EQ(CliOfColumn("gemini-cli"), "gemini");
  EXPECT_EQ(CliOfColumn("dsh"), "");
  EXPECT_EQ(CliOfColumn("mcp-legacy"), "");
}

}  // namespace
}  // namespace sharedos::conformance
