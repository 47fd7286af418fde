// The MCP endpoint's transport rules, every one over raw HTTP (httplib::Client), against a real
// TurnEngine on test doubles: authentication (401, never audited), Origin, media types, JSON-RPC
// shape, both protocol eras and their header checks, SSE, the body limit, and in-band refusals.
// The official clients are exercised against a real sharedosd in //tests/mcp.
#include "envelope_svc/mcp/mcp_server.h"

#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/execution_token.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sharedos::envelope::mcp {
namespace {

namespace pb = ::sharedos::protocol::v1;
using Json = nlohmann::json;
using core::TurnEngine;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kModern[] = "2026-07-28";

class McpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = core::testing::TestRegistry();
    files_ = std::make_unique<core::testing::FakeToolProvider>("files");
    McpServer::Options server_options;
    server_options.max_body_bytes = 64 << 10;
    server_options.allowed_origins = {"https://console.example"};
    auto server = McpServer::Bind(server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    TurnEngine::Options options;
    options.mcp_url = server_->url();
    options.mcp_tokens = &codec_;
    tools::AttachedProviders providers;
    providers.files = files_.get();
    engine_ =
        std::make_unique<TurnEngine>(authorizer_, *registry_, providers, audit_, clock_, options);
    server_->Start(*engine_, codec_, clock_);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());

    v1::OpenTurnRequest open;
    *open.mutable_execution_request() =
        core::testing::TestExecutionRequest({"files.read", "files.create", "sharedos.escalate"});
    open.mutable_execution_request()->mutable_options()->set_timeout_ms(60000);
    open.set_runtime(v1::RUNTIME_MCP);
    common::server::HostScope scope;
    scope.namespaces = {"world-1"};
    scope.owners = {"*"};
    auto opened = engine_->OpenTurn(open, scope);
    ASSERT_TRUE(opened.ok()) << opened.status();
    ASSERT_FALSE(opened->has_result());
    opened_ = *opened;
    token_ = opened_.mcp().token();
  }

  void TearDown() override {
    client_.reset();
    if (server_ != nullptr) server_->Shutdown();
  }

  httplib::Headers Headers(const std::string& token) const {
    httplib::Headers headers = {{"Accept", "application/json, text/event-stream"}};
    if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
    return headers;
  }

  httplib::Result Post(const std::string& body, httplib::Headers headers,
                       const std::string& content_type = "application/json") {
    return client_->Post("/mcp", headers, body, content_type.c_str());
  }
  httplib::Result Post(const Json& body) { return Post(body.dump(), Headers(token_)); }

  // A legacy-era request.
  static Json Request(const std::string& method, Json params = Json::object(), Json id = 1) {
    return Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
  }
  // A modern-era request: _meta envelope and the SEP-2243 headers.
  httplib::Result PostModern(const std::string& method, Json params = Json::object(),
                             httplib::Headers extra = {}, bool standard_headers = true) {
    params["_meta"] = Json{{"io.modelcontextprotocol/protocolVersion", kModern},
                           {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
    httplib::Headers headers = Headers(token_);
    if (standard_headers) {
      headers.emplace("MCP-Protocol-Version", kModern);
      headers.emplace("Mcp-Method", method);
      if (method == "tools/call") headers.emplace("Mcp-Name", params.value("name", ""));
    }
    for (const auto& [key, value] : extra) {
      headers.erase(key);
      headers.emplace(key, value);
    }
    return Post(Request(method, params).dump(), headers);
  }

  static Json Body(const httplib::Result& result) {
    return Json::parse(result->body, nullptr, /*allow_exceptions=*/false);
  }
  static int ErrorCode(const httplib::Result& result) {
    const Json body = Body(result);
    return body.contains("error") ? body["error"].value("code", 0) : 0;
  }

  common::SimulatedClock clock_{absl::FromUnixSeconds(1786438800)};
  const ExecutionTokenCodec codec_{std::string(32, 'k')};
  ::sharedos::authorizer::client::FakeAuthorizerClient authorizer_;
  audit::client::FakeAuditWriter audit_;
  std::unique_ptr<tools::ToolRegistry> registry_;
  std::unique_ptr<core::testing::FakeToolProvider> files_;
  std::unique_ptr<McpServer> server_;
  std::unique_ptr<TurnEngine> engine_;
  std::unique_ptr<httplib::Client> client_;
  v1::OpenTurnResponse opened_;
  std::string token_;
};

// ---- HTTP methods ----

TEST(McpServerBindTest, RefusesAHostOffLoopback) {
  for (const std::string host : {"0.0.0.0", "10.1.2.3", "::"}) {
    McpServer::Options options;
    options.host = host;
    absl::StatusOr<std::unique_ptr<McpServer>> server = McpServer::Bind(options);
    ASSERT_FALSE(server.ok()) << host;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(server.status().message()), HasSubstr("host: "));
  }
  McpServer::Options loopback;
  absl::StatusOr<std::unique_ptr<McpServer>> server = McpServer::Bind(loopback);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->url(), StartsWith("http://127.0.0.1:"));
}

