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
// sharedos/catalogHash and sharedos/executionId. tools/call goes through the EscalationLatch
// around TurnEngine::InvokeTool — the gRPC seat's checks, codes and audit; a refusal is a tool
// result {isError: true, content: [text {status, code, message}], _meta: {sharedos/status,
// sharedos/code}}, never a JSON-RPC error; structuredContent when the tool declares an output
// schema. Responses are JSON, or one SSE event when the client accepts only text/event-stream.
//
// Thread-safe: requests are served concurrently on cpp-httplib's worker pool.

#ifndef SHAREDOS_ENVELOPE_SVC_MCP_MCP_SERVER_H_
#define SHAREDOS_ENVELOPE_SVC_MCP_MCP_SERVER_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/metrics/sinks.h"
#include "common/time/clock.h"
#include "envelope_svc/core/turn_engine.h"
#include "envelope_svc/mcp/escalation_latch.h"
#include "envelope_svc/mcp/execution_token.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace sharedos::envelope::mcp {

// The protocol versions served, oldest first.
inline constexpr const char* kLegacyProtocolVersions[] = {"2025-03-26", "2025-06-18", "2025-11-25"};
inline constexpr const char* kModernProtocolVersions[] = {"2026-07-28"};

class McpServer {
 public:
  struct Options {
    // Loopback only: the front door speaks plaintext HTTP (a TLS-terminating proxy may front it).
    std::string host = "127.0.0.1";
    // 0 picks a free port (url() reports it).
    int port = 0;
    // Request bodies above this are 413.
    size_t max_body_bytes = 4 << 20;
    // Reading a request and writing its answer, each (a tools/call is bounded by the engine's
    // provider and authorizer timeouts).
    absl::Duration request_timeout = absl::Seconds(60);
    // Origins accepted besides the endpoint's own (http://127.0.0.1:<port>,
    // http://localhost:<port>).
    std::vector<std::string> allowed_origins;
    std::string server_name = "sharedos-envelope";
    std::string server_version = "1.0.0";
    // Requests by method and status (common/metrics/sinks.h); null: none. Borrowed.
    common::metrics::Metrics* metrics = nullptr;
  };

  // Binds the listener; url() is known from here on, so the engine can be told it before serving.
  // Errors: INVALID_ARGUMENT (a host off loopback); UNAVAILABLE (the address cannot be bound).
  static absl::StatusOr<std::unique_ptr<McpServer>> Bind(Options options);
  ~McpServer();
  McpServer(const McpServer&) = delete;
  McpServer& operator=(const McpServer&) = delete;

  // "http://<host>:<port>/mcp".
  const std::string& url() const { return url_; }
  int port() const { return port_; }

  // Serves on a background thread until Shutdown. Borrows all three; they must outlive the
  // server (or Shutdown).
  void Start(core::TurnEngine& engine, const ExecutionTokenCodec& tokens,
             const common::Clock& clock);
  // Stops accepting, finishes the requests in hand and joins. Idempotent.
  void Shutdown();

 private:
  McpServer(Options options, std::unique_ptr<httplib::Server> http, int port);

  // One POST /mcp as it passes the steps (mcp_server.cc).
  struct Exchange;
  // A method's answer: its result, or a JSON-RPC error.
  struct Reply;
  // A JSON-RPC method served, in which eras, by which handler.
  struct Method;

  // POST /mcp: the steps below, in the order they run; the first that answers ends it.
  void HandlePost(const httplib::Request& request, httplib::Response& response);
  // Transport: the Origin (DNS rebinding), then the execution token (401, not audited).
  bool CheckOrigin(Exchange& exchange) const;
  bool Authenticate(Exchange& exchange) const;
  // Content-Type and Accept (JSON, or one SSE event).
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
  std::unique_ptr<httplib::Server> http_;
  const int port_;
  const std::string url_;
  std::vector<std::string> origins_;
  core::TurnEngine* engine_ = nullptr;
  const ExecutionTokenCodec* tokens_ = nullptr;
  const common::Clock* clock_ = nullptr;
  std::unique_ptr<EngineInvoker> invoker_;
  std::unique_ptr<EscalationLatch> latch_;
  std::thread thread_;
  std::atomic<bool> loop_ended_{false};
};

}  // namespace sharedos::envelope::mcp

#endif  // SHAREDOS_ENVELOPE_SVC_MCP_MCP_SERVER_H_
