#include "tools/sharedosctl/mcp_config.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace sharedos::sharedosctl {
namespace {

using Json = nlohmann::json;

// The turn's URL as every recipe serves it: portable tool names (dots → underscores), which every
// CLI accepts; SharedOS refuses a catalogue in which two tools would share one.
std::string PortableUrl(const std::string& url) { return url + "?tool_names=portable"; }

absl::Status CheckUrl(const std::string& url) {
  if (url.empty()) return absl::InvalidArgumentError("--url: required (OpenTurnResponse.mcp.url)");
  if (url.size() > 2048) return absl::InvalidArgumentError("--url: over 2048 bytes");
  if (!absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
    return absl::InvalidArgumentError("--url: must start with http:// or https://");
  }
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '\'') {
      return absl::InvalidArgumentError(
          "--url: spaces, quotes, backslashes and control or non-ASCII characters are not allowed");
    }
  }
  if (absl::StrContains(url, "?") || absl::StrContains(url, "#")) {
    return absl::InvalidArgumentError("--url: the turn's URL has no query or fragment");
  }
  return absl::OkStatus();
}

absl::Status CheckServer(const std::string& server) {
  if (server.empty() || server.size() > 32) {
    return absl::InvalidArgumentError("--server: 1 to 32 characters");
  }
  for (char c : server) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) {
      return absl::InvalidArgumentError("--server: only a-z, 0-9, _ and -");
    }
  }
  return absl::OkStatus();
}

Json File(const std::string& path, const std::string& content) {
  return Json{{"path", path}, {"content", content}};
}

std::string Pretty(const Json& value) { return value.dump(2) + "\n"; }

Json Claude(const std::string& url, const std::string& server) {
  const std::string file = "sharedos-mcp.json";
  const Json config = {
      {"mcpServers",
       {{server,
         {{"type", "http"},
          {"url", PortableUrl(url)},
          {"headers", {{"Authorization", absl::StrCat("Bearer ${", kMcpTokenVariable, "}")}}}}}}}};
  return Json{
      {"files", Json::array({File(file, Pretty(config))})},
      // Without it Claude Code defers MCP tools behind a search tool the model must call first.
      {"env", {{"ENABLE_TOOL_SEARCH", "false"}}},
      {"args",
       {"--mcp-config", file, "--strict-mcp-config", "--allowedTools",
        absl::StrCat("mcp__", server)}},
      {"toolNames",
       absl::StrCat("mcp__", server,
                    "__files_read: the portable name behind the server prefix. Claude Code drops "
                    "one of two tools whose names collapse to the same form without a word; "
                    "SharedOS never serves such a catalogue (OpenTurn refuses it).")}};
}

Json Codex(const std::string& url, const std::string& server) {
  const std::string config =
      absl::StrCat("approval_policy = \"never\"\n\n[mcp_servers.", server, "]\nurl = \"",
                   PortableUrl(url), "\"\nbearer_token_env_var = \"", kMcpTokenVariable,
                   "\"\nrequired = true\ndefault_tools_approval_mode = \"approve\"\n\n"
                   "# No features that reach a service of their own, and no telemetry (Codex "
                   "otherwise\n# exports metrics to its vendor at exit, waiting 5 s when it "
                   "cannot).\n[features]\nplugins = false\nremote_plugin = false\napps = "
                   "false\ntool_suggest = false\n\n[otel]\nexporter = \"none\"\n"
                   "trace_exporter = \"none\"\nmetrics_exporter = \"none\"\n\n[analytics]\n"
                   "enabled = false\n");
  return Json{{"files", Json::array({File(".codex/config.toml", config)})},
              {"env", {{"CODEX_HOME", "{cwd}/.codex"}}},
              {"args", {"exec", "--skip-git-repo-check", "--ephemeral"}},
              {"toolNames", absl::StrCat("files_read inside the namespace tool mcp__", server,
                                         "__ (Codex keeps colliding names apart with hash "
                                         "suffixes).")}};
}

Json Gemini(const std::string& url, const std::string& server) {
  // trust: without it a headless run leaves the server's tools out without a word.
  const Json settings = {
      {"mcpServers",
       {{server,
         {{"httpUrl", PortableUrl(url)},
          {"headers", {{"Authorization", absl::StrCat("Bearer $", kMcpTokenVariable)}}},
          {"trust", true}}}}}};
  return Json{{"files", Json::array({File(".gemini/settings.json", Pretty(settings))})},
              {"env", {{"GEMINI_CLI_TRUST_WORKSPACE", "true"}}},
              {"args", Json::array()},
              {"toolNames",
               absl::StrCat("mcp_", server, "_files_read (Gemini CLI also keeps dots in names).")}};
}