TEST_F(McpServerTest, GetAndDeleteAreNotAllowed) {
  auto get = client_->Get("/mcp", Headers(token_));
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  auto del = client_->Delete("/mcp", Headers(token_));
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  auto other = client_->Post("/other", Headers(token_), "{}", "application/json");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 404);
}

// ---- Authentication: 401 with WWW-Authenticate, never audited ----

TEST_F(McpServerTest, MissingTokenIs401WithAChallenge) {
  const size_t audited = audit_.events().size();
  auto result = Post(Request("tools/list").dump(), Headers(""));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 401);
  EXPECT_EQ(result->get_header_value("WWW-Authenticate"), "Bearer realm=\"sharedos-mcp\"");
  httplib::Headers basic = {{"Authorization", "Basic dXNlcjpwYXNz"}};
  auto wrong_scheme = Post(Request("tools/list").dump(), basic);
  ASSERT_TRUE(wrong_scheme);
  EXPECT_EQ(wrong_scheme->status, 401);
  EXPECT_EQ(audit_.events().size(), audited);
}

TEST_F(McpServerTest, ForgedExpiredAndOtherTurnTokensAre401InvalidToken) {
  const size_t audited = audit_.events().size();
  const ExecutionTokenCodec other_secret(std::string(32, 'x'));
  absl::StatusOr<ExecutionTokenClaims> claims = codec_.Verify(token_, clock_.Now());
  ASSERT_TRUE(claims.ok());
  ExecutionTokenClaims other_turn = *claims;
  other_turn.turn_id = "turn-other";
  ExecutionTokenClaims other_catalogue = *claims;
  other_catalogue.catalog_hash = "sha256:0000";
  for (const std::string& token :
       {std::string("not-a-token"), other_secret.Mint(*claims), codec_.Mint(other_turn),
        codec_.Mint(other_catalogue), token_ + "x"}) {
    auto result = Post(Request("tools/list").dump(), Headers(token));
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 401) << token;
    EXPECT_THAT(result->get_header_value("WWW-Authenticate"), HasSubstr("error=\"invalid_token\""));
  }
  clock_.AdvanceTime(absl::Seconds(61));
  auto expired = Post(Request("tools/list"));
  ASSERT_TRUE(expired);
  EXPECT_EQ(expired->status, 401);
  EXPECT_THAT(expired->get_header_value("WWW-Authenticate"), HasSubstr("expired"));
  EXPECT_EQ(audit_.events().size(), audited);
}

// ---- Origin, media types, body ----

TEST_F(McpServerTest, ForeignOriginIs403) {
  httplib::Headers headers = Headers(token_);
  headers.emplace("Origin", "https://evil.example");
  auto foreign = Post(Request("tools/list").dump(), headers);
  ASSERT_TRUE(foreign);
  EXPECT_EQ(foreign->status, 403);
  for (const std::string& origin : {absl::StrCat("http://127.0.0.1:", server_->port()),
                                    std::string("https://console.example")}) {
    httplib::Headers allowed = Headers(token_);
    allowed.emplace("Origin", origin);
    auto result = Post(Request("tools/list").dump(), allowed);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 200) << origin;
  }
}

TEST_F(McpServerTest, WrongContentTypeIs415AndUnacceptableAcceptIs406) {
  auto text = Post(Request("tools/list").dump(), Headers(token_), "text/plain");
  ASSERT_TRUE(text);
  EXPECT_EQ(text->status, 415);
  httplib::Headers html = {{"Authorization", "Bearer " + token_}, {"Accept", "text/html"}};
  auto result = Post(Request("tools/list").dump(), html);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 406);
}

TEST_F(McpServerTest, BodyOverTheLimitIs413) {
  Json big = Request("tools/call", {{"name", "files.read"},
                                    {"arguments", {{"path", std::string(70 << 10, 'a')}}}});
  auto result = Post(big);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 413);
}

TEST_F(McpServerTest, BadJsonIsParseError) {
  auto result = Post("{\"jsonrpc\": \"2.0\", ", Headers(token_));
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  EXPECT_EQ(ErrorCode(result), -32700);
}

