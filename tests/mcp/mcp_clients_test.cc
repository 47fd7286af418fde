// The MCP front door with the official clients (issue 8): a real sharedosd (--demo world), a
// turn opened over gRPC with RUNTIME_MCP, node running the MCP TypeScript SDK v1 (legacy era,
// 2025-11-25) or the v2 client (2026-07-28) with the turn's URL and token through scenario.mjs,
// then the host finishing the turn (harness_exited) and the ExecutionResult and the audit log
// checked. Also the MCP Inspector CLI (tools/list, tools/call). node_modules comes from the
// workspace root, found through the //:package.json runfile (like //proto:buf_breaking_test).
#include <grpcpp/grpcpp.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sharedos/audit/v1/audit.grpc.pb.h"
#include "sharedos/envelope/v1/envelope.grpc.pb.h"
#include "sharedosd/demo_turn.h"
#include "tests/testing/deployment.h"
#include "tests/testing/process.h"

namespace sharedos {
namespace {

namespace pb = ::sharedos::protocol::v1;
using Json = nlohmann::json;
using ::sharedos::testing::SharedosdDeployment;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The workspace root: where //:package.json really lives (node_modules beside it).
std::string WorkspaceRoot() {
  char resolved[PATH_MAX];
  const std::string link = sharedos::testing::RunfilePath("package.json");
  if (realpath(link.c_str(), resolved) == nullptr) return "";
  std::string root = resolved;
  return root.substr(0, root.rfind('/'));
}

struct Ran {
  int exit_code = -1;
  std::string output;
};

// Runs a shell command line; stdout and stderr together.
Ran RunShell(const std::string& command) {
  Ran ran;
  FILE* pipe = popen(absl::StrCat("PATH=\"$PATH:/usr/local/bin\" ", command, " 2>&1").c_str(), "r");
  if (pipe == nullptr) return ran;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) ran.output.append(buffer, n);
  const int status = pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

// The last line of `output` that parses as a JSON object.
Json LastJsonLine(const std::string& output) {
  const std::vector<std::string> lines = absl::StrSplit(output, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->empty() || (*it)[0] != '{') continue;
    Json json = Json::parse(*it, nullptr, /*allow_exceptions=*/false);
    if (json.is_object()) return json;
  }
  return Json();
}

class McpClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = WorkspaceRoot();
    ASSERT_FALSE(root_.empty()) << "//:package.json is not among the runfiles";
    ASSERT_EQ(access((root_ + "/node_modules/@modelcontextprotocol/sdk").c_str(), F_OK), 0)
        << "node_modules is missing under " << root_ << ": run tools/setup.sh (npm ci)";
    data_ = sharedos::testing::TempPath(
        std::string("sharedosd-") +
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    SharedosdDeployment::Options options;
    options.data_dir = data_;
    options.demo = true;
    options.mcp = true;
    auto started = SharedosdDeployment::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    sharedosd_ = *std::move(started);
    url_ = sharedosd_->mcp_url();
    auto channel = grpc::CreateChannel(sharedosd_->address(), grpc::InsecureChannelCredentials());
    envelope_ = envelope::v1::Envelope::NewStub(channel);
    audit_ = audit::v1::AuditLog::NewStub(channel);
    host_ = sharedosd_->host_token();
    admin_ = sharedosd_->admin_token();
    ASSERT_FALSE(host_.empty());
  }

  void TearDown() override {
    envelope_.reset();
    audit_.reset();
    if (sharedosd_) {
      absl::Status stopped = sharedosd_->Stop();
      EXPECT_TRUE(stopped.ok()) << stopped;
    }
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return context;
  }

