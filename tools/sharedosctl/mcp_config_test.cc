#include "tools/sharedosctl/mcp_config.h"

#include <nlohmann/json.hpp>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::sharedosctl {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr char kUrl[] = "http://127.0.0.1:50052/mcp";

Json Recipe(const std::string& cli) {
  absl::StatusOr<std::string> text = McpConfig(cli, kUrl, "sharedos");
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? Json::parse(*text) : Json();
}

TEST(McpConfigTest, EveryCliGetsThePortableUrlAndTheTokenOnlyByVariable) {
  for (const char* cli : {"claude", "codex", "gemini", "opencode", "pi"}) {
    const Json recipe = Recipe(cli);
    EXPECT_EQ(recipe["cli"], cli);
    EXPECT_EQ(recipe["env"]["SHAREDOS_MCP_TOKEN"], "<mcp.token>") << cli;
    const std::string all = recipe.dump();
    EXPECT_THAT(all, HasSubstr("http://127.0.0.1:50052/mcp?tool_names=portable")) << cli;
    for (const Json& file : recipe["files"]) {
      // The token is read from the environment, never written down.
      EXPECT_THAT(file["content"].get<std::string>(), HasSubstr("SHAREDOS_MCP_TOKEN")) << cli;
    }
  }
}

TEST(McpConfigTest, EachCliHasItsOwnSwitches) {
  const Json claude = Recipe("claude");
  EXPECT_EQ(claude["files"][0]["path"], "sharedos-mcp.json");
  EXPECT_THAT(claude["files"][0]["content"].get<std::string>(),
              HasSubstr("\"Authorization\": \"Bearer ${SHAREDOS_MCP_TOKEN}\""));
  EXPECT_EQ(claude["args"], Json({"--mcp-config", "sharedos-mcp.json", "--strict-mcp-config",
                                  "--allowedTools", "mcp__sharedos"}));
  EXPECT_EQ(claude["env"]["ENABLE_TOOL_SEARCH"], "false");

  const Json codex = Recipe("codex");
  const std::string toml = codex["files"][0]["content"];
  EXPECT_THAT(toml, HasSubstr("bearer_token_env_var = \"SHAREDOS_MCP_TOKEN\""));
  EXPECT_THAT(toml, HasSubstr("default_tools_approval_mode = \"approve\""));
  EXPECT_THAT(toml, HasSubstr("approval_policy = \"never\""));
  EXPECT_EQ(codex["env"]["CODEX_HOME"], "{cwd}/.codex");

  const Json gemini = Recipe("gemini");
  const Json settings = Json::parse(gemini["files"][0]["content"].get<std::string>());
  EXPECT_EQ(settings["mcpServers"]["sharedos"]["trust"], true);

  const Json opencode = Recipe("opencode");
  const Json config = Json::parse(opencode["files"][0]["content"].get<std::string>());
  EXPECT_EQ(config["mcp"]["sharedos"]["oauth"], false);
  EXPECT_EQ(config["permission"]["*"], "deny");
  EXPECT_EQ(config["permission"]["sharedos_*"], "allow");

  const Json pi = Recipe("pi");
  EXPECT_EQ(pi["env"]["SHAREDOS_MCP_URL"], "http://127.0.0.1:50052/mcp?tool_names=portable");
  EXPECT_THAT(pi["args"].dump(), HasSubstr("{pi_extension}"));
}

TEST(McpConfigTest, OpencodeServeRegistersTheTurnsServerPerTurnWithTheTokenInTheRequest) {
  const Json serve = Recipe("opencode-serve");
  EXPECT_EQ(serve["args"], Json({"serve", "--hostname", "127.0.0.1", "--port", "0"}));
  EXPECT_EQ(serve["env"]["OPENCODE_SERVER_PASSWORD"], "<server password>");
  // The token is the turn's, sent per turn: not in the server's environment, not in a file.
  EXPECT_FALSE(serve["env"].contains("SHAREDOS_MCP_TOKEN"));
  const Json config = Json::parse(serve["files"][0]["content"].get<std::string>());
  EXPECT_EQ(serve["files"][0]["path"], "opencode.json");
  EXPECT_FALSE(config.contains("mcp"));
  EXPECT_EQ(config["permission"]["*"], "deny");
  EXPECT_EQ(config["permission"]["sharedos_*"], "allow");
  EXPECT_THAT(serve["files"].dump(), Not(HasSubstr("mcp.token")));
  const Json& turn = serve["turn"];
  EXPECT_EQ(turn["method"], "POST");
  EXPECT_EQ(turn["path"], "/mcp");
  EXPECT_EQ(turn["query"]["directory"], "{cwd}");
  EXPECT_EQ(turn["body"]["name"], "sharedos");
  EXPECT_EQ(turn["body"]["config"], Json({{"type", "remote"},
                                          {"url", "http://127.0.0.1:50052/mcp?tool_names=portable"},
                                          {"headers", {{"Authorization", "Bearer <mcp.token>"}}},
                                          {"oauth", false}}));
}

TEST(McpConfigTest, RefusesWhatIsNotARecipeInput) {
  EXPECT_THAT(McpConfig("cursor", kUrl, "sharedos").status().message(), HasSubstr("--cli"));
  EXPECT_THAT(McpConfig("claude", "", "sharedos").status().message(), HasSubstr("--url"));
  EXPECT_THAT(McpConfig("claude", "ftp://x/mcp", "sharedos").status().message(),
              HasSubstr("--url"));
  EXPECT_THAT(McpConfig("claude", "http://x/mcp?a=1", "sharedos").status().message(),
              HasSubstr("query"));
  EXPECT_THAT(McpConfig("claude", "http://x/m\"cp", "sharedos").status().message(),
              HasSubstr("quotes"));
  EXPECT_THAT(McpConfig("claude", kUrl, "Shared OS").status().message(), HasSubstr("--server"));
  EXPECT_THAT(McpConfig("claude", kUrl, "sharedos").value(), Not(HasSubstr("<script")));
}

}  // namespace
}  // namespace sharedos::sharedosctl