Json Opencode(const std::string& url, const std::string& server) {
  const Json config = {
      {"$schema", "https://opencode.ai/config.json"},
      {"mcp",
       {{server,
         {{"type", "remote"},
          {"url", PortableUrl(url)},
          {"headers", {{"Authorization", absl::StrCat("Bearer {env:", kMcpTokenVariable, "}")}}},
          {"oauth", false}}}}},
      // The turn's tools run without a prompt; every other tool of opencode's is refused.
      {"permission", {{"*", "deny"}, {absl::StrCat(server, "_*"), "allow"}}}};
  return Json{{"files", Json::array({File("opencode.json", Pretty(config))})},
              {"env", Json::object()},
              {"args", {"run"}},
              {"toolNames", absl::StrCat(server,
                                         "_files_read: the portable name behind the server "
                                         "prefix. opencode lets the later of two tools with "
                                         "the same name replace the earlier without a word; "
                                         "SharedOS never serves such a catalogue.")}};
}

// opencode's server mode: one warm `opencode serve` runs many turns, each registering the turn's
// MCP server on the running instance over opencode's HTTP API (a launch per turn costs 10-20 s of
// CPU; a turn on the warm server a few). The token travels in that request, never in a file.
Json OpencodeServe(const std::string& url, const std::string& server) {
  const Json config = {{"$schema", "https://opencode.ai/config.json"},
                       // As in the per-launch recipe: the turn's tools only, without a prompt.
                       {"permission", {{"*", "deny"}, {absl::StrCat(server, "_*"), "allow"}}}};
  const Json add_server = {{"name", server},
                           {"config",
                            {{"type", "remote"},
                             {"url", PortableUrl(url)},
                             {"headers", {{"Authorization", "Bearer <mcp.token>"}}},
                             {"oauth", false}}}};
  return Json{
      {"files", Json::array({File("opencode.json", Pretty(config))})},
      // The server's HTTP API is a harness seat: basic auth (user "opencode") with this password.
      {"env", {{"OPENCODE_SERVER_PASSWORD", "<server password>"}}},
      {"args", {"serve", "--hostname", "127.0.0.1", "--port", "0"}},
      // Per turn, on the server it printed ("opencode server listening on <base>"): this request
      // (re)places the server's MCP server for the instance of directory {cwd}; then a session is
      // created and the prompt sent there (POST /session, POST /session/<id>/message, same query).
      {"turn",
       {{"method", "POST"},
        {"path", "/mcp"},
        {"query", {{"directory", "{cwd}"}}},
        {"body", add_server}}},
      {"toolNames", absl::StrCat(server,
                                 "_files_read, as with opencode run. One turn at a time per "
                                 "directory: the instance has one MCP server of that name.")}};
}

Json Pi(const std::string& url, const std::string&) {
  // Pi has no MCP client by design; the extension (envelope_svc/mcp/pi) is its client.
  return Json{{"files", Json::array()},
              {"env", {{kMcpUrlVariable, PortableUrl(url)}}},
              {"args", {"--extension", "{pi_extension}", "--no-builtin-tools"}},
              {"toolNames",
               "files_read: the extension registers each tool under the name tools/list served."}};
}

}  // namespace

absl::StatusOr<std::string> McpConfig(const std::string& cli, const std::string& url,
                                      const std::string& server) {
  if (absl::Status checked = CheckUrl(url); !checked.ok()) return checked;
  if (absl::Status checked = CheckServer(server); !checked.ok()) return checked;
  Json recipe;
  if (cli == "claude") {
    recipe = Claude(url, server);
  } else if (cli == "codex") {
    recipe = Codex(url, server);
  } else if (cli == "gemini") {
    recipe = Gemini(url, server);
  } else if (cli == "opencode") {
    recipe = Opencode(url, server);
  } else if (cli == "opencode-serve") {
    recipe = OpencodeServe(url, server);
  } else if (cli == "pi") {
    recipe = Pi(url, server);
  } else {
    return absl::InvalidArgumentError(
        "--cli: one of claude, codex, gemini, opencode, opencode-serve, pi");
  }
  recipe["cli"] = cli;
  recipe["server"] = server;
  // opencode-serve takes the token in its per-turn request instead.
  if (cli != "opencode-serve") recipe["env"][kMcpTokenVariable] = "<mcp.token>";
  return recipe.dump(2) + "\n";
}

int McpConfigCommand(const Invocation& inv, const GlobalOptions&, const Clients&, std::ostream& out,
                     std::ostream& err) {
  const std::string server = inv.Has("server") ? inv.Get("server") : "sharedos";
  absl::StatusOr<std::string> recipe = McpConfig(inv.Get("cli"), inv.Get("url"), server);
  if (!recipe.ok()) return UsageError(err, recipe.status());
  out << *recipe;
  return kExitOk;
}

}  // namespace sharedos::sharedosctl