  // Opens a RUNTIME_MCP turn in the demo world with its own execution and trace ids.
  envelope::v1::OpenTurnResponse OpenMcpTurn(const std::string& name) {
    google::protobuf::Timestamp now;
    now.set_seconds(absl::ToUnixSeconds(absl::Now()));
    envelope::v1::OpenTurnRequest request =
        sharedosd::DemoTurnRequest(envelope::v1::RUNTIME_MCP, "exec-" + name, "trace-" + name, now);
    request.mutable_execution_request()->mutable_options()->set_timeout_ms(120000);
    envelope::v1::OpenTurnResponse response;
    grpc::Status status = envelope_->OpenTurn(As(host_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.has_result()) << response.result().DebugString();
    return response;
  }

  pb::ExecutionResult FinishHarnessExited(const std::string& turn_id) {
    envelope::v1::FinishTurnRequest request;
    request.set_turn_id(turn_id);
    request.mutable_harness_exited()->set_outcome_status("completed");
    request.mutable_harness_exited()->set_exit_code(0);
    envelope::v1::FinishTurnResponse response;
    grpc::Status status = envelope_->FinishTurn(As(host_).get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.result();
  }

  // The turn's audit records (by its trace id), once turn.ended is among them (post-effect
  // records are delivered by then; polled, bounded).
  std::vector<pb::AuditEvent> Audited(const std::string& trace_id) {
    std::vector<pb::AuditEvent> events;
    for (int attempt = 0; attempt < 200; ++attempt) {
      audit::v1::QueryRequest query;
      query.mutable_filter()->set_trace_id(trace_id);
      query.set_limit(1000);
      audit::v1::QueryResponse response;
      grpc::Status status = audit_->Query(As(admin_).get(), query, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      events.clear();
      bool ended = false;
      for (const auto& record : response.records()) {
        events.push_back(record.event());
        ended |= record.event().type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED;
      }
      if (ended || !status.ok()) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return events;
  }

  Json RunClient(const std::string& script, const envelope::v1::OpenTurnResponse& opened) {
    const Ran ran = RunShell(absl::StrCat("cd '", root_, "' && node tests/mcp/", script, " '",
                                          opened.mcp().url(), "' '", opened.mcp().token(), "'"));
    EXPECT_EQ(ran.exit_code, 0) << ran.output;
    Json summary = LastJsonLine(ran.output);
    EXPECT_TRUE(summary.is_object()) << ran.output;
    return summary;
  }

  // What both clients must have seen, and what the turn and the audit log must hold after.
  void CheckScenario(const std::string& name, const Json& summary,
                     const envelope::v1::OpenTurnResponse& opened) {
    SCOPED_TRACE(summary.dump(2));
    EXPECT_THAT(summary["tools"].get<std::vector<std::string>>(),
                ElementsAre("files.create", "files.read", "sharedos.escalate"));
    EXPECT_EQ(summary["listMeta"]["sharedos/catalogHash"], opened.catalog().catalog_hash());
    EXPECT_EQ(summary["listMeta"]["sharedos/executionId"], "exec-" + name);
    EXPECT_EQ(summary["readHasOutputSchema"], true);
    EXPECT_THAT(summary["instructions"].get<std::string>(), HasSubstr("sharedos.escalate"));

    const Json& allowed = summary["allowed"];
    EXPECT_EQ(allowed["isError"], false);
    EXPECT_EQ(allowed["meta"]["sharedos/status"], "succeeded");
    EXPECT_EQ(allowed["structuredContent"]["content"], "buy milk\n");

    const Json& denied = summary["denied"];
    EXPECT_EQ(denied["isError"], true);
    EXPECT_EQ(denied["meta"]["sharedos/status"], "denied");
    EXPECT_EQ(denied["meta"]["sharedos/code"], "no_matching_grant");
    // The authority a reviewer would grant travels with the denial, for the host to escalate.
    const Json& required = denied["meta"]["sharedos/requiredAuthority"];
    EXPECT_EQ(required.value("id", "").rfind("capreq-", 0), 0u) << denied;
    EXPECT_EQ(required["capabilities"][0]["actions"][0], "create") << denied;
    // What any client shows its model: a sentence naming the code and the requirement to ask for.
    ASSERT_TRUE(denied["text"].is_string()) << denied;
    EXPECT_THAT(denied["text"].get<std::string>(),
                StartsWith("SharedOS refused this call: no_matching_grant (denied)."));
    EXPECT_THAT(denied["text"].get<std::string>(),
                HasSubstr("requirement " + required.value("id", "")));

    const Json& not_offered = summary["notOffered"];
    EXPECT_EQ(not_offered["isError"], true) << not_offered;
    EXPECT_EQ(not_offered["meta"]["sharedos/code"], "tool_unavailable");

    const Json& escalate = summary["escalate"];
    EXPECT_EQ(escalate["isError"], false);
    EXPECT_EQ(escalate["text"]["escalated"], true);
    EXPECT_EQ(escalate["text"]["reason"], "need to create Workspace/summary.txt");

    const Json& after = summary["afterEscalation"];
    EXPECT_EQ(after["isError"], true);
    EXPECT_EQ(after["meta"]["sharedos/code"], "escalation_pending");

    const pb::ExecutionResult result = FinishHarnessExited(opened.turn_id());
    EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED) << result.DebugString();
    EXPECT_EQ(result.escalation().reason(), "need to create Workspace/summary.txt");
    const auto& metadata = result.metadata().fields();
    EXPECT_EQ(metadata.at("harnessOutcome").string_value(), "completed");
    EXPECT_EQ(metadata.at("callsAfterEscalation").number_value(), 1);
    EXPECT_EQ(metadata.at("runtime").struct_value().fields().at("id").string_value(),
              "sharedos.mcp-harness");

    // The audit log: the three calls that reached the envelope, the escalation, the end — and
    // no operation for the ask or the call after it.
    std::vector<std::string> invoked;
    std::vector<std::string> kinds;
    for (const pb::AuditEvent& event : Audited("trace-" + name)) {
      kinds.push_back(pb::AuditEventType_Name(event.type()));
      if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) {
        invoked.push_back(absl::StrCat(event.tool(), "/", pb::AuditOutcome_Name(event.outcome()),
                                       "/", event.reason(), "/", event.cause()));
      }
      if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) {
        EXPECT_EQ(event.reason(), "escalation_requested");
        EXPECT_EQ(event.outcome(), pb::AUDIT_OUTCOME_ESCALATED);
      }
    }
    EXPECT_THAT(invoked,
                ElementsAre("files.read/AUDIT_OUTCOME_SUCCEEDED//",
                            "files.create/AUDIT_OUTCOME_DENIED/no_matching_grant/",
                            "files.delete/AUDIT_OUTCOME_DENIED/tool_unavailable/not_offered"));
    EXPECT_THAT(kinds, Contains("AUDIT_EVENT_TYPE_ESCALATION_REQUESTED"));
    EXPECT_THAT(kinds, Contains("AUDIT_EVENT_TYPE_TURN_ENDED"));
  }

  std::string root_;
  std::string data_;
  std::string url_;
  std::unique_ptr<SharedosdDeployment> sharedosd_;
  std::unique_ptr<envelope::v1::Envelope::Stub> envelope_;
  std::unique_ptr<audit::v1::AuditLog::Stub> audit_;
  std::string host_;
  std::string admin_;
};

TEST_F(McpClientsTest, StartUpPrintsTheMcpUrl) {
  EXPECT_THAT(url_, ::testing::MatchesRegex("http://127\\.0\\.0\\.1:[0-9]+/mcp"));
  const envelope::v1::OpenTurnResponse opened = OpenMcpTurn("url");
  EXPECT_EQ(opened.mcp().url(), url_);
  EXPECT_FALSE(opened.mcp().token().empty());
}

TEST_F(McpClientsTest, SdkV1LegacyEra) {
  const envelope::v1::OpenTurnResponse opened = OpenMcpTurn("sdk-v1");
  const Json summary = RunClient("sdk_v1_client.mjs", opened);
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["pingOk"], true);
  EXPECT_EQ(summary["protocolVersion"], "2025-11-25") << summary;
  EXPECT_EQ(summary["serverInfo"]["name"], "sharedos-envelope") << summary;
  CheckScenario("sdk-v1", summary, opened);
}

