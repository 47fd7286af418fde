// An HTTP/1.1 server whose every resource is bounded, for the doors SharedOS serves to parties it
// does not trust (the MCP front door, the reviewer console): Boost.Beast over Boost.Asio, with
// OpenSSL for HTTPS (the certificate and key re-read when they change: KeyPairWatcher). ADR 0017
// says why this library and not cpp-httplib's thread per connection.
//
// What is bounded (each an Options field; docs/reliability.md):
//   - connections: in total, and per client address (beyond either, an accepted connection is
//     closed at once, before a byte is read);
//   - the time to read one request — TLS handshake, headers and body — from the moment the
//     server starts waiting for it (a slow client loses its connection; the slow-loris case), and
//     the time to write an answer;
//   - header bytes (431 past the limit) and body bytes (413; a declared Content-Length is refused
//     before any of the body is read);
//   - handler threads, and the requests waiting for one (503 past the queue).
// All socket I/O runs on one event thread, so a slow or idle connection costs no thread. A route
// may have a header check, run on the event thread with the headers alone — before any of the
// body is read (the MCP door's token) — which can refuse the request and close the connection.
//
// Thread-safe: routes are added before Start; Stop may be called from any thread.

#ifndef SHAREDOS_COMMON_HTTP_BOUNDED_HTTP_SERVER_H_
#define SHAREDOS_COMMON_HTTP_BOUNDED_HTTP_SERVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/server/tls.h"

namespace sharedos::common::http {

// One request as a handler sees it. Header names compare case-insensitively.
struct Request {
  std::string method;
  // As sent: path and query ("/mcp?tool_names=portable").
  std::string target;
  std::string path;
  // The peer's IP address (no port).
  std::string remote_address;
  // (lower-cased name, value), in the order sent.
  std::vector<std::pair<std::string, std::string>> headers;
  // The query's parameters, percent-decoded; a name given twice keeps its first value.
  std::map<std::string, std::string> params;
  std::string body;

  bool has_header(absl::string_view name) const;
  // The first value of header `name`; empty when absent.
  std::string get_header_value(absl::string_view name) const;
  bool has_param(absl::string_view name) const { return params.count(std::string(name)) > 0; }
  std::string get_param_value(absl::string_view name) const;
};

// A handler's answer.
struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // Adds header `name` (Set-Cookie may be sent more than once).
  void set_header(absl::string_view name, absl::string_view value);
  // The body, and its Content-Type (replacing any set before).
  void set_content(std::string content, absl::string_view content_type);
};

class BoundedHttpServer {
 public:
  struct Options {
    // Plaintext or HTTPS (a KeyPairWatcher); the callers check that plaintext is on loopback.
    std::string host = "127.0.0.1";
    // 0 picks a free port.
    int port = 0;
    // Set: HTTPS with its pair (TLS 1.2 at least). Shared: it outlives every handshake.
    std::shared_ptr<server::KeyPairWatcher> tls;
    // Connections open at once, in total and from one client address.
    size_t max_connections = 512;
    size_t max_connections_per_address = 32;
    // Header bytes of one request (request line included), and body bytes.
    size_t max_header_bytes = 16 * 1024;
    size_t max_body_bytes = 4 << 20;
    // Reading one request (TLS handshake, headers and body), from when the server waits for it —
    // so also how long an idle kept-alive connection is kept — and writing one answer.
    absl::Duration read_timeout = absl::Seconds(10);
    absl::Duration write_timeout = absl::Seconds(30);
    // Threads running handlers, and requests waiting for one beyond them (then 503).
    int handler_threads = 8;
    size_t max_queued_requests = 256;
    // Kept-alive requests one connection may send before it is closed.
    int max_requests_per_connection = 1000;
  };

  using Handler = std::function<void(const Request&, Response&)>;
  // Runs with the headers only (Request::body empty), on the event thread: must be quick and
  // never block. False refuses the request with `response` (the connection is then closed).
  using HeaderCheck = std::function<bool(const Request&, Response&)>;

  // Binds the listener (port() is known from here on). Errors: UNAVAILABLE (cannot bind);
  // INVALID_ARGUMENT (a TLS context OpenSSL refuses).
  static absl::StatusOr<std::unique_ptr<BoundedHttpServer>> Bind(Options options);
  ~BoundedHttpServer();
  BoundedHttpServer(const BoundedHttpServer&) = delete;
  BoundedHttpServer& operator=(const BoundedHttpServer&) = delete;

  // Routes, before Start: an exact path and method. A path served with other methods is 405, an
  // unknown path 404 (`fallback`, when set, answers both instead).
  void Route(absl::string_view method, absl::string_view path, Handler handler,
             HeaderCheck check = nullptr);
  void SetFallback(Handler fallback) { fallback_ = std::move(fallback); }
  // A handler that throws answers 500 with this.
  void SetErrorBody(std::string body, std::string content_type) {
    error_body_ = std::move(body);
    error_content_type_ = std::move(content_type);
  }

  // Serves on its own threads until Stop.
  void Start();
  // Stops accepting, closes every connection, lets running handlers finish and joins. Idempotent.
  void Stop();

  int port() const { return port_; }
  const Options& options() const { return options_; }

  // Counters, for tests and metrics.
  struct Stats {
    uint64_t accepted = 0;
    // Closed at accept: over max_connections, over max_connections_per_address.
    uint64_t refused_total = 0;
    uint64_t refused_per_address = 0;
    // Connections closed because a read or write passed its timeout.
    uint64_t timed_out = 0;
    // Requests answered 503 because every handler thread was busy and the queue was full.
    uint64_t overloaded = 0;
    size_t open = 0;
  };
  Stats stats() const;

 private:
  struct Impl;
  template <typename Stream>
  class Connection;

  explicit BoundedHttpServer(Options options);

  const Options options_;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  // (method, path) → handler and header check.
  using RouteMap = std::map<std::pair<std::string, std::string>, std::pair<Handler, HeaderCheck>>;
  RouteMap routes_;
  Handler fallback_;
  std::string error_body_ = "Internal error";
  std::string error_content_type_ = "text/plain";
  std::atomic<bool> started_{false};
  std::atomic<bool> stopped_{false};
};

}  // namespace sharedos::common::http

#endif  // SHAREDOS_COMMON_HTTP_BOUNDED_HTTP_SERVER_H_
