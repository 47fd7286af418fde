#include "tests/conformance/cli_client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/status/status_macros.h"
#include "tests/conformance/json_lines_child.h"
#include "tests/testing/process.h"

namespace sharedos::conformance {
namespace {

using nlohmann::json;

constexpr char kPrompt[] = "Work in the workspace.";
// A scripted turn: the CLI's launch, each model round trip and its exit, each bounded.
constexpr absl::Duration kStepTimeout = absl::Seconds(90);
constexpr int kCliTimeoutMs = 180000;
// The warm `opencode serve` (one per column): its start, bounded.
constexpr int kServeStartTimeoutMs = 180000;

std::string Portable(const std::string& name) { return absl::StrReplaceAll(name, {{".", "_"}}); }

void MakeDirs(const std::string& path) {
  std::string at;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      at = path.substr(0, i);
      mkdir(at.c_str(), 0700);
    }
  }
}

absl::Status WriteUnder(const std::string& root, const std::string& relative,
                        const std::string& content) {
  const std::string path = root + "/" + relative;
  MakeDirs(path.substr(0, path.rfind('/')));
  return testing::WriteFile(path, content);
}

class CliClient final : public McpClient {
 public:
  explicit CliClient(CliClientOptions options) : options_(std::move(options)) {}

  absl::Status Start(const std::string& node) {
    RETURN_IF_ERROR(child_.Start(
        {node, options_.node_root + "/tests/cli/scripted_model.mjs",
         absl::StrCat("--log=", options_.scratch, "/", options_.column, "-model.jsonl")}));
    absl::StatusOr<json> hello = child_.Read(absl::Seconds(30));
    if (!hello.ok()) return hello.status();
    model_port_ = hello->value("port", 0);
    if (model_port_ <= 0) return absl::FailedPreconditionError("scripted model: no port");
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::string>> Connect(const std::string& url,
                                                   const std::string& token) override {
    ++turn_;
    if (CliOfColumn(options_.column) == "opencode") {
      RETURN_IF_ERROR(PromptWarmServer(url, token));
      return OfferedTools();
    }
    const std::string dir = absl::StrCat(options_.scratch, "/", options_.column, "-turn", turn_);
    home_ = dir + "/home";
    work_ = dir + "/work";
    MakeDirs(home_);
    MakeDirs(work_);
    // The recipe a host ships, verbatim (tools/sharedosctl/mcp_config.h).
    testing::CommandResult made = testing::RunToCompletion(
        options_.sharedosctl,
        {"mcp-config", "--cli=" + CliOfColumn(options_.column), "--url=" + url});
    if (made.exit_code != 0) {
      return absl::FailedPreconditionError("sharedosctl mcp-config: " + made.output);
    }
    json recipe = json::parse(made.output, nullptr, false);
    if (recipe.is_discarded()) return absl::InternalError("mcp-config: not JSON");
    for (const json& file : recipe["files"]) {
      RETURN_IF_ERROR(WriteUnder(work_, file["path"], file["content"]));
    }
    json env = json::object();
    env["PATH"] = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
    env["HOME"] = home_;
    for (auto it = recipe["env"].begin(); it != recipe["env"].end(); ++it) {
      env[it.key()] = Fill(it.value().get<std::string>());
    }
    env["SHAREDOS_MCP_TOKEN"] = token;
    std::vector<std::string> command = {
        absl::StrCat(options_.node_root, "/node_modules/.bin/", CliOfColumn(options_.column))};
    for (const json& arg : recipe["args"]) command.push_back(Fill(arg.get<std::string>()));
    RETURN_IF_ERROR(AddModel(env, command));
    json launch = {{"op", "launch"},
                   {"command", command},
                   {"env", env},
                   {"cwd", work_},
                   {"timeoutMs", kCliTimeoutMs}};
    auto launched = child_.Ask(launch, kStepTimeout);
    if (!launched.ok()) return launched.status();
    if (!launched->value("ok", false)) {
      return absl::UnavailableError(absl::StrCat("launch: ", launched->value("error", "")));
    }
    return OfferedTools();
  }

  // The SharedOS tools the CLI offered its model on this turn (canonical names).
  absl::StatusOr<std::vector<std::string>> OfferedTools() {
    auto offered = child_.Ask({{"op", "tools"}}, kStepTimeout);
    if (!offered.ok()) return offered.status();
    if (!offered->value("ok", false)) {
      return absl::UnavailableError(absl::StrCat("the CLI: ", offered->value("error", "")));
    }
    // The CLI's names mapped back to canonical ones: the name itself, or its portable form
    // behind the CLI's server prefix.
    names_.clear();
    like_.clear();
    for (const json& name : (*offered)["tools"]) {
      const std::string shown = name;
      for (const std::string& canonical : options_.tool_names) {
        const std::string portable = Portable(canonical);
        if (shown == canonical || shown == portable ||
            (shown.size() > portable.size() &&
             shown.compare(shown.size() - portable.size(), portable.size(), portable) == 0 &&
             (shown[shown.size() - portable.size() - 1] == '_'))) {
          names_.push_back(canonical);
          if (like_.empty()) like_ = canonical;
          break;
        }
      }
    }
    return names_;
  }

  absl::StatusOr<json> Call(const std::string& tool, const json& arguments) override {
    auto answer = child_.Ask(
        {{"op", "call"}, {"tool", tool}, {"arguments", arguments}, {"like", like_}}, kStepTimeout);
    if (!answer.ok()) return answer.status();
    if (!answer->value("ok", false)) {
      return absl::UnavailableError(absl::StrCat("the CLI: ", answer->value("error", "")));
    }
    const std::string text = answer->value("text", "");
    if (!answer->value("offered", false)) {
      return absl::FailedPreconditionError(
          absl::StrCat("refused by the CLI's own router (", answer->value("name", ""),
                       " is not among the tools it offered its model): ", text.substr(0, 300)));
    }
    json result = ResultFromModelText(text);
    result["_meta"]["sharedos/modelSaw"] = text.substr(0, 2000);
    return result;
  }

  bool RouterRefusesUnlisted() const override { return true; }

  absl::Status Close() override {
    auto ended = child_.Ask({{"op", "end"}, {"text", "Done."}}, kStepTimeout);
    if (!ended.ok()) return ended.status();
    if (!ended->value("ok", false)) {
      return absl::UnavailableError(absl::StrCat("the CLI: ", ended->value("error", "")));
    }
    if (!(*ended)["signal"].is_null()) {
      return absl::DeadlineExceededError(
          absl::StrCat("the CLI was stopped (", (*ended)["signal"].dump(),
                       "): ", ended->value("stderr", "").substr(0, 1000)));
    }
    return absl::OkStatus();
  }

 private:
  // opencode (issue 35): one warm `opencode serve` per column, started on the first turn from
  // `sharedosctl mcp-config --cli=opencode-serve` verbatim (its own HOME and directory, a random
  // server password); each turn sends that recipe's per-turn request (the turn's MCP server with
  // the turn's token) and a prompt to it, instead of launching opencode (10-20 s of CPU each).
  absl::Status PromptWarmServer(const std::string& url, const std::string& token) {
    testing::CommandResult made = testing::RunToCompletion(
        options_.sharedosctl, {"mcp-config", "--cli=opencode-serve", "--url=" + url});
    if (made.exit_code != 0) {
      return absl::FailedPreconditionError("sharedosctl mcp-config: " + made.output);
    }
    json recipe = json::parse(made.output, nullptr, false);
    if (recipe.is_discarded()) return absl::InternalError("mcp-config: not JSON");
    // A server that did not start is not tried again on every later turn.
    if (!serve_failed_.ok()) return serve_failed_;
    if (!serving_) {
      const std::string dir = absl::StrCat(options_.scratch, "/", options_.column, "-serve");
      home_ = dir + "/home";
      work_ = dir + "/work";
      MakeDirs(home_);
      MakeDirs(work_);
      for (const json& file : recipe["files"]) {
        RETURN_IF_ERROR(WriteUnder(work_, file["path"], file["content"]));
      }
      const std::string password = RandomHex(16);
      if (password.empty()) return absl::InternalError("no randomness for the server's password");
      json env = json::object();
      env["PATH"] = std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin";
      env["HOME"] = home_;
      for (auto it = recipe["env"].begin(); it != recipe["env"].end(); ++it) {
        env[it.key()] = absl::StrReplaceAll(Fill(it.value().get<std::string>()),
                                            {{"<server password>", password}});
      }
      std::vector<std::string> command = {
          absl::StrCat(options_.node_root, "/node_modules/.bin/opencode")};
      for (const json& arg : recipe["args"]) command.push_back(Fill(arg.get<std::string>()));
      RETURN_IF_ERROR(AddModel(env, command, /*prompt=*/false));
      auto started = child_.Ask({{"op", "serve"},
                                 {"command", command},
                                 {"env", env},
                                 {"cwd", work_},
                                 {"timeoutMs", kServeStartTimeoutMs},
                                 {"password", password}},
                                absl::Milliseconds(kServeStartTimeoutMs) + kStepTimeout);
      if (!started.ok()) {
        serve_failed_ = started.status();
        return serve_failed_;
      }
      if (!started->value("ok", false)) {
        serve_failed_ =
            absl::UnavailableError(absl::StrCat("opencode serve: ", started->value("error", "")));
        return serve_failed_;
      }
      serving_ = true;
    }
    json request = recipe["turn"];
    for (auto it = request["query"].begin(); it != request["query"].end(); ++it) {
      it.value() = Fill(it.value().get<std::string>());
    }
    std::string authorization = request["body"]["config"]["headers"]["Authorization"];
    request["body"]["config"]["headers"]["Authorization"] =
        absl::StrReplaceAll(authorization, {{"<mcp.token>", token}});
    auto prompted = child_.Ask(
        {{"op", "prompt"}, {"request", request}, {"text", kPrompt}, {"timeoutMs", kCliTimeoutMs}},
        kStepTimeout);
    if (!prompted.ok()) return prompted.status();
    if (!prompted->value("ok", false)) {
      return absl::UnavailableError(absl::StrCat("prompt: ", prompted->value("error", "")));
    }
    return absl::OkStatus();
  }

  static std::string RandomHex(int bytes) {
    FILE* random = std::fopen("/dev/urandom", "rb");
    if (random == nullptr) return "";
    std::string raw(bytes, '\0');
    const size_t read = std::fread(raw.data(), 1, raw.size(), random);
    std::fclose(random);
    if (read != raw.size()) return "";
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : raw) {
      hex.push_back(kHex[c >> 4]);
      hex.push_back(kHex[c & 15]);
    }
    return hex;
  }

