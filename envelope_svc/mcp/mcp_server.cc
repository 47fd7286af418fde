#include "envelope_svc/mcp/mcp_server.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "capability/reason_codes.h"
#include "common/crypto/base64url.h"
#include "common/crypto/random.h"
#include "common/json/json_nesting.h"
#include "common/json/proto_json.h"
#include "common/json/protocol_json.h"
#include "common/server/server_runner.h"
#include "common/time/proto_time.h"
#include "envelope_svc/tools/escalation_tool.h"
#include "envelope_svc/tools/portable_names.h"

namespace sharedos::envelope::mcp {
namespace {

namespace pb = ::sharedos::protocol::v1;
using Json = nlohmann::json;
using tools::PortableToolName;

// JSON-RPC and MCP error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kServerError = -32000;
constexpr int kUnauthorized = -32001;
constexpr int kHeaderMismatch = -32020;
constexpr int kUnsupportedProtocolVersion = -32022;

constexpr char kProtocolVersionMeta[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kServerInfoMeta[] = "io.modelcontextprotocol/serverInfo";
constexpr char kRealm[] = "Bearer realm=\"sharedos-mcp\"";
constexpr char kFirstModernVersion[] = "2026-07-28";

bool IsModern(absl::string_view version) { return version >= kFirstModernVersion; }

bool IsSupported(absl::string_view version) {
  for (const char* known : kLegacyProtocolVersions) {
    if (version == known) return true;
  }
  for (const char* known : kModernProtocolVersions) {
    if (version == known) return true;
  }
  return false;
}

Json SupportedVersions() {
  Json versions = Json::array();
  for (const char* known : kModernProtocolVersions) versions.push_back(known);
  for (auto it = std::rbegin(kLegacyProtocolVersions); it != std::rend(kLegacyProtocolVersions);
       ++it) {
    versions.push_back(*it);
  }
  return versions;
}

// The text of an answer. What a request sent may be echoed (a header's protocol version, an id),
// and headers are not UTF-8-checked: ill-formed UTF-8 is written as U+FFFD rather than throwing
// (nlohmann's default), which would end the process (found by mcp_handler_fuzzer).
std::string DumpJson(const Json& body) {
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json ErrorBody(const Json& id, int code, const std::string& message, Json data = nullptr) {
  Json error = {{"code", code}, {"message", message}};
  if (!data.is_null()) error["data"] = std::move(data);
  return Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

// An optional header, whitespace trimmed.
std::optional<std::string> Header(const common::http::Request& request, const char* name) {
  if (!request.has_header(name)) return std::nullopt;
  return std::string(absl::StripAsciiWhitespace(request.get_header_value(name)));
}

// SEP-2243 header values: "=?base64?<standard base64>?=" carries UTF-8 bytes; anything else is
// the value itself. nullopt when the sentinel's payload is not base64.
std::optional<std::string> DecodeHeaderValue(const std::string& value) {
  constexpr absl::string_view kPrefix = "=?base64?";
  constexpr absl::string_view kSuffix = "?=";
  absl::string_view text = value;
  if (!absl::ConsumePrefix(&text, kPrefix) || !absl::ConsumeSuffix(&text, kSuffix)) return value;
  std::string url = absl::StrReplaceAll(text, {{"+", "-"}, {"/", "_"}});
  while (!url.empty() && url.back() == '=') url.pop_back();
  absl::StatusOr<std::string> decoded = common::Base64UrlDecode(url);
  if (!decoded.ok()) return std::nullopt;
  return *decoded;
}

// The MCP Tool of a published definition: metadata moves under _meta. `served_name` is the name
// tools/list shows (the canonical name, or its portable form); a portable name keeps the
// canonical one under _meta["sharedos/tool"].
Json McpTool(const pb::PublishedToolDefinition& definition, const std::string& served_name) {
  absl::StatusOr<Json> published = common::PublishedToolDefinitionToJson(definition);
  Json tool = published.ok() ? *std::move(published) : Json{{"name", definition.name()}};
  Json meta = Json::object();
  if (auto metadata = tool.find("metadata"); metadata != tool.end()) {
    for (const auto& [key, value] : metadata->items()) meta["sharedos/" + key] = value;
    tool.erase(metadata);
  }
  if (served_name != definition.name()) {
    tool["name"] = served_name;
    meta["sharedos/tool"] = definition.name();
  }
  if (!meta.empty()) tool["_meta"] = std::move(meta);
  return tool;
}

// "files:Workspace/summary.txt [create]" for each capability of a described authority.
std::string DescribeAuthority(const Json& authority) {
  std::vector<std::string> parts;
  for (const Json& capability : authority.value("capabilities", Json::array())) {
    if (!capability.is_object()) continue;
    const Json resource = capability.value("resource", Json::object());
    std::vector<std::string> path;
    for (const Json& segment : resource.value("path", Json::array())) {
      if (segment.is_string()) path.push_back(segment.get<std::string>());
    }
    std::vector<std::string> actions;
    for (const Json& action : capability.value("actions", Json::array())) {
      if (action.is_string()) actions.push_back(action.get<std::string>());
    }
    const Json ns = resource.value("namespace", Json(""));
    parts.push_back(absl::StrCat(ns.is_string() ? ns.get<std::string>() : "", ":",
                                 absl::StrJoin(path, "/"), " [", absl::StrJoin(actions, ", "),
                                 "]"));
  }
  return absl::StrJoin(parts, "; ");
}

// A refusal as text any client shows its model (issue 35): one sentence naming the code and the
// status, the code's message, and — for a no_matching_grant denial — the authority the kernel
// described with its requirement id, and how to ask a human for exactly it.
std::string RefusalText(const std::string& status, const pb::ProtocolError& error,
                        const Json* authority, bool offers_escalation) {
  std::string text = absl::StrCat("SharedOS refused this call: ", error.code(), " (", status, "). ",
                                  error.message().empty() ? capability::CodeMessage(error.code())
                                                          : absl::string_view(error.message()));
  if (authority != nullptr) {
    const Json id = authority->value("id", Json(""));
    absl::StrAppend(&text, " It needs ", DescribeAuthority(*authority), ", requirement ",
                    id.is_string() ? id.get<std::string>() : "", ".");
    if (offers_escalation) {
      absl::StrAppend(&text, " To ask a human for exactly this authority, call ",
                      tools::kEscalationToolName, " with your reason and requirement \"",
                      id.is_string() ? id.get<std::string>() : "", "\", then stop.");
    }
  }
  if (error.has_retryable() && error.retryable()) absl::StrAppend(&text, " It may be retried.");
  return text;
}

// A ToolResult as an MCP CallToolResult. A refusal is isError with a first text block that is a
// sentence (RefusalText) — never JSON a client could mistake for the tool's structured output —
// and the machine-readable status in _meta: sharedos/status, sharedos/code, sharedos/message,
// sharedos/retryable, sharedos/requiredAuthority (a no_matching_grant denial, seed ADR 0019).
Json CallToolResult(const pb::ToolResult& result, bool structured, bool modern,
                    bool offers_escalation) {
  Json answer;
  if (result.status() == pb::TOOL_RESULT_STATUS_SUCCEEDED) {
    absl::StatusOr<Json> output = result.has_output() ? common::ProtoValueToJson(result.output())
                                                      : absl::StatusOr<Json>(Json());
    Json value = output.ok() ? *std::move(output) : Json();
    answer["content"] = Json::array({Json{{"type", "text"}, {"text", value.dump()}}});
    if (structured && (value.is_object() || modern)) answer["structuredContent"] = value;
    answer["isError"] = false;
    answer["_meta"] = Json{{"sharedos/status", "succeeded"}};
    return answer;
  }
  const std::string status(common::ToolResultStatusName(result.status()));
  const pb::ProtocolError& error = result.error();
  Json meta = {{"sharedos/status", status},
               {"sharedos/code", error.code()},
               {"sharedos/message", error.message()}};
  if (error.has_retryable()) meta["sharedos/retryable"] = error.retryable();
  // A no_matching_grant denial names the authority a reviewer would grant (seed ADR 0019).
  std::optional<Json> authority;
  const auto& details = error.details().fields();
  if (auto required = details.find("requiredAuthority"); required != details.end()) {
    if (absl::StatusOr<Json> described = common::ProtoValueToJson(required->second);
        described.ok() && described->is_object()) {
      authority = *std::move(described);
      meta["sharedos/requiredAuthority"] = *authority;
    }
  }
  const std::string text =
      RefusalText(status, error, authority.has_value() ? &*authority : nullptr, offers_escalation);
  answer["content"] = Json::array({Json{{"type", "text"}, {"text", text}}});
  answer["isError"] = true;
  answer["_meta"] = std::move(meta);
  return answer;
}

// The answer to a call on a turn that has ended (or is gone): denied turn_draining.
pb::ToolResult TooLate() {
  pb::ToolResult refused;
  refused.set_status(pb::TOOL_RESULT_STATUS_DENIED);
  refused.mutable_error()->set_code(std::string(capability::kTurnDraining));
  refused.mutable_error()->set_message(
      std::string(capability::CodeMessage(capability::kTurnDraining)));
  return refused;
}

// Whether the published tool `name` declares an output schema (structuredContent is answered).
}  // namespace

std::string ResolveToolName(const pb::ToolCatalog* catalog, const std::string& name) {
  if (catalog == nullptr) return name;
  const std::string* match = nullptr;
  for (const pb::PublishedToolDefinition& tool : catalog->tools()) {
    if (tool.name() == name) return name;
    if (PortableToolName(tool.name()) != name) continue;
    if (match != nullptr) return name;  // Two tools share the portable form: neither is meant.
    match = &tool.name();
  }
  return match != nullptr ? *match : name;
}

std::vector<std::string> ServedToolNames(const pb::ToolCatalog& catalog, bool portable) {
  std::vector<std::string> names;
  names.reserve(catalog.tools_size());
  for (const pb::PublishedToolDefinition& tool : catalog.tools()) {
    std::string served = portable ? PortableToolName(tool.name()) : tool.name();
    // Served only when tools/call resolves it back to this tool; else the canonical name.
    if (served != tool.name() && ResolveToolName(&catalog, served) != tool.name()) {
      served = tool.name();
    }
    names.push_back(std::move(served));
  }
  return names;
}

namespace {

bool OffersStructured(const core::TurnEngine::McpTurn& turn, const std::string& name) {
  if (turn.catalog == nullptr) return false;
  for (const pb::PublishedToolDefinition& tool : turn.catalog->tools()) {
    if (tool.name() == name) return tool.has_output_schema();
  }
  return false;
}

std::string Instructions(const core::TurnEngine::McpTurn& turn) {
  std::string text = absl::StrCat(
      "SharedOS turn ", turn.execution_id, ": you may call only the ",
      turn.catalog ? turn.catalog->tools_size() : 0, " tools tools/list names (catalogue ",
      turn.catalog_hash,
      "); each call is authorized against the grants of this turn and recorded. A refused call "
      "comes back as a tool result with isError true and _meta sharedos/code naming the "
      "reason; it is not a transport error.");
  if (turn.offers_escalation) {
    absl::StrAppend(&text, " If you need authority you lack, call ", tools::kEscalationToolName,
                    " with a reason, then stop: a human decides.");
  }
  return text;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

namespace {

// The host part of the endpoint's URL: a wildcard listener is reached on loopback; IPv6 in [].
std::string UrlHost(const std::string& host) {
  if (host.empty() || host == "0.0.0.0" || host == "::") return "127.0.0.1";
  if (absl::StrContains(host, ':')) return absl::StrCat("[", host, "]");
  return host;
}

const char* Scheme(const McpServer::Options& options) {
  return options.tls.enabled() ? "https" : "http";
}

// "<scheme>://<authority>" of a URL CheckPublicUrl accepted.
std::string OriginOf(const std::string& url) {
  const size_t authority = url.find("://") + 3;
  const size_t path = url.find('/', authority);
  return path == std::string::npos ? url : url.substr(0, path);
}

// An operator's --mcp_public_url: empty, or an http(s) URL with a host, bounded, no whitespace
// or control characters.
absl::Status CheckPublicUrl(const std::string& url) {
  if (url.empty()) return absl::OkStatus();
  if (url.size() > 2048) return absl::InvalidArgumentError("--mcp_public_url: over 2048 bytes");
  if (!absl::StartsWith(url, "http://") && !absl::StartsWith(url, "https://")) {
    return absl::InvalidArgumentError("--mcp_public_url: must start with http:// or https://");
  }
  for (unsigned char c : url) {
    if (c <= 0x20 || c >= 0x7f) {
      return absl::InvalidArgumentError(
          "--mcp_public_url: spaces and control or non-ASCII characters are not allowed");
    }
  }
  const size_t authority = url.find("://") + 3;
  if (authority >= url.size() || url[authority] == '/') {
    return absl::InvalidArgumentError("--mcp_public_url: no host");
  }
  return absl::OkStatus();
}

}  // namespace

McpServer::McpServer(Options options, std::shared_ptr<common::server::KeyPairWatcher> key_pair,
                     std::unique_ptr<common::http::BoundedHttpServer> http, int port)
    : options_(std::move(options)),
      metrics_(options_.metrics, capability::kTurnBudgetCodes),
      key_pair_(std::move(key_pair)),
      http_(std::move(http)),
      port_(port),
      listen_url_(absl::StrCat(Scheme(options_), "://", UrlHost(options_.host), ":", port, "/mcp")),
      url_(options_.public_url.empty() ? listen_url_ : options_.public_url) {
  origins_ = options_.allowed_origins;
  for (const char* host : {"127.0.0.1", "localhost"}) {
    origins_.push_back(absl::StrCat(Scheme(options_), "://", host, ":", port));
  }
  origins_.push_back(absl::StrCat(Scheme(options_), "://", UrlHost(options_.host), ":", port));
  if (!options_.public_url.empty()) origins_.push_back(OriginOf(options_.public_url));
}

McpServer::~McpServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<McpServer>> McpServer::Bind(Options options) {
  if (absl::Status url = CheckPublicUrl(options.public_url); !url.ok()) return url;
  absl::StatusOr<std::shared_ptr<common::server::KeyPairWatcher>> key_pair =
      common::server::HttpListenerKeyPair(options.tls, options.host, "--mcp_host",
                                          "the MCP front door");
  if (!key_pair.ok()) return key_pair.status();
  common::http::BoundedHttpServer::Options http;
  http.host = options.host;
  http.port = options.port;
  http.tls = *key_pair;
  http.max_connections = options.max_connections;
  http.max_connections_per_address = options.max_connections_per_address;
  http.max_header_bytes = options.max_header_bytes;
  http.max_body_bytes = options.max_body_bytes;
  http.read_timeout = options.read_timeout;
  http.write_timeout = options.request_timeout;
  http.handler_threads = options.handler_threads;
  http.max_queued_requests = options.max_queued_requests;
  absl::StatusOr<std::unique_ptr<common::http::BoundedHttpServer>> bound =
      common::http::BoundedHttpServer::Bind(std::move(http));
  if (!bound.ok()) {
    if (bound.status().code() == absl::StatusCode::kInvalidArgument) return bound.status();
    return absl::UnavailableError(
        absl::StrCat("--mcp_port: cannot listen on ", options.host, ":", options.port));
  }
  const int port = (*bound)->port();
  return std::unique_ptr<McpServer>(
      new McpServer(std::move(options), *std::move(key_pair), *std::move(bound), port));
}

void McpServer::Start(core::TurnEngine& engine, const ExecutionTokenCodec& tokens,
                      const common::Clock& clock) {
  engine_ = &engine;
  tokens_ = &tokens;
  clock_ = &clock;
  invoker_ = std::make_unique<EngineInvoker>(engine);
  latch_ = std::make_unique<EscalationLatch>(engine, *invoker_, clock);

  auto not_allowed = [](const common::http::Request&, common::http::Response& response) {
    response.status = 405;
    response.set_header("Allow", "POST");
    response.set_content(ErrorBody(nullptr, kServerError, "Method not allowed.").dump(),
                         "application/json");
  };
  http_->Route(
      "POST", "/mcp",
      [this](const common::http::Request& request, common::http::Response& response) {
        HandlePost(request, response);
      },
      [this](const common::http::Request& request, common::http::Response& response) {
        return CheckHeaders(request, response);
      });
  for (const char* method : {"GET", "DELETE", "PUT", "PATCH"}) {
    http_->Route(method, "/mcp", not_allowed);
  }
  http_->SetErrorBody(ErrorBody(nullptr, kInternalError, "Internal error").dump(),
                      "application/json");
  http_->Start();
}

void McpServer::Shutdown() {
  if (http_ != nullptr) http_->Stop();
}

// ---------------------------------------------------------------------------------------------
// POST /mcp

struct McpServer::Exchange {
  Exchange(const common::http::Request& request, common::http::Response& response)
      : request(request), response(response) {}

  // Answers `body` with `status`: JSON, or — to a client that accepts only text/event-stream —
  // a 200 as one SSE event.
  void Answer(int status, const Json& body) {
    response.status = status;
    if (sse && status == 200) {
      response.set_header("Cache-Control", "no-cache");
      response.set_content(absl::StrCat("event: message\ndata: ", DumpJson(body), "\n\n"),
                           "text/event-stream");
    } else {
      response.set_content(DumpJson(body), "application/json");
    }
  }
  // A transport-level refusal: `status` with a JSON-RPC error without id.
  void Reject(int status, int code, const std::string& message, Json data = nullptr) {
    Answer(status, ErrorBody(nullptr, code, message, std::move(data)));
  }
  void RejectUnsupported(const std::string& requested) {
    Reject(400, kUnsupportedProtocolVersion,
           absl::StrCat("Unsupported protocol version: ", requested),
           Json{{"supported", SupportedVersions()}, {"requested", requested}});
  }
  // Accepted, nothing to answer.
  void Accept() { response.status = 202; }

  const common::http::Request& request;
  common::http::Response& response;
  // Authenticate.
  ExecutionTokenClaims claims;
  core::TurnEngine::McpTurn turn;
  // NegotiateMedia.
  bool sse = false;
  // ParseMessage.
  Json message;
  std::string method;
  bool is_request = false;
  Json id;
  Json params;
  // ResolveEra.
  std::optional<std::string> header_version;
  std::optional<std::string> claim;
  bool modern = false;
  // ?tool_names=portable on the endpoint URL: tools/list serves portable names.
  bool portable_names = false;
};

struct McpServer::Reply {
  static Reply Result(Json result) {
    Reply reply;
    reply.result = std::move(result);
    return reply;
  }
  static Reply Error(int code, std::string message) {
    Reply reply;
    reply.error_code = code;
    reply.error_message = std::move(message);
    return reply;
  }

  Json result;
  // Non-zero: the JSON-RPC error answered instead of a result.
  int error_code = 0;
  std::string error_message;
};

struct McpServer::Method {
  const char* name;
  // Served in the 2025 era (legacy) and in 2026-07-28 (modern).
  bool legacy;
  bool modern;
  Reply (McpServer::*handler)(Exchange&);
};

bool McpServer::CheckHeaders(const common::http::Request& request,
                             common::http::Response& response) const {
  Exchange exchange(request, response);
  if (!CheckOrigin(exchange)) return false;
  // Refused here before the body is read, exactly as Authenticate answers.
  const std::string authorization = request.get_header_value("Authorization");
  absl::string_view bearer = absl::StripAsciiWhitespace(authorization);
  if (bearer.size() < 7 || !absl::EqualsIgnoreCase(bearer.substr(0, 7), "Bearer ")) {
    response.set_header("WWW-Authenticate", kRealm);
    exchange.Reject(401, kUnauthorized, "Unauthorized: an execution token is required");
    return false;
  }
  const absl::Status verified =
      tokens_->Verify(absl::StripAsciiWhitespace(bearer.substr(7)), clock_->Now()).status();
  if (verified.ok()) return true;
  response.set_header("WWW-Authenticate",
                      absl::StrCat(kRealm, ", error=\"invalid_token\", error_description=\"",
                                   verified.message(), "\""));
  exchange.Reject(401, kUnauthorized, absl::StrCat("Unauthorized: ", verified.message()));
  return false;
}

void McpServer::HandlePost(const common::http::Request& request, common::http::Response& response) {
  Exchange exchange(request, response);
  if (!CheckOrigin(exchange) || !Authenticate(exchange) || !ReadNaming(exchange) ||
      !NegotiateMedia(exchange) || !ParseMessage(exchange) || !ResolveEra(exchange)) {
    return;
  }
  if (exchange.modern && !CheckModernHeaders(exchange)) return;
  // Notifications are accepted and need no answer (notifications/initialized, cancelled, …).
  if (!exchange.is_request) return exchange.Accept();
  Dispatch(exchange);
}

bool McpServer::CheckOrigin(Exchange& exchange) const {
  // DNS rebinding: a browser page of another origin must not reach the endpoint.
  std::optional<std::string> origin = Header(exchange.request, "Origin");
  if (!origin.has_value() ||
      std::find(origins_.begin(), origins_.end(), *origin) != origins_.end()) {
    return true;
  }
  exchange.Reject(403, kServerError, "Forbidden: Origin not allowed");
  return false;
}

bool McpServer::Authenticate(Exchange& exchange) const {
  // The execution token: the only credential, bound to one turn. Not audited when refused.
  const std::string authorization = exchange.request.get_header_value("Authorization");
  absl::string_view bearer = absl::StripAsciiWhitespace(authorization);
  if (bearer.size() < 7 || !absl::EqualsIgnoreCase(bearer.substr(0, 7), "Bearer ")) {
    exchange.response.set_header("WWW-Authenticate", kRealm);
    exchange.Reject(401, kUnauthorized, "Unauthorized: an execution token is required");
    return false;
  }
  absl::StatusOr<ExecutionTokenClaims> claims =
      tokens_->Verify(absl::StripAsciiWhitespace(bearer.substr(7)), clock_->Now());
  // A turn another replica owns is answered there (the token is verified here first, so nothing
  // unauthenticated is forwarded).
  if (claims.ok() && options_.forward &&
      options_.forward(claims->turn_id, exchange.request, exchange.response)) {
    return false;
  }
  absl::StatusOr<core::TurnEngine::McpTurn> turn =
      claims.ok() ? engine_->FindMcpTurn(*claims) : claims.status();
  if (!turn.ok()) {
    exchange.response.set_header(
        "WWW-Authenticate", absl::StrCat(kRealm, ", error=\"invalid_token\", error_description=\"",
                                         turn.status().message(), "\""));
    exchange.Reject(401, kUnauthorized, absl::StrCat("Unauthorized: ", turn.status().message()));
    return false;
  }
  exchange.claims = *std::move(claims);
  exchange.turn = *std::move(turn);
  return true;
}

bool McpServer::ReadNaming(Exchange& exchange) {
  if (!exchange.request.has_param(kToolNamesParam)) return true;
  const std::string value = exchange.request.get_param_value(kToolNamesParam);
  if (value != "portable" && value != "canonical") {
    exchange.Reject(
        400, kInvalidRequest,
        absl::StrCat("Bad Request: ", kToolNamesParam, " must be portable or canonical"));
    return false;
  }
  exchange.portable_names = value == "portable";
  return true;
}

bool McpServer::NegotiateMedia(Exchange& exchange) {
  const std::string content_type =
      absl::AsciiStrToLower(exchange.request.get_header_value("Content-Type"));
  if (!absl::StartsWith(content_type, "application/json")) {
    exchange.Reject(415, kServerError,
                    "Unsupported Media Type: Content-Type must be application/json");
    return false;
  }
  const std::string accept = absl::AsciiStrToLower(exchange.request.get_header_value("Accept"));
  const bool accepts_json = accept.empty() || absl::StrContains(accept, "application/json") ||
                            absl::StrContains(accept, "*/*") ||
                            absl::StrContains(accept, "application/*");
  const bool accepts_sse = absl::StrContains(accept, "text/event-stream");
  if (!accepts_json && !accepts_sse) {
    exchange.Reject(406, kServerError,
                    "Not Acceptable: accept application/json or text/event-stream");
    return false;
  }
  exchange.sse = !accepts_json;
  return true;
}

bool McpServer::ParseMessage(Exchange& exchange) {
  Json& message = exchange.message;
  // Bounded before parsing: the parser recurses once per level (one deep body crashed a service).
  if (!common::CheckJsonNesting(exchange.request.body, "body").ok()) {
    exchange.Reject(
        400, kParseError,
        absl::StrCat("Parse error: JSON nested deeper than ", common::kMaxJsonNesting, " levels"));
    return false;
  }
  message = Json::parse(exchange.request.body, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) {
    exchange.Reject(400, kParseError, "Parse error");
    return false;
  }
  if (message.is_array()) {
    exchange.Reject(400, kInvalidRequest, "Bad Request: JSON-RPC batches are not supported");
    return false;
  }
  if (!message.is_object() || message.value("jsonrpc", Json()) != "2.0") {
    exchange.Reject(400, kInvalidRequest, "Bad Request: the body is not a JSON-RPC message");
    return false;
  }
  auto method = message.find("method");
  if (method == message.end()) {
    // A response to a server request: none are ever sent, so there is nothing to match.
    if (message.contains("result") || message.contains("error")) {
      exchange.Accept();
    } else {
      exchange.Reject(400, kInvalidRequest, "Bad Request: the body is not a JSON-RPC message");
    }
    return false;
  }
  if (!method->is_string()) {
    exchange.Reject(400, kInvalidRequest, "Bad Request: method");
    return false;
  }
  exchange.method = method->get<std::string>();
  exchange.is_request = message.contains("id");
  exchange.id = exchange.is_request ? message["id"] : Json();
  if (exchange.is_request && !exchange.id.is_string() && !exchange.id.is_number_integer()) {
    exchange.Reject(400, kInvalidRequest, "Bad Request: id must be a string or an integer");
    return false;
  }
  exchange.params = message.value("params", Json::object());
  return true;
}

bool McpServer::ResolveEra(Exchange& exchange) {
  exchange.header_version = Header(exchange.request, "MCP-Protocol-Version");
  const Json& params = exchange.params;
  if (params.is_object()) {
    if (auto meta = params.find("_meta"); meta != params.end() && meta->is_object()) {
      if (auto version = meta->find(kProtocolVersionMeta); version != meta->end()) {
        if (!version->is_string()) {
          exchange.Reject(400, kInvalidParams,
                          absl::StrCat("Invalid params: _meta.", kProtocolVersionMeta));
          return false;
        }
        exchange.claim = version->get<std::string>();
      }
    }
  }
  const std::optional<std::string>& header = exchange.header_version;
  if (exchange.claim.has_value()) {
    const std::string& claim = *exchange.claim;
    if (header.has_value() && *header != claim) {
      exchange.Reject(400, kHeaderMismatch,
                      "Bad Request: the MCP-Protocol-Version header and the body disagree",
                      Json{{"mismatch", {{"header", "MCP-Protocol-Version"}, {"body", claim}}}});
      return false;
    }
    if (!IsSupported(claim) || !IsModern(claim)) {
      exchange.RejectUnsupported(claim);
      return false;
    }
    exchange.modern = true;
  } else if (header.has_value()) {
    if (!IsSupported(*header)) {
      exchange.RejectUnsupported(*header);
      return false;
    }
    if (IsModern(*header)) {
      if (!exchange.is_request) {
        exchange.Accept();
      } else {
        exchange.Reject(400, kInvalidParams,
                        absl::StrCat("Invalid params: the request is missing the _meta envelope (",
                                     kProtocolVersionMeta, ") its protocol version requires"));
      }
      return false;
    }
  }
  return true;
}

bool McpServer::CheckModernHeaders(Exchange& exchange) {
  const std::string& method = exchange.method;
  const std::optional<std::string> mcp_method = Header(exchange.request, "Mcp-Method");
  if (mcp_method.has_value() && *mcp_method != method) {
    exchange.Reject(400, kHeaderMismatch,
                    "Bad Request: the Mcp-Method header and the body disagree",
                    Json{{"mismatch", {{"header", "Mcp-Method"}, {"body", method}}}});
    return false;
  }
  if (!exchange.is_request) return true;
  if (!exchange.header_version.has_value()) {
    exchange.Reject(
        400, kHeaderMismatch, "Bad Request: the MCP-Protocol-Version header is missing",
        Json{{"mismatch", {{"header", "MCP-Protocol-Version"}, {"body", *exchange.claim}}}});
    return false;
  }
  if (!mcp_method.has_value()) {
    exchange.Reject(400, kHeaderMismatch, "Bad Request: the Mcp-Method header is missing",
                    Json{{"mismatch", {{"header", "Mcp-Method"}, {"body", method}}}});
    return false;
  }
  const char* name_field = method == "tools/call" || method == "prompts/get" ? "name"
                           : method == "resources/read"                      ? "uri"
                                                                             : nullptr;
  if (name_field == nullptr || !exchange.params.is_object()) return true;
  const Json body_name = exchange.params.value(name_field, Json());
  const std::optional<std::string> header_name = Header(exchange.request, "Mcp-Name");
  if (!header_name.has_value()) {
    exchange.Reject(400, kHeaderMismatch, "Bad Request: the Mcp-Name header is missing",
                    Json{{"mismatch", {{"header", "Mcp-Name"}, {"body", body_name}}}});
    return false;
  }
  const std::optional<std::string> decoded = DecodeHeaderValue(*header_name);
  if (!decoded.has_value() || !body_name.is_string() || *decoded != body_name) {
    exchange.Reject(400, kHeaderMismatch, "Bad Request: the Mcp-Name header and the body disagree",
                    Json{{"mismatch", {{"header", "Mcp-Name"}, {"body", body_name}}}});
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// The method table

const McpServer::Method* McpServer::FindMethod(const std::string& name, bool modern) {
  static constexpr Method kMethods[] = {
      {"initialize", /*legacy=*/true, /*modern=*/false, &McpServer::Initialize},
      // ping is a 2025 method; 2026-07-28 dropped it.
      {"ping", /*legacy=*/true, /*modern=*/false, &McpServer::Ping},
      {"server/discover", /*legacy=*/false, /*modern=*/true, &McpServer::DiscoverServer},
      {"tools/list", /*legacy=*/true, /*modern=*/true, &McpServer::ListTools},
      {"tools/call", /*legacy=*/true, /*modern=*/true, &McpServer::CallTool},
  };
  for (const Method& method : kMethods) {
    if (name == method.name && (modern ? method.modern : method.legacy)) return &method;
  }
  return nullptr;
}

void McpServer::Dispatch(Exchange& exchange) {
  const Method* method = FindMethod(exchange.method, exchange.modern);
  Reply reply;
  if (!exchange.params.is_object()) {
    reply = Reply::Error(kInvalidParams, "Invalid params: params must be an object");
  } else if (method == nullptr) {
    reply = Reply::Error(kMethodNotFound, absl::StrCat("Method not found: ", exchange.method));
  } else {
    reply = (this->*method->handler)(exchange);
  }
  metrics_.McpRequest(exchange.method, reply.error_code != 0
                                           ? common::metrics::TurnMetrics::McpStatus::kError
                                           : common::metrics::TurnMetrics::McpStatus::kOk);
  if (reply.error_code != 0) {
    return exchange.Answer(200, ErrorBody(exchange.id, reply.error_code, reply.error_message));
  }
  if (exchange.modern) reply.result["resultType"] = "complete";
  exchange.Answer(
      200, Json{{"jsonrpc", "2.0"}, {"id", exchange.id}, {"result", std::move(reply.result)}});
}

McpServer::Reply McpServer::Initialize(Exchange& exchange) {
  const Json requested_json = exchange.params.value("protocolVersion", Json());
  const std::string requested = requested_json.is_string() ? requested_json.get<std::string>() : "";
  std::string version = kLegacyProtocolVersions[std::size(kLegacyProtocolVersions) - 1];
  if (IsSupported(requested) && !IsModern(requested)) version = requested;
  return Reply::Result(
      Json{{"protocolVersion", version},
           {"capabilities", {{"tools", {{"listChanged", false}}}}},
           {"serverInfo", {{"name", options_.server_name}, {"version", options_.server_version}}},
           {"instructions", Instructions(exchange.turn)}});
}

McpServer::Reply McpServer::DiscoverServer(Exchange& exchange) {
  return Reply::Result(
      Json{{"supportedVersions", SupportedVersions()},
           {"capabilities", {{"tools", {{"listChanged", false}}}}},
           {"instructions", Instructions(exchange.turn)},
           {"ttlMs", 0},
           {"cacheScope", "private"},
           {"_meta",
            {{kServerInfoMeta,
              {{"name", options_.server_name}, {"version", options_.server_version}}}}}});
}

McpServer::Reply McpServer::Ping(Exchange&) { return Reply::Result(Json::object()); }

McpServer::Reply McpServer::ListTools(Exchange& exchange) {
  const core::TurnEngine::McpTurn& turn = exchange.turn;
  Json tools = Json::array();
  if (turn.catalog != nullptr) {
    const std::vector<std::string> names = ServedToolNames(*turn.catalog, exchange.portable_names);
    for (int i = 0; i < turn.catalog->tools_size(); ++i) {
      tools.push_back(McpTool(turn.catalog->tools(i), names[i]));
    }
  }
  Json result = {
      {"tools", std::move(tools)},
      {"_meta",
       {{"sharedos/catalogHash", turn.catalog_hash}, {"sharedos/executionId", turn.execution_id}}}};
  if (exchange.modern) {
    // The catalogue is fixed for the turn and the token: cacheable by this client until then.
    result["ttlMs"] =
        std::max<int64_t>(0, absl::ToInt64Milliseconds(exchange.claims.expires_at - clock_->Now()));
    result["cacheScope"] = "private";
  }
  return Reply::Result(std::move(result));
}

McpServer::Reply McpServer::CallTool(Exchange& exchange) {
  const Json& params = exchange.params;
  auto name = params.find("name");
  if (name == params.end() || !name->is_string()) {
    return Reply::Error(kInvalidParams, "Invalid params: name must be a string");
  }
  const Json arguments = params.value("arguments", Json::object());
  absl::StatusOr<google::protobuf::Struct> parsed = common::JsonToProtoStruct(arguments);
  if (!parsed.ok())
    return Reply::Error(kInvalidParams, "Invalid params: arguments must be an object");
  pb::ToolCall call;
  call.set_id(absl::StrCat("mcp-", common::NewUuidV4()));
  // Semantics §4.7: the exact name, else the unique portable match, else unchanged (refused
  // and recorded by the engine).
  call.set_tool(ResolveToolName(exchange.turn.catalog.get(), name->get<std::string>()));
  *call.mutable_arguments() = *std::move(parsed);
  call.set_trace_id(exchange.turn.trace_id);
  if (absl::StatusOr<google::protobuf::Timestamp> now = common::ToProtoTimestamp(clock_->Now());
      now.ok()) {
    *call.mutable_requested_at() = *now;
  }
  absl::StatusOr<pb::ToolResult> result = latch_->Invoke(exchange.turn, call);
  if (!result.ok()) {
    if (result.status().code() == absl::StatusCode::kInvalidArgument) {
      return Reply::Error(kInvalidParams,
                          absl::StrCat("Invalid params: ", result.status().message()));
    }
    if (result.status().code() != absl::StatusCode::kFailedPrecondition &&
        result.status().code() != absl::StatusCode::kNotFound) {
      return Reply::Error(kInternalError, "Internal error");
    }
    // The turn has ended (or is gone): refused in band like any call that comes too late.
    result = TooLate();
  }
  return Reply::Result(CallToolResult(*result, OffersStructured(exchange.turn, call.tool()),
                                      exchange.modern, exchange.turn.offers_escalation));
}

}  // namespace sharedos::envelope::mcp
