// The MCP front door of envelope_svc (issue 8; api.md "MCP"): a turn's tools over MCP Streamable
// HTTP on its own port, `POST /mcp`, for harnesses (agent CLIs) opened by a host with
// OpenTurn(runtime: RUNTIME_MCP).
//
// Every request carries `Authorization: Bearer <execution token>` (execution_token.h); a missing,
// forged, expired or other-turn token is 401 with WWW-Authenticate and is not audited (no access
// context exists). Two protocol eras are served on the one endpoint:
//   legacy  2025-03-26, 2025-06-18, 2025-11-25: initialize (the requested version echoed when
//           supported, else the newest; instructions naming the seat's reach), ping, tools/list,
//           tools/call; notifications → 202; MCP-Protocol-Version checked when sent; stateless
//           (no Mcp-Session-Id is issued; one sent is ignored); GET and DELETE → 405.
//   modern  2026-07-28, stateless: server/discover, tools/list, tools/call; every request's
//           _meta names io.modelcontextprotocol/protocolVersion; MCP-Protocol-Version, Mcp-Method
//           and (tools/call) Mcp-Name must match the body (else 400, -32020); results carry
//           resultType, list results ttlMs and cacheScope.
// An unsupported version is 400 with -32022 and the supported list. Bad JSON -32700, a body that
// is no JSON-RPC message -32600, an unknown method -32601, bad params -32602. A body over the
// limit is 413; an Origin other than the endpoint's own (or an allowed one) is 403.
//
// tools/list is the turn's published catalogue in its (name) order, with _meta
// sharedos/catalogHash and sharedos/executionId (names canonical, or portable with
// ?tool_names=portable). tools/call resolves the exact name, else the unique portable match, and
// goes through the EscalationLatch around TurnEngine::InvokeTool — the gRPC seat's checks, codes
// and audit; a refusal is a tool result {isError: true, content: [text {status, code, message,
// retryable}], _meta: {sharedos/status, sharedos/code}}, never a JSON-RPC error;
// structuredContent when the tool declares an output schema. Responses are JSON, or one SSE event
// when the client accepts only text/event-stream.
//
// Transport (issue 34, ADR 0017): a BoundedHttpServer (common/http) — connections capped in total
// and per client address, one read deadline per request, bounded headers and body, a fixed pool
// of handler threads — and the Origin and the execution token are checked with the headers,
// before any of the body is read (a refusal closes the connection).
//
// Thread-safe: requests are served concurrently by the server's handler threads.

#ifndef SHAREDOS_ENVELOPE_SVC_MCP_MCP_SERVER_H_
#define SHAREDOS_ENVELOPE_SVC_MCP_MCP_SERVER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/http/bounded_http_server.h"
#include "common/metrics/sinks.h"
#include "common/server/tls.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/escalation_latch.h"
#include "envelope_svc/mcp/execution_token.h"
#include "sharedos/protocol/v1/tool.pb.h"

namespace sharedos::envelope::mcp {

// The protocol versions served, oldest first.
inline constexpr const char* kLegacyProtocolVersions[] = {"2025-03-26", "2025-06-18", "2025-11-25"};
inline constexpr const char* kModernProtocolVersions[] = {"2026-07-28"};

// The endpoint URL's query parameter choosing the names tools/list serves: `canonical` (the
// default: the catalogue's own names, e.g. files.read) or `portable` (dots → underscores, e.g.
// files_read, for clients that accept only ^[a-zA-Z0-9_-]+$ — Claude Code, Codex; the canonical
// name under _meta["sharedos/tool"]). A portable form two tools share is never served.
inline constexpr char kToolNamesParam[] = "tool_names";

// tools/call's name resolution (semantics §4.7): `name` when the catalogue publishes it, else
// the one tool whose portable name it is, else `name` unchanged (the engine refuses it).
std::string ResolveToolName(const protocol::v1::ToolCatalog* catalog, const std::string& name);
// The names tools/list serves for `catalog`, in its order.
std::vector<std::string> ServedToolNames(const protocol::v1::ToolCatalog& catalog, bool portable);

class McpServer {
 public:
  struct Options {
    // Without `tls` loopback only (plaintext HTTP); with it any host.
    std::string host = "127.0.0.1";
    // Certificate and key (both set): HTTPS, the pair re-read when it changes on disk. The
    // client CA is not used: harnesses authenticate with their execution token.
    common::server::ServerTls tls;
    // The URL handed to harnesses (url()), as the operator says it (a load balancer's, a
    // Service's name); http:// or https://, at most 2048 bytes. Empty:
    // "<http|https>://<host>:<port>/mcp". Its origin is accepted beside the endpoint's own.
    std::string public_url;
    // 0 picks a free port (url() reports it).
    int port = 0;
    // Request bodies above this are 413.
    size_t max_body_bytes = 4 << 20;
    // Writing an answer (a tools/call is bounded by the engine's provider and authorizer
    // timeouts).
    absl::Duration request_timeout = absl::Seconds(60);
    // Reading one request — TLS handshake, headers and body — and keeping an idle connection
    // (--mcp_read_timeout); a slower client loses its connection.
    absl::Duration read_timeout = absl::Seconds(10);
    // Connections at once, in total and per client address (--mcp_max_connections,
    // --mcp_max_connections_per_address); beyond, closed at accept.
    size_t max_connections = 512;
    size_t max_connections_per_address = 32;
    // Header bytes of one request (431 beyond).
    size_t max_header_bytes = 16 * 1024;
    // Threads running requests, and requests waiting for one (503 beyond): --mcp_threads.
    int handler_threads = 8;
    size_t max_queued_requests = 256;
    // Origins accepted besides the endpoint's own (http://127.0.0.1:<port>,
    // http://localhost:<port>).
    std::vector<std::string> allowed_origins;
    std::string server_name = "sharedos-envelope";
    std::string server_version = "1.0.0";
    // Requests by method and status (common/metrics/sinks.h); null: none. Borrowed.
    common::metrics::Metrics* metrics = nullptr;
    // Envelope replicas (ADR 0011): called with the turn of every verified execution token
    // before the turn is looked up here; answering true means it answered the request itself
    // (proxied to the turn's owner replica: envelope_svc/server/turn_forwarder.h). Unset: every
    // turn is looked up here.
    std::function<bool(const std::string& turn_id, const common::http::Request& request,
                       common::http::Response& response)>
        forward;
  };