// A body nested tens of thousands of levels deep, well under the size limit, used to overflow
// the parser's stack and end the process: it is refused before parsing, and the server answers on.
TEST_F(McpServerTest, DeeplyNestedBodyIsAParseErrorAndTheServerAnswersOn) {
  const std::string deep =
      "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", "
      "\"params\": {\"name\": \"files.read\", \"arguments\": {\"a\": " +
      std::string(30000, '[') + std::string(30000, ']') + "}}}";
  auto refused = Post(deep, Headers(token_));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400);
  EXPECT_EQ(ErrorCode(refused), -32700);
  auto ping = Post(Request("ping"));
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->status, 200);
}

TEST_F(McpServerTest, BatchesAndNonMessagesAreInvalidRequests) {
  auto batch = Post(Json::array({Request("ping")}).dump(), Headers(token_));
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->status, 400);
  EXPECT_EQ(ErrorCode(batch), -32600);
  for (const Json& body :
       {Json{{"hello", 1}}, Json{{"jsonrpc", "1.0"}, {"id", 1}, {"method", "ping"}},
        Json{{"jsonrpc", "2.0"}, {"id", Json::object()}, {"method", "ping"}}}) {
    auto result = Post(body);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 400) << body;
    EXPECT_EQ(ErrorCode(result), -32600) << body;
  }
}

// ---- Legacy era ----

TEST_F(McpServerTest, InitializeEchoesASupportedVersionElseTheNewest) {
  for (const auto& [requested, answered] :
       {std::pair<std::string, std::string>{"2025-03-26", "2025-03-26"},
        {"2025-06-18", "2025-06-18"},
        {"2025-11-25", "2025-11-25"},
        {"2024-11-05", "2025-11-25"},
        {"2026-07-28", "2025-11-25"}}) {
    auto result = Post(Request("initialize", {{"protocolVersion", requested},
                                              {"capabilities", Json::object()},
                                              {"clientInfo", {{"name", "t"}, {"version", "1"}}}}));
    ASSERT_TRUE(result);
    ASSERT_EQ(result->status, 200) << result->body;
    const Json body = Body(result);
    EXPECT_EQ(body["result"]["protocolVersion"], answered) << requested;
    EXPECT_THAT(body["result"]["instructions"].get<std::string>(), HasSubstr("sharedos.escalate"));
    EXPECT_EQ(body["result"]["serverInfo"]["name"], "sharedos-envelope");
    EXPECT_TRUE(body["result"]["capabilities"].contains("tools"));
    // Stateless: no session is issued.
    EXPECT_FALSE(result->has_header("Mcp-Session-Id"));
  }
}

TEST_F(McpServerTest, NotificationsAndResponsesAre202) {
  auto notification = Post(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}.dump(),
                           Headers(token_));
  ASSERT_TRUE(notification);
  EXPECT_EQ(notification->status, 202);
  EXPECT_TRUE(notification->body.empty());
  auto response =
      Post(Json{{"jsonrpc", "2.0"}, {"id", 7}, {"result", Json::object()}}.dump(), Headers(token_));
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 202);
}

TEST_F(McpServerTest, PingAndUnknownMethods) {
  auto ping = Post(Request("ping", Json::object(), "p-1"));
  ASSERT_TRUE(ping);
  EXPECT_EQ(ping->status, 200);
  EXPECT_EQ(Body(ping), (Json{{"jsonrpc", "2.0"}, {"id", "p-1"}, {"result", Json::object()}}));
  auto unknown = Post(Request("resources/list"));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 200);
  EXPECT_EQ(ErrorCode(unknown), -32601);
  // server/discover is a 2026 method.
  auto discover = Post(Request("server/discover"));
  ASSERT_TRUE(discover);
  EXPECT_EQ(ErrorCode(discover), -32601);
}

// The method table: each method in its eras only; params that are no object are refused before
// the method is looked up.
TEST_F(McpServerTest, MethodsAreServedInTheirErasOnly) {
  auto initialize = PostModern("initialize");
  ASSERT_TRUE(initialize);
  EXPECT_EQ(initialize->status, 200);
  EXPECT_EQ(ErrorCode(initialize), -32601);
  EXPECT_EQ(Body(initialize)["error"]["message"], "Method not found: initialize");
  auto discover = PostModern("server/discover");
  ASSERT_TRUE(discover);
  EXPECT_EQ(ErrorCode(discover), 0) << discover->body;
  for (const char* method : {"tools/list", "no/such/method"}) {
    auto bad_params = Post(Request(method, Json::array({1})));
    ASSERT_TRUE(bad_params);
    EXPECT_EQ(bad_params->status, 200);
    EXPECT_EQ(ErrorCode(bad_params), -32602) << method;
  }
}