TEST_F(McpClientsTest, ClientV2ModernEra) {
  const envelope::v1::OpenTurnResponse opened = OpenMcpTurn("client-v2");
  const Json summary = RunClient("client_v2_client.mjs", opened);
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["protocolVersion"], "2026-07-28") << summary;
  CheckScenario("client-v2", summary, opened);
}

// The fenced ```<language> block of `markdown` that contains `marker`.
std::string FencedBlock(const std::string& markdown, const std::string& language,
                        const std::string& marker) {
  const std::string open = "```" + language + "\n";
  for (size_t at = markdown.find(open); at != std::string::npos; at = markdown.find(open, at + 1)) {
    const size_t body = at + open.size();
    const size_t end = markdown.find("```", body);
    if (end == std::string::npos) break;
    std::string block = markdown.substr(body, end - body);
    if (block.find(marker) != std::string::npos) return block;
  }
  return "";
}

// The string and boolean keys of the TOML table `[table]` in `toml` (the README's example is
// one flat table).
std::map<std::string, std::string> TomlTable(const std::string& toml, const std::string& table) {
  std::map<std::string, std::string> keys;
  bool inside = false;
  for (absl::string_view line : absl::StrSplit(toml, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      inside = line == "[" + table + "]";
      continue;
    }
    if (!inside) continue;
    const size_t eq = line.find('=');
    if (eq == absl::string_view::npos) continue;
    std::string key(absl::StripAsciiWhitespace(line.substr(0, eq)));
    std::string value(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    keys[key] = value;
  }
  return keys;
}

// envelope_svc/mcp/README.md's .mcp.json (Claude Code) and config.toml (Codex) examples, filled
// in for a real turn, connect the official SDK with portable names: every listed name passes
// the clients' ^[a-zA-Z0-9_-]+$ and every tool is called by it. The host then reports
// FinishTurn(complete): the harness had asked for a human, so the turn ends escalated with the
// stored escalation's id (issue 16 §4, §5).
TEST_F(McpClientsTest, ConfigExamplesConnectWithPortableNames) {
  std::ifstream in(sharedos::testing::RunfilePath("envelope_svc/mcp/README.md"));
  ASSERT_TRUE(in.good());
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  for (const std::string harness : {"claude-code", "codex"}) {
    SCOPED_TRACE(harness);
    const envelope::v1::OpenTurnResponse opened = OpenMcpTurn("config-" + harness);
    std::string url;
    Json headers = Json::object();
    if (harness == "claude-code") {
      const Json config = Json::parse(FencedBlock(readme, "json", "mcpServers"), nullptr, false);
      ASSERT_TRUE(config.is_object()) << "the .mcp.json example does not parse";
      const Json& server = config["mcpServers"]["sharedos"];
      EXPECT_EQ(server["type"], "http");
      url = absl::StrReplaceAll(server["url"].get<std::string>(),
                                {{"${SHAREDOS_MCP_URL}", opened.mcp().url()}});
      for (const auto& [name, value] : server["headers"].items()) {
        headers[name] = absl::StrReplaceAll(value.get<std::string>(),
                                            {{"${SHAREDOS_MCP_TOKEN}", opened.mcp().token()}});
      }
    } else {
      const std::map<std::string, std::string> table =
          TomlTable(FencedBlock(readme, "toml", "mcp_servers"), "mcp_servers.sharedos");
      ASSERT_TRUE(table.count("url")) << "the config.toml example has no url";
      EXPECT_EQ(table.count("bearer_token_env_var") ? table.at("bearer_token_env_var") : "",
                "SHAREDOS_MCP_TOKEN");
      EXPECT_EQ(table.count("required") ? table.at("required") : "", "true");
      // The host writes its envelope's URL over the example's default one.
      url = absl::StrReplaceAll(table.at("url"),
                                {{"http://127.0.0.1:50052/mcp", opened.mcp().url()}});
      headers["Authorization"] = "Bearer " + opened.mcp().token();
    }
    EXPECT_THAT(url, HasSubstr("?tool_names=portable"));
    const Json calls = Json::array(
        {Json{{"name", "files_read"}, {"arguments", {{"path", "Workspace/notes.txt"}}}},
         Json{{"name", "files_create"},
              {"arguments", {{"path", "Workspace/summary.txt"}, {"content", "x"}}}},
         Json{{"name", "sharedos_escalate"}, {"arguments", {{"reason", "need a human"}}}}});
    const Ran ran = RunShell(absl::StrCat("cd '", root_, "' && node tests/mcp/config_client.mjs '",
                                          url, "' '", headers.dump(), "' '", calls.dump(), "'"));
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    const Json summary = LastJsonLine(ran.output);
    ASSERT_TRUE(summary.is_object()) << ran.output;
    EXPECT_THAT(summary["tools"].get<std::vector<std::string>>(),
                ElementsAre("files_create", "files_read", "sharedos_escalate"));
    for (const Json& name : summary["tools"]) {
      EXPECT_THAT(name.get<std::string>(), ::testing::MatchesRegex("[a-zA-Z0-9_-]+"));
    }
    ASSERT_EQ(summary["calls"].size(), 3u) << summary;
    EXPECT_EQ(summary["calls"][0]["isError"], false) << summary;
    EXPECT_EQ(summary["calls"][1]["code"], "no_matching_grant") << summary;  // reached the kernel
    EXPECT_EQ(summary["calls"][2]["isError"], false) << summary;

    envelope::v1::FinishTurnRequest finish;
    finish.set_turn_id(opened.turn_id());
    finish.mutable_complete()->mutable_output()->set_string_value("done");
    envelope::v1::FinishTurnResponse finished;
    grpc::Status status = envelope_->FinishTurn(As(host_).get(), finish, &finished);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(finished.result().status(), pb::EXECUTION_STATUS_ESCALATED);
    EXPECT_EQ(finished.result().metadata().fields().at("harnessOutcome").string_value(),
              "completed");
    EXPECT_FALSE(finished.escalation_id().empty());
    // Audit names the canonical tools.
    std::vector<std::string> invoked;
    for (const pb::AuditEvent& event : Audited("trace-config-" + harness)) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) invoked.push_back(event.tool());
    }
    EXPECT_THAT(invoked, ElementsAre("files.read", "files.create"));
  }
}

}  // namespace
}  // namespace sharedos
