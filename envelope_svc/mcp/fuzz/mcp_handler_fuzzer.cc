// Fuzzes the MCP front door's POST /mcp handler in-process (McpServer::HandlePost), both eras,
// headers included, over a TurnEngine on test doubles with one open RUNTIME_MCP turn.
//
// The engine, server and registry are built once; per input only HandlePost and the checks run.
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
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "audit_svc/client/fake_audit_writer.h"
#include "authorizer_svc/client/authorizer_client.h"
#include "authorizer_svc/client/fake_authorizer_client.h"
#include "common/server/auth.h"
#include "common/time/clock.h"
#include "envelope_svc/core/test_support.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/execution_token.h"
#include "envelope_svc/mcp/mcp_server.h"
#include "envelope_svc/tools/tool_provider.h"

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

// Calls one turn answers before it is cancelled and a fresh one opened (its step limit is 1000).
constexpr int kCallsPerTurn = 500;

// The files provider behind the engine: every call succeeds (FakeToolProvider's default) and,
// unlike that fake, nothing is recorded — a million calls must not grow the process.
class SucceedingProvider : public tools::ToolProviderInterface {
 public:
  absl::string_view id() const override { return "files"; }
  absl::StatusOr<std::vector<protocol::v1::ToolDefinition>> ListTools(const v1::ProviderContext&,
                                                                      absl::Time) override {
    return std::vector<protocol::v1::ToolDefinition>();
  }
  absl::StatusOr<protocol::v1::ToolResult> Invoke(const v1::InvokeRequest& request,
                                                  absl::Time) override {
    protocol::v1::ToolResult result;
    result.set_call_id(request.call_id());
    result.set_tool(request.tool());
    result.set_status(protocol::v1::TOOL_RESULT_STATUS_SUCCEEDED);
    (*result.mutable_output()->mutable_struct_value()->mutable_fields())["ok"].set_bool_value(true);
    result.mutable_completed_at()->set_seconds(0);
    return result;
  }
};

// FakeAuthorizerClient keeps every request it answers; this one hands each turn a fresh fake
// (Renew, between turns), so what a turn's calls leave behind goes with the turn.
class RenewedAuthorizer : public authorizer::client::AuthorizerClient {
 public:
  void Renew() { fake_ = std::make_unique<authorizer::client::FakeAuthorizerClient>(); }

  absl::StatusOr<authorizer::v1::OpenTurnAuthorityResponse> OpenTurnAuthority(
      const authorizer::v1::OpenTurnAuthorityRequest& request, absl::Duration timeout) override {
    return fake_->OpenTurnAuthority(request, timeout);
  }
  absl::StatusOr<authorizer::v1::CloseTurnAuthorityResponse> CloseTurnAuthority(
      const authorizer::v1::CloseTurnAuthorityRequest& request, absl::Duration timeout) override {
    return fake_->CloseTurnAuthority(request, timeout);
  }
  absl::StatusOr<authorizer::v1::AuthorizeResponse> Authorize(
      const authorizer::v1::AuthorizeRequest& request, absl::Duration timeout) override {
    return fake_->Authorize(request, timeout);
  }
  absl::StatusOr<authorizer::v1::DiscoverResponse> Discover(
      const authorizer::v1::DiscoverRequest& request, absl::Duration timeout) override {
    return fake_->Discover(request, timeout);
  }
  absl::StatusOr<authorizer::v1::AdmitTurnResponse> AdmitTurn(
      const authorizer::v1::AdmitTurnRequest& request, absl::Duration timeout) override {
    return fake_->AdmitTurn(request, timeout);
  }
  absl::StatusOr<authorizer::v1::ReachResponse> Reach(const authorizer::v1::ReachRequest& request,
                                                      absl::Duration timeout) override {
    return fake_->Reach(request, timeout);
  }
  absl::StatusOr<authorizer::v1::RecordEscalationResponse> RecordEscalation(
      const authorizer::v1::RecordEscalationRequest& request, absl::Duration timeout) override {
    return fake_->RecordEscalation(request, timeout);
  }

 private:
  std::unique_ptr<authorizer::client::FakeAuthorizerClient> fake_ =
      std::make_unique<authorizer::client::FakeAuthorizerClient>();
};

// Built once (the engine, the server, the registry); per input only HandlePost runs. What inputs
// can change is reset every kCallsPerTurn calls: the turn is cancelled (so open turns stay at one,
// far below max_open_turns_per_namespace), the authorizer fake renewed and the audit fake cleared.
struct World {
  common::SimulatedClock clock{absl::FromUnixSeconds(1786438800)};
  const ExecutionTokenCodec codec{std::string(32, 'k')};
  RenewedAuthorizer authorizer;
  audit::client::FakeAuditWriter audit;
  std::unique_ptr<tools::ToolRegistry> registry;
  SucceedingProvider files;
  std::unique_ptr<McpServer> server;
  std::unique_ptr<core::TurnEngine> engine;
  common::server::HostScope scope;
  std::string turn_id;
  std::string token;
  int calls = 0;

  void OpenTurn() {
    if (!turn_id.empty()) {
      v1::CancelTurnRequest cancel;
      cancel.set_turn_id(turn_id);
      auto cancelled = engine->CancelTurn(cancel, scope);
      if (!cancelled.ok()) {
        fprintf(stderr, "mcp_handler_fuzzer: CancelTurn: %s\n",
                cancelled.status().ToString().c_str());
        std::abort();
      }
    }
    authorizer.Renew();
    audit.Clear();
    v1::OpenTurnRequest open;
    *open.mutable_execution_request() =
        core::testing::TestExecutionRequest({"files.read", "files.create", "sharedos.escalate"});
    open.mutable_execution_request()->mutable_options()->set_timeout_ms(600000);
    open.mutable_execution_request()->mutable_options()->set_max_steps(1000);
    open.mutable_execution_request()->set_execution_id("exec-" + std::to_string(calls));
    open.set_runtime(v1::RUNTIME_MCP);
    auto opened = engine->OpenTurn(open, scope);
    if (!opened.ok() || opened->has_result()) {
      fprintf(stderr, "mcp_handler_fuzzer: OpenTurn: %s\n", opened.status().ToString().c_str());
      std::abort();
    }
    turn_id = opened->turn_id();
    token = opened->mcp().token();
    audit.Clear();
  }
};

World& GetWorld() {
  static World* world = [] {
    auto* w = new World;
    w->scope.namespaces = {"world-1"};
    w->scope.owners = {"*"};
    w->registry = core::testing::TestRegistry();
    McpServer::Options server_options;
    server_options.allowed_origins = {"https://console.example"};
    auto server = McpServer::Bind(server_options);
    if (!server.ok()) std::abort();
    w->server = *std::move(server);
    core::TurnEngine::Options options;
    options.mcp_url = w->server->url();
    options.mcp_tokens = &w->codec;
    tools::AttachedProviders providers;
    providers.files = &w->files;
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