// Found by mcp_handler_fuzzer: an ill-formed UTF-8 version header was echoed into the error body,
// nlohmann's dump threw, and the uncaught exception ended the process.
TEST_F(McpServerTest, AnIllFormedUtf8VersionHeaderIs400AndTheServerKeepsServing) {
  httplib::Headers headers = Headers(token_);
  headers.emplace("MCP-Protocol-Version", "2025-06\xb0-18");
  auto result = Post(Request("tools/list").dump(), headers);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  const Json body = Body(result);
  EXPECT_EQ(body["error"]["code"], -32022);
  EXPECT_EQ(body["error"]["data"]["requested"], "2025-06\xef\xbf\xbd-18") << "as U+FFFD";
  auto next = Post(Request("tools/list"));
  ASSERT_TRUE(next) << "the server is still up";
  EXPECT_EQ(next->status, 200);
}

TEST_F(McpServerTest, UnsupportedProtocolVersionHeaderIs400WithTheSupportedList) {
  httplib::Headers headers = Headers(token_);
  headers.emplace("MCP-Protocol-Version", "1999-01-01");
  auto result = Post(Request("tools/list").dump(), headers);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  const Json body = Body(result);
  EXPECT_EQ(body["error"]["code"], -32022);
  EXPECT_EQ(body["error"]["data"]["requested"], "1999-01-01");
  EXPECT_THAT(body["error"]["data"]["supported"].get<std::vector<std::string>>(),
              Contains("2025-06-18"));
  // A supported one, and a session id the server never issued, are fine.
  httplib::Headers good = Headers(token_);
  good.emplace("MCP-Protocol-Version", "2025-06-18");
  good.emplace("Mcp-Session-Id", "whatever");
  auto ok = Post(Request("tools/list").dump(), good);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(McpServerTest, ToolsListIsTheCatalogueWithItsHash) {
  auto result = Post(Request("tools/list"));
  ASSERT_TRUE(result);
  const Json body = Body(result);
  std::vector<std::string> names;
  for (const Json& tool : body["result"]["tools"]) names.push_back(tool["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"files.create", "files.read", "sharedos.escalate"}));
  EXPECT_EQ(body["result"]["_meta"]["sharedos/catalogHash"], opened_.catalog().catalog_hash());
  EXPECT_EQ(body["result"]["_meta"]["sharedos/executionId"], "exec-1");
  EXPECT_TRUE(body["result"]["tools"][0].contains("inputSchema"));
  EXPECT_FALSE(body["result"].contains("resultType"));
}

TEST_F(McpServerTest, RefusalsAreToolResultsNeverJsonRpcErrors) {
  auto result = Post(Request("tools/call", {{"name", "notes.get"}, {"arguments", Json::object()}}));
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200);
  const Json body = Body(result);
  ASSERT_TRUE(body.contains("result")) << body;
  EXPECT_EQ(body["result"]["isError"], true);
  EXPECT_EQ(body["result"]["_meta"]["sharedos/status"], "denied");
  EXPECT_EQ(body["result"]["_meta"]["sharedos/code"], "tool_unavailable");
  EXPECT_EQ(body["result"]["_meta"]["sharedos/message"], "The tool is not available to this turn.");
  EXPECT_EQ(body["result"]["_meta"]["sharedos/retryable"], false);
  // The first text block is a sentence naming the code, never JSON a client could take for the
  // tool's structured output (Gemini CLI validates that against the output schema).
  const std::string text = body["result"]["content"][0]["text"];
  EXPECT_EQ(text,
            "SharedOS refused this call: tool_unavailable (denied). The tool is not available to "
            "this turn.");
  EXPECT_FALSE(body["result"].contains("structuredContent"));

  auto allowed =
      Post(Request("tools/call", {{"name", "files.read"}, {"arguments", {{"path", "a.md"}}}}));
  ASSERT_TRUE(allowed);
  const Json answer = Body(allowed);
  EXPECT_EQ(answer["result"]["isError"], false) << answer;
  EXPECT_EQ(answer["result"]["_meta"]["sharedos/status"], "succeeded");
  EXPECT_EQ(Json::parse(answer["result"]["content"][0]["text"].get<std::string>()),
            (Json{{"ok", true}}));
}

// Issue 35: a denial is text any client shows its model — the code, the authority the kernel
// described with its requirement id, and how to ask a human for exactly it — and the ask may
// come under the portable name a CLI calls it by.
TEST_F(McpServerTest, ADenialNamesItsRequirementAndTheAskUnderAPortableNameEscalatesForIt) {
  authorizer_.DenyAuthorize("files", "Reports/q3.md", "create", "no_matching_grant");
  auto denied = client_->Post(
      "/mcp?tool_names=portable", Headers(token_),
      Request("tools/call", {{"name", "files_create"}, {"arguments", {{"path", "Reports/q3.md"}}}})
          .dump(),
      "application/json");
  ASSERT_TRUE(denied);
  const Json result = Body(denied)["result"];
  EXPECT_EQ(result["isError"], true);
  EXPECT_FALSE(result.contains("structuredContent"));
  const Json meta = result["_meta"];
  EXPECT_EQ(meta["sharedos/code"], "no_matching_grant");
  const std::string id = meta["sharedos/requiredAuthority"]["id"];
  ASSERT_THAT(id, StartsWith("capreq-"));
  const std::string text = result["content"][0]["text"];
  EXPECT_EQ(text,
            "SharedOS refused this call: no_matching_grant (denied). No grant authorizes "
            "this operation. It needs files:Reports/q3.md [create], requirement " +
                id +
                ". To ask a human for exactly this authority, call sharedos.escalate "
                "with your reason and requirement \"" +
                id + "\", then stop.");
  EXPECT_TRUE(Json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded());

  auto ask = client_->Post(
      "/mcp?tool_names=portable", Headers(token_),
      Request("tools/call", {{"name", "sharedos_escalate"},
                             {"arguments", {{"reason", "write Q3"}, {"requirement", id}}}})
          .dump(),
      "application/json");
  ASSERT_TRUE(ask);
  EXPECT_EQ(Body(ask)["result"]["isError"], false) << ask->body;
  v1::FinishTurnRequest finish;
  finish.set_turn_id(opened_.turn_id());
  finish.mutable_harness_exited()->set_outcome_status("completed");
  common::server::HostScope scope;
  scope.namespaces = {"world-1"};
  scope.owners = {"*"};
  absl::StatusOr<v1::FinishTurnResponse> finished = engine_->FinishTurn(finish, scope);
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->result().status(), pb::EXECUTION_STATUS_ESCALATED);
  EXPECT_EQ(finished->result().metadata().fields().at("escalationRequirement").string_value(), id);
}

TEST_F(McpServerTest, MalformedCallParamsAreInvalidParams) {
  for (const Json& params :
       {Json{{"arguments", Json::object()}}, Json{{"name", 3}},
        Json{{"name", "files.read"}, {"arguments", "x"}}, Json{{"name", ""}}}) {
    auto result = Post(Request("tools/call", params));
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 200);
    EXPECT_EQ(ErrorCode(result), -32602) << params;
  }
}

