// Fuzzes the MCP front door's POST /mcp handler in-process (McpServer::HandlePost), both eras,
// headers included, over a TurnEngine on test doubles with one open RUNTIME_MCP turn.
//
// Input byte 0: bit 0 adds "Authorization: Bearer <the turn's valid token>", bit 1 adds
// "Content-Type: application/json", bit 2 adds "Accept: application/json, text/event-stream".
// The rest is header lines ("Name: value\n") up to an empty line, then the body.
// Properties: nothing crashes; every answer is an HTTP status the handler documents; a JSON answer
// parses; no answer echoes the token.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/mcp/mcp_server.h"

namespace sharedos::envelope::mcp {

// Reaches the private handler (friend of McpServer).
class McpServerFuzzPeer {
 public:
  static void Post(McpServer& server, const common::http::Request& request,
                   common::http::Response& response) {
    server.HandlePost(request, response);
  }
};

namespace {

// Calls one turn answers before a fresh one is opened (its step limit is 1000).
constexpr int kCallsPerTurn = 500;

struct World {
  common::SimulatedClock clock{absl::FromUnixSeconds(1786438800)};
  const ExecutionTokenCodec codec{std::string(32, 'k')};
  authorizer::client::FakeAuthorizerClient authorizer;
  audit::client::FakeAuditWriter audit;
  std::unique_ptr<tools::ToolRegistry> registry;
  std::unique_ptr<core::testing::FakeToolProvider> files;
  std::unique_ptr<McpServer> server;
  std::unique_ptr<core::TurnEngine> engine;
  std::string token;
  int calls = 0;

  void OpenTurn() {
    v1::OpenTurnRequest open;
    *open.mutable_execution_request() =
        core::testing::TestExecutionRequest({"files.read", "files.create", "sharedos.escalate"});
    open.mutable_execution_request()->mutable_options()->set_timeout_ms(600000);
    open.mutable_execution_request()->mutable_options()->set_max_steps(1000);
    open.mutable_execution_request()->set_execution_id("exec-" + std::to_string(calls));
    open.set_runtime(v1::RUNTIME_MCP);
    common::server::HostScope scope;
    scope.namespaces = {"world-1"};
    scope.owners = {"*"};
    auto opened = engine->OpenTurn(open, scope);
    if (!opened.ok() || opened->has_result()) {
      fprintf(stderr, "mcp_handler_fuzzer: OpenTurn: %s\n", opened.status().ToString().c_str());
      std::abort();
    }
    token = opened->mcp().token();
    audit.Clear();
  }
};

World& GetWorld() {
  static World* world = [] {
    auto* w = new World;
    w->registry = core::testing::TestRegistry();
    w->files = std::make_unique<core::testing::FakeToolProvider>("files");
    McpServer::Options server_options;
    server_options.allowed_origins = {"https://console.example"};
    auto server = McpServer::Bind(server_options);
    if (!server.ok()) std::abort();
    w->server = *std::move(server);
    core::TurnEngine::Options options;
    options.mcp_url = w->server->url();
    options.mcp_tokens = &w->codec;
    tools::AttachedProviders providers;
    providers.files = w->files.get();
    w->engine = std::make_unique<core::TurnEngine>(w->authorizer, *w->registry, providers, w->audit,
                                                   w->clock, options);
    w->server->Start(*w->engine, w->codec, w->clock);
    w->OpenTurn();
    return w;
  }();
  return *world;
}

void CheckResponse(const World& world, const common::http::Response& response) {
  static const std::set<int> kStatuses = {200, 202, 400, 401, 403, 404, 405, 406, 413, 415, 500};
  if (kStatuses.count(response.status) == 0) std::abort();
  if (response.body.find(world.token) != std::string::npos) std::abort();
  std::string content_type;
  for (const auto& [name, value] : response.headers) {
    if (name == "Content-Type") content_type = value;
  }
  if (content_type.rfind("application/json", 0) == 0) {
    if (nlohmann::json::parse(response.body, nullptr, false).is_discarded()) std::abort();
  }
}

}  // namespace
}  // namespace sharedos::envelope::mcp

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sharedos::envelope::mcp;  // NOLINT: the fuzzer's entry point only.
  if (size < 1) return 0;
  World& world = GetWorld();
  if (++world.calls % kCallsPerTurn == 0) world.OpenTurn();

  absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  sharedos::common::http::Request request;
  request.method = "POST";
  request.path = "/mcp";
  const size_t split = rest.find("\n\n");
  absl::string_view header_text = split == absl::string_view::npos ? "" : rest.substr(0, split);
  request.body = std::string(split == absl::string_view::npos ? rest : rest.substr(split + 2));
  for (absl::string_view line : absl::StrSplit(header_text, '\n', absl::SkipEmpty())) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    request.headers.emplace_back(absl::AsciiStrToLower(line.substr(0, colon)),
                                 std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  if (data[0] & 1) request.headers.emplace_back("authorization", "Bearer " + world.token);
  if (data[0] & 2) request.headers.emplace_back("content-type", "application/json");
  if (data[0] & 4) request.headers.emplace_back("accept", "application/json, text/event-stream");

  sharedos::common::http::Response response;
  McpServerFuzzPeer::Post(*world.server, request, response);
  CheckResponse(world, response);
  return 0;
}