  std::string Fill(const std::string& value) const {
    return absl::StrReplaceAll(
        value, {{"{cwd}", work_},
                {"{pi_extension}", options_.node_root + "/envelope_svc/mcp/pi/sharedos_mcp.ts"}});
  }

  // The host's model settings (not SharedOS's): each CLI pointed at the scripted model, offline.
  absl::Status AddModel(json& env, std::vector<std::string>& command, bool prompt = true) {
    const std::string base = absl::StrCat("http://127.0.0.1:", model_port_);
    const std::string cli = CliOfColumn(options_.column);
    if (cli == "claude") {
      env["ANTHROPIC_BASE_URL"] = base;
      env["ANTHROPIC_API_KEY"] = "scripted";
      for (const char* off : {"DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING", "DISABLE_AUTOUPDATER",
                              "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"}) {
        env[off] = "1";
      }
      for (const char* arg : {"--model", "claude-sonnet-4-5", "-p", kPrompt}) {
        command.push_back(arg);
      }
    } else if (cli == "codex") {
      for (const std::string& arg :
           {std::string("-c"), std::string("model_provider=\"scripted\""), std::string("-c"),
            std::string("model=\"scripted\""), std::string("-c"),
            absl::StrCat("model_providers.scripted={name=\"scripted\",base_url=\"", base,
                         "/v1\",wire_api=\"responses\"}"),
            std::string(kPrompt)}) {
        command.push_back(arg);
      }
    } else if (cli == "gemini") {
      env["GOOGLE_GEMINI_BASE_URL"] = base;
      env["GEMINI_API_KEY"] = "scripted";
      env["GEMINI_CLI_NO_RELAUNCH"] = "true";
      const json settings = {
          {"security", {{"auth", {{"selectedType", "gemini-api-key"}}}}},
          {"privacy", {{"usageStatisticsEnabled", false}}},
          {"telemetry", {{"enabled", false}}},
          {"general", {{"disableAutoUpdate", true}, {"disableUpdateNag", true}}}};
      RETURN_IF_ERROR(WriteUnder(home_, ".gemini/settings.json", settings.dump(2)));
      for (const char* arg : {"-m", "gemini-2.5-flash", "-p", kPrompt}) command.push_back(arg);
    } else if (cli == "opencode") {
      env["OPENCODE_DISABLE_AUTOUPDATE"] = "1";
      env["OPENCODE_DISABLE_MODELS_FETCH"] = "1";
      const json config = {{"$schema", "https://opencode.ai/config.json"},
                           {"provider",
                            {{"scripted",
                              {{"npm", "@ai-sdk/openai-compatible"},
                               {"options", {{"baseURL", base + "/v1"}, {"apiKey", "scripted"}}},
                               {"models", {{"scripted", json::object()}}}}}}},
                           {"model", "scripted/scripted"},
                           {"small_model", "scripted/scripted"}};
      RETURN_IF_ERROR(WriteUnder(home_, ".config/opencode/opencode.json", config.dump(2)));
      if (prompt) command.push_back(kPrompt);
    } else if (cli == "pi") {
      env["PI_OFFLINE"] = "1";
      env["PI_SKIP_VERSION_CHECK"] = "1";
      env["PI_TELEMETRY"] = "0";
      const json models = {{"providers",
                            {{"scripted",
                              {{"baseUrl", base},
                               {"api", "anthropic-messages"},
                               {"apiKey", "scripted"},
                               {"models", json::array({json{{"id", "scripted"}}})}}}}}};
      RETURN_IF_ERROR(WriteUnder(home_, ".pi/agent/models.json", models.dump(2)));
      for (const char* arg :
           {"--provider", "scripted", "--model", "scripted", "--no-session", "-p", kPrompt}) {
        command.push_back(arg);
      }
    }
    return absl::OkStatus();
  }