TEST_F(McpServerTest, AnswersOneSseEventWhenOnlyTheStreamIsAccepted) {
  httplib::Headers headers = {{"Authorization", "Bearer " + token_},
                              {"Accept", "text/event-stream"}};
  auto result = Post(Request("tools/list").dump(), headers);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 200);
  EXPECT_THAT(result->get_header_value("Content-Type"), StartsWith("text/event-stream"));
  EXPECT_THAT(result->body, StartsWith("event: message\ndata: {"));
  const std::string data = result->body.substr(result->body.find("data: ") + 6);
  EXPECT_TRUE(Json::parse(data)["result"].contains("tools"));
}

// ---- Modern era (2026-07-28) ----

TEST_F(McpServerTest, DiscoverAnswersVersionsCapabilitiesAndCacheHints) {
  auto result = PostModern("server/discover");
  ASSERT_TRUE(result);
  ASSERT_EQ(result->status, 200) << result->body;
  const Json answer = Body(result)["result"];
  EXPECT_EQ(answer["resultType"], "complete");
  EXPECT_THAT(answer["supportedVersions"].get<std::vector<std::string>>(), Contains(kModern));
  EXPECT_TRUE(answer["capabilities"].contains("tools"));
  EXPECT_TRUE(answer.contains("ttlMs"));
  EXPECT_EQ(answer["cacheScope"], "private");
  EXPECT_THAT(answer["instructions"].get<std::string>(), HasSubstr("exec-1"));
}

