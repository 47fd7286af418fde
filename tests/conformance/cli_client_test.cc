#include "tests/conformance/cli_client.h"

#include <signal.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/conformance/json_lines_child.h"
#include "tests/testing/process.h"

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

// Whether `pid` still runs (a zombie waiting for its reaper does not).
bool Running(pid_t pid) {
  if (kill(pid, 0) != 0) return errno != ESRCH;
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  std::getline(stat, line);
  const size_t state = line.rfind(')');
  return state != std::string::npos && line.size() > state + 2 && line[state + 2] != 'Z';
}

// The harness stops the driver (scripted_model.mjs) with SIGTERM; a server it started (the warm
// `opencode serve`, whose npm launcher runs the real program as its child) must stop with it, or
// every run of the suite leaves one behind.
TEST(ScriptedModelDriverTest, StoppingTheDriverStopsWhatTheServerStarted) {
  const std::string node = FindNode();
  ASSERT_FALSE(node.empty()) << "node is not on PATH (run tools/setup.sh)";
  const std::string dir = ::testing::TempDir();
  const std::string pid_file = absl::StrCat(dir, "/grandchild.pid");
  pid_t grandchild = -1;
  {
    JsonLinesChild driver;
    ASSERT_TRUE(driver.Start({node, testing::RunfilePath("tests/cli/scripted_model.mjs")}).ok());
    ASSERT_TRUE(driver.Read(absl::Seconds(30)).ok());
    // A launcher (sh) whose child (sleep) is the long-running program.
    const nlohmann::json served =
        driver
            .Ask({{"op", "serve"},
                  {"command",
                   {"/bin/sh", "-c",
                    absl::StrCat("sleep 600 & echo $! > ", pid_file,
                                 "; echo listening on http://127.0.0.1:9/; wait")}},
                  {"env", {{"PATH", "/usr/bin:/bin"}}},
                  {"cwd", dir},
                  {"timeoutMs", 30000},
                  {"password", "p"}},
                 absl::Seconds(40))
            .value_or(nlohmann::json());
    ASSERT_EQ(served.value("ok", false), true) << served.dump();
    std::string text;
    std::getline(std::ifstream(pid_file), text);
    ASSERT_TRUE(absl::SimpleAtoi(text, &grandchild)) << text;
    ASSERT_TRUE(Running(grandchild));
  }  // the driver stopped as the harness stops it: stdin closed, SIGTERM, waited for
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (Running(grandchild) && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(20));
  const bool left = Running(grandchild);
  if (left) kill(grandchild, SIGKILL);
  EXPECT_FALSE(left) << "the server's child outlived the driver";
}

TEST(CliOfColumnTest, EveryCliColumnHasItsCli) {
  EXPECT_EQ(CliOfColumn("claude-code"), "claude");
  EXPECT_EQ(CliOfColumn("gemini-cli"), "gemini");
  EXPECT_EQ(CliOfColumn("dsh"), "");
  EXPECT_EQ(CliOfColumn("mcp-legacy"), "");
}

}  // namespace
}  // namespace sharedos::conformance