  // Binds the listener; url() is known from here on, so the engine can be told it before serving.
  // Errors: INVALID_ARGUMENT naming the flag ("--mcp_host: …" plaintext off loopback,
  // "--mcp_public_url: …", those of CheckServerTls for the pair); UNAVAILABLE "--mcp_port: cannot
  // listen on …".
  static absl::StatusOr<std::unique_ptr<McpServer>> Bind(Options options);
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // The URL handed to harnesses: Options::public_url, else listen_url().
  const std::string& url() const { return url_; }
  // Where the listener is: "<http|https>://<host>:<port>/mcp" (printed at start-up).
  const std::string& listen_url() const { return listen_url_; }
  int port() const { return port_; }

  // Serves on a background thread until Shutdown. Borrows all three; they must outlive the
  // server (or Shutdown).
  void Start(core::TurnEngine& engine, const ExecutionTokenCodec& tokens,
             const common::Clock& clock);
  // Stops accepting, finishes the requests in hand and joins. Idempotent.
  void Shutdown();

 private:
  // envelope_svc/mcp/fuzz/mcp_handler_fuzzer.cc drives HandlePost in-process.
  friend class McpServerFuzzPeer;

  McpServer(Options options, std::shared_ptr<common::server::KeyPairWatcher> key_pair,
            std::unique_ptr<common::http::BoundedHttpServer> http, int port);

  // One POST /mcp as it passes the steps (mcp_server.cc).
  struct Exchange;
  // A method's answer: its result, or a JSON-RPC error.
  struct Reply;
  // A JSON-RPC method served, in which eras, by which handler.
  struct Method;

  // POST /mcp: the steps below, in the order they run; the first that answers ends it.
  void HandlePost(const common::http::Request& request, common::http::Response& response);
  // With the headers alone, before the body is read: the Origin and the token's signature and
  // expiry (not the turn: that is HandlePost's, on a handler thread).
  bool CheckHeaders(const common::http::Request& request, common::http::Response& response) const;
  // Transport: the Origin (DNS rebinding), then the execution token (401, not audited).
  bool CheckOrigin(Exchange& exchange) const;
  bool Authenticate(Exchange& exchange) const;
  // Content-Type and Accept (JSON, or one SSE event).
  // ?tool_names=portable|canonical (400 for another value).
  static bool ReadNaming(Exchange& exchange);
  static bool NegotiateMedia(Exchange& exchange);
  // The body as one JSON-RPC message (no batches); a response to a server request is 202.
  static bool ParseMessage(Exchange& exchange);
  // The protocol era: the body's _meta claim first, the MCP-Protocol-Version header as a
  // cross-check; the modern era's Mcp-Method and Mcp-Name headers must match the body.
  static bool ResolveEra(Exchange& exchange);
  static bool CheckModernHeaders(Exchange& exchange);
  // A request's method through the method table; its reply answered.
  void Dispatch(Exchange& exchange);
  static const Method* FindMethod(const std::string& name, bool modern);

  // The methods.
  Reply Initialize(Exchange& exchange);
  Reply DiscoverServer(Exchange& exchange);
  Reply Ping(Exchange& exchange);
  Reply ListTools(Exchange& exchange);
  Reply CallTool(Exchange& exchange);

  const Options options_;
  common::metrics::TurnMetrics metrics_;
  // The HTTPS pair (null for plaintext); outlives http_, whose handshakes read it.
  std::shared_ptr<common::server::KeyPairWatcher> key_pair_;
  std::unique_ptr<common::http::BoundedHttpServer> http_;
  const int port_;
  const std::string listen_url_;
  const std::string url_;
  std::vector<std::string> origins_;
  core::TurnEngine* engine_ = nullptr;
  const ExecutionTokenCodec* tokens_ = nullptr;
  const common::Clock* clock_ = nullptr;
  std::unique_ptr<EngineInvoker> invoker_;
  std::unique_ptr<EscalationLatch> latch_;
};

}  // namespace sharedos::envelope::mcp

#endif  // SHAREDOS_ENVELOPE_SVC_MCP_MCP_SERVER_H_