TEST_F(McpServerTest, ModernListAndCallCarryResultType) {
  auto list = PostModern("tools/list");
  ASSERT_TRUE(list);
  const Json listed = Body(list)["result"];
  EXPECT_EQ(listed["resultType"], "complete");
  EXPECT_EQ(listed["cacheScope"], "private");
  EXPECT_EQ(listed["ttlMs"], 60000);
  EXPECT_EQ(listed["_meta"]["sharedos/catalogHash"], opened_.catalog().catalog_hash());
  auto call = PostModern("tools/call", {{"name", "files.read"}, {"arguments", {{"path", "a"}}}});
  ASSERT_TRUE(call);
  ASSERT_EQ(call->status, 200) << call->body;
  EXPECT_EQ(Body(call)["result"]["resultType"], "complete");
  EXPECT_EQ(Body(call)["result"]["isError"], false);
  // ping was dropped by 2026-07-28.
  auto ping = PostModern("ping");
  ASSERT_TRUE(ping);
  EXPECT_EQ(ErrorCode(ping), -32601);
}

TEST_F(McpServerTest, ModernHeadersMustMatchTheBody) {
  struct Case {
    std::string name;
    std::string method;
    httplib::Headers headers;
    bool standard = true;
  };
  const Json call = {{"name", "files.read"}, {"arguments", {{"path", "a"}}}};
  for (const Case& c : std::vector<Case>{
           {"version differs", "tools/list", {{"MCP-Protocol-Version", "2025-11-25"}}},
           {"method differs", "tools/list", {{"Mcp-Method", "tools/call"}}},
           {"name differs", "tools/call", {{"Mcp-Name", "files.create"}}},
           {"version missing", "tools/list", {{"Mcp-Method", "tools/list"}}, false},
           {"method missing", "tools/list", {{"MCP-Protocol-Version", kModern}}, false},
           {"name missing",
            "tools/call",
            {{"MCP-Protocol-Version", kModern}, {"Mcp-Method", "tools/call"}},
            false},
       }) {
    auto result = PostModern(c.method, c.method == "tools/call" ? call : Json::object(), c.headers,
                             c.standard);
    ASSERT_TRUE(result);
    EXPECT_EQ(result->status, 400) << c.name << ": " << result->body;
    EXPECT_EQ(ErrorCode(result), -32020) << c.name;
  }
  // Mcp-Name may carry the name base64-encoded (SEP-2243 sentinel): "files.read".
  auto encoded = PostModern("tools/call", call, {{"Mcp-Name", "=?base64?ZmlsZXMucmVhZA==?="}});
  ASSERT_TRUE(encoded);
  EXPECT_EQ(encoded->status, 200) << encoded->body;
}

TEST_F(McpServerTest, ModernUnsupportedVersionIs32022WithTheSupportedList) {
  Json params = {{"_meta", {{"io.modelcontextprotocol/protocolVersion", "2027-01-01"}}}};
  httplib::Headers headers = Headers(token_);
  headers.emplace("MCP-Protocol-Version", "2027-01-01");
  headers.emplace("Mcp-Method", "tools/list");
  auto result = Post(Request("tools/list", params).dump(), headers);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  const Json body = Body(result);
  EXPECT_EQ(body["error"]["code"], -32022);
  EXPECT_EQ(body["error"]["data"]["requested"], "2027-01-01");
  EXPECT_THAT(body["error"]["data"]["supported"].get<std::vector<std::string>>(),
              Contains(kModern));
}

TEST_F(McpServerTest, ModernHeaderWithoutTheMetaEnvelopeIsInvalidParams) {
  httplib::Headers headers = Headers(token_);
  headers.emplace("MCP-Protocol-Version", kModern);
  headers.emplace("Mcp-Method", "tools/list");
  auto result = Post(Request("tools/list").dump(), headers);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 400);
  EXPECT_EQ(ErrorCode(result), -32602);
}

TEST_F(McpServerTest, EscalationOverHttpLatchesTheTurn) {
  auto ask = Post(Request(
      "tools/call", {{"name", "sharedos.escalate"}, {"arguments", {{"reason", "need Reports"}}}}));
  ASSERT_TRUE(ask);
  const Json asked = Body(ask)["result"];
  EXPECT_EQ(asked["isError"], false);
  EXPECT_EQ(Json::parse(asked["content"][0]["text"].get<std::string>())["escalated"], true);
  auto later =
      Post(Request("tools/call", {{"name", "files.read"}, {"arguments", {{"path", "a"}}}}));
  ASSERT_TRUE(later);
  EXPECT_EQ(Body(later)["result"]["_meta"]["sharedos/code"], "escalation_pending");
  EXPECT_THAT(files_->invocations(), ::testing::IsEmpty());
}