  const CliClientOptions options_;
  JsonLinesChild child_;
  int model_port_ = 0;
  int turn_ = 0;
  // opencode: the warm server is running (it serves every later turn).
  bool serving_ = false;
  absl::Status serve_failed_;
  std::string home_, work_;
  std::vector<std::string> names_;
  // A tool the CLI offered: how it names tools (its prefix) for an attempt on one it did not.
  std::string like_;
};

}  // namespace

std::string CliOfColumn(const std::string& column) {
  static const auto* const clis = new std::map<std::string, std::string>{{"claude-code", "claude"},
                                                                         {"codex", "codex"},
                                                                         {"gemini-cli", "gemini"},
                                                                         {"opencode", "opencode"},
                                                                         {"pi", "pi"}};
  auto it = clis->find(column);
  return it == clis->end() ? "" : it->second;
}

json ResultFromModelText(const std::string& text) {
  // SharedOS's refusal sentence (envelope_svc/mcp/mcp_server.cc RefusalText).
  static const std::regex kRefusal("SharedOS refused this call: ([a-z_]+) \\((denied|failed)\\)");
  static const std::regex kRequirement("requirement (capreq-[0-9a-f]{64})");
  std::smatch match;
  if (std::regex_search(text, match, kRefusal)) {
    json meta = {{"sharedos/status", match[2].str()}, {"sharedos/code", match[1].str()}};
    std::smatch requirement;
    if (std::regex_search(text, requirement, kRequirement)) {
      meta["sharedos/requiredAuthority"] = {{"id", requirement[1].str()}};
    }
    return json{{"isError", true}, {"_meta", meta}};
  }
  // A success: the output's JSON, however the CLI wrapped the text around it.
  json output = json::parse(text, nullptr, false);
  if (output.is_discarded() || !output.is_object()) {
    const size_t open = text.find('{');
    const size_t close = text.rfind('}');
    output = open == std::string::npos || close == std::string::npos || close < open
                 ? json()
                 : json::parse(text.substr(open, close - open + 1), nullptr, false);
  }
  if (output.is_object()) {
    return json{{"isError", false},
                {"structuredContent", output},
                {"_meta", {{"sharedos/status", "succeeded"}}}};
  }
  // Neither: the model never saw SharedOS's answer (e.g. the CLI's own error in its place).
  return json{{"isError", true}, {"_meta", {{"sharedos/status", "failed"}}}};
}

absl::StatusOr<std::unique_ptr<McpClient>> StartCliClient(const CliClientOptions& options) {
  const std::string node = FindNode();
  if (node.empty())
    return absl::FailedPreconditionError("node is not on PATH (run tools/setup.sh)");
  const std::string cli = CliOfColumn(options.column);
  if (cli.empty()) return absl::FailedPreconditionError("no CLI for column " + options.column);
  const std::string bin = absl::StrCat(options.node_root, "/node_modules/.bin/", cli);
  if (options.node_root.empty() || access(bin.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(bin, " is not installed (run tools/setup.sh: package-lock.json)"));
  }
  if (access(testing::RunfilePath(options.sharedosctl).c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError("sharedosctl not found at " + options.sharedosctl);
  }
  auto client = std::make_unique<CliClient>(options);
  RETURN_IF_ERROR(client->Start(node));
  return client;
}

}  // namespace sharedos::conformance