// Semantics §4.7: clients that accept only ^[a-zA-Z0-9_-]+$ (Claude Code, Codex) are served
// portable names with ?tool_names=portable, and can call every tool by them.
TEST_F(McpServerTest, PortableNamesAreServedAndEveryToolIsCallableByThem) {
  auto list = client_->Post("/mcp?tool_names=portable", Headers(token_),
                            Request("tools/list").dump(), "application/json");
  ASSERT_TRUE(list);
  ASSERT_EQ(list->status, 200) << list->body;
  const Json tools = Body(list)["result"]["tools"];
  std::vector<std::string> names;
  const std::regex portable("^[a-zA-Z0-9_-]+$");
  for (const Json& tool : tools) {
    names.push_back(tool["name"]);
    EXPECT_TRUE(std::regex_match(tool["name"].get<std::string>(), portable)) << tool["name"];
  }
  EXPECT_EQ(names, (std::vector<std::string>{"files_create", "files_read", "sharedos_escalate"}));
  EXPECT_EQ(tools[1]["_meta"]["sharedos/tool"], "files.read");
  // The catalogue is the same catalogue: its hash does not move with the names.
  EXPECT_EQ(Body(list)["result"]["_meta"]["sharedos/catalogHash"],
            opened_.catalog().catalog_hash());

  auto call = client_->Post(
      "/mcp?tool_names=portable", Headers(token_),
      Request("tools/call", {{"name", "files_read"}, {"arguments", {{"path", "a.md"}}}}).dump(),
      "application/json");
  ASSERT_TRUE(call);
  EXPECT_EQ(Body(call)["result"]["isError"], false) << call->body;
  ASSERT_EQ(files_->invocations().size(), 1u);
  // Resolution holds on every URL: the exact name first, else the unique portable match.
  auto canonical =
      Post(Request("tools/call", {{"name", "files.read"}, {"arguments", {{"path", "b.md"}}}}));
  ASSERT_TRUE(canonical);
  EXPECT_EQ(Body(canonical)["result"]["isError"], false);
  // The audited call names the canonical tool.
  bool audited = false;
  for (const pb::AuditEvent& event : audit_.events()) {
    if (event.type() == pb::AUDIT_EVENT_TYPE_TOOL_INVOKED) audited |= event.tool() == "files.read";
  }
  EXPECT_TRUE(audited);
  // The escalation affordance latches under its portable name too.
  auto ask = Post(Request(
      "tools/call", {{"name", "sharedos_escalate"}, {"arguments", {{"reason", "need Reports"}}}}));
  ASSERT_TRUE(ask);
  EXPECT_EQ(Json::parse(Body(ask)["result"]["content"][0]["text"].get<std::string>())["escalated"],
            true);

  auto bad = client_->Post("/mcp?tool_names=shouty", Headers(token_), Request("tools/list").dump(),
                           "application/json");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("tool_names"));
}

TEST(PortableToolNameTest, AmbiguousPortableFormsResolveToNeither) {
  pb::ToolCatalog catalog;
  catalog.add_tools()->set_name("a.b");
  catalog.add_tools()->set_name("a_b");
  catalog.add_tools()->set_name("c.d");
  EXPECT_EQ(ResolveToolName(&catalog, "a_b"), "a_b");  // exact wins
  EXPECT_EQ(ResolveToolName(&catalog, "c_d"), "c.d");
  EXPECT_EQ(ResolveToolName(&catalog, "x_y"), "x_y");
  // a.b's portable form is a_b, which is another tool: a.b keeps its canonical name.
  EXPECT_EQ(ServedToolNames(catalog, true), (std::vector<std::string>{"a.b", "a_b", "c_d"}));
  EXPECT_EQ(ServedToolNames(catalog, false), (std::vector<std::string>{"a.b", "a_b", "c.d"}));
}

// Seed ADR 0018: once the harness has asked over MCP, no ending of the turn loses the ask.
class LatchedEndingTest : public McpServerTest {
 protected:
  void Ask() {
    auto ask = Post(Request("tools/call", {{"name", "sharedos.escalate"},
                                           {"arguments", {{"reason", "need Reports"}}}}));
    ASSERT_TRUE(ask);
    ASSERT_EQ(Body(ask)["result"]["isError"], false) << ask->body;
  }
  static common::server::HostScope Scope() {
    common::server::HostScope scope;
    scope.namespaces = {"world-1"};
    scope.owners = {"*"};
    return scope;
  }
  void ExpectEscalated(const pb::ExecutionResult& result, const std::string& harness_outcome) {
    EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_ESCALATED) << result.DebugString();
    EXPECT_EQ(result.escalation().reason(), "need Reports");
    const auto& metadata = result.metadata().fields();
    ASSERT_TRUE(metadata.contains("harnessOutcome")) << result.DebugString();
    EXPECT_EQ(metadata.at("harnessOutcome").string_value(), harness_outcome);
    EXPECT_EQ(metadata.at("escalationAsked").struct_value().fields().at("reason").string_value(),
              "need Reports");
    ASSERT_EQ(authorizer_.escalation_requests().size(), 1u);
    bool audited = false;
    for (const pb::AuditEvent& event : audit_.events()) {
      if (event.type() == pb::AUDIT_EVENT_TYPE_TURN_ENDED) {
        audited = event.outcome() == pb::AUDIT_OUTCOME_ESCALATED &&
                  event.reason() == "escalation_requested";
      }
    }
    EXPECT_TRUE(audited);
  }
  v1::GetTurnResponse Get() {
    v1::GetTurnRequest get;
    get.set_turn_id(opened_.turn_id());
    auto got = engine_->GetTurn(get, Scope());
    EXPECT_TRUE(got.ok()) << got.status();
    return got.ok() ? *got : v1::GetTurnResponse();
  }
};

TEST_F(LatchedEndingTest, FinishCompleteEndsEscalated) {
  Ask();
  v1::FinishTurnRequest finish;
  finish.set_turn_id(opened_.turn_id());
  finish.mutable_complete()->mutable_output()->set_string_value("done");
  auto finished = engine_->FinishTurn(finish, Scope());
  ASSERT_TRUE(finished.ok()) << finished.status();
  ExpectEscalated(finished->result(), "completed");
  // The host learns which escalation its turn created (FinishTurn and GetTurn).
  EXPECT_EQ(finished->escalation_id(), "esc-1");
  EXPECT_EQ(Get().escalation_id(), "esc-1");
}

TEST_F(LatchedEndingTest, FinishFailEndsEscalatedWithTheHarnessErrorCode) {
  Ask();
  v1::FinishTurnRequest finish;
  finish.set_turn_id(opened_.turn_id());
  finish.mutable_fail()->mutable_error()->set_code("harness_failed");
  finish.mutable_fail()->mutable_error()->set_message("the harness died");
  auto finished = engine_->FinishTurn(finish, Scope());
  ASSERT_TRUE(finished.ok()) << finished.status();
  ExpectEscalated(finished->result(), "failed");
  EXPECT_EQ(finished->result().metadata().fields().at("harnessErrorCode").string_value(),
            "harness_failed");
}

TEST_F(LatchedEndingTest, CancelEndsEscalated) {
  Ask();
  v1::CancelTurnRequest cancel;
  cancel.set_turn_id(opened_.turn_id());
  auto cancelled = engine_->CancelTurn(cancel, Scope());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  ExpectEscalated(cancelled->result(), "cancelled");
  EXPECT_EQ(cancelled->escalation_id(), "esc-1");
}

TEST_F(LatchedEndingTest, DeadlineEndsEscalated) {
  Ask();
  clock_.AdvanceTime(absl::Seconds(61));
  EXPECT_EQ(engine_->CancelExpired(), 1);
  ExpectEscalated(Get().result(), "timed_out");
}

TEST_F(LatchedEndingTest, UnrecordedCancelKeepsTheTurnOpenAndTheDeadlineGivesUpVisibly) {
  Ask();
  authorizer_.FailMethod(
      ::sharedos::authorizer::client::FakeAuthorizerClient::Method::kRecordEscalation,
      absl::UnavailableError("down"));
  v1::CancelTurnRequest cancel;
  cancel.set_turn_id(opened_.turn_id());
  EXPECT_EQ(engine_->CancelTurn(cancel, Scope()).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Get().state(), v1::TURN_STATE_RUNNING);
  // Past the deadline the sweep retries; past the retry window the turn ends, the ask visible.
  clock_.AdvanceTime(absl::Seconds(61));
  EXPECT_EQ(engine_->CancelExpired(), 0);
  EXPECT_EQ(Get().state(), v1::TURN_STATE_RUNNING);
  clock_.AdvanceTime(absl::Seconds(30));
  EXPECT_EQ(engine_->CancelExpired(), 1);
  const pb::ExecutionResult result = Get().result();
  EXPECT_EQ(result.status(), pb::EXECUTION_STATUS_CANCELLED);
  EXPECT_FALSE(result.metadata().fields().at("escalationRecorded").bool_value());
  EXPECT_EQ(result.metadata()
                .fields()
                .at("escalationAsked")
                .struct_value()
                .fields()
                .at("reason")
                .string_value(),
            "need Reports");
}

TEST_F(McpServerTest, ShutdownRightAfterStartStopsServing) {
  server_->Shutdown();
  auto result = Post(Request("tools/list"));
  EXPECT_FALSE(result);
}

}  // namespace
}  // namespace sharedos::envelope::mcp
