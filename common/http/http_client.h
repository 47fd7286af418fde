// Bounded HTTP requests, the one HTTP client of SharedOS's services: the identity provider's
// documents (common/oidc, GET) and signed checkpoints posted to a witness (audit_svc, POST).
// cpp-httplib (already in the tree) with OpenSSL for https: the server's certificate verified
// against a CA file, optionally a client certificate presented (mTLS) — the same files the
// process's gRPC channels use (--tls_ca, --tls_client_cert, --tls_client_key). Every request is
// bounded: connect, read and write time-outs, the answer's body cut at a size, no redirects, no
// keep-alive. An interface so that callers' unit tests answer from memory.
#ifndef SHAREDOS_COMMON_HTTP_HTTP_CLIENT_H_
#define SHAREDOS_COMMON_HTTP_HTTP_CLIENT_H_

#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace sharedos::common::http {

// An answer: its status and (at most the caller's bound of) its body.
struct HttpAnswer {
  int status = 0;
  std::string body;
};

class HttpClient {
 public:
  virtual ~HttpClient() = default;
  // GET `url` (http:// or https://). Errors: UNAVAILABLE (a malformed URL, cannot connect, a
  // time-out, a body larger than `max_bytes`).
  virtual absl::StatusOr<HttpAnswer> Get(absl::string_view url, size_t max_bytes) const = 0;
  // POST `body` (of `content_type`) to `url`. Errors: as Get.
  virtual absl::StatusOr<HttpAnswer> Post(absl::string_view url, const std::string& body,
                                          absl::string_view content_type,
                                          size_t max_bytes) const = 0;
};

// How an HttplibClient reaches its servers.
struct HttpClientOptions {
  // Connect, read and write time-outs, each.
  absl::Duration timeout = absl::Seconds(5);
  // https: the CA bundle the server's certificate must chain to (empty: the system's default
  // paths). Ignored for http.
  std::string ca_file;
  // https: a certificate and key presented to a server that asks for one (both or neither).
  std::string client_cert_file;
  std::string client_key_file;
};

// HttpClient over cpp-httplib. Thread-safe (a client per request).
class HttplibClient : public HttpClient {
 public:
  explicit HttplibClient(HttpClientOptions options) : options_(std::move(options)) {}
  absl::StatusOr<HttpAnswer> Get(absl::string_view url, size_t max_bytes) const override;
  absl::StatusOr<HttpAnswer> Post(absl::string_view url, const std::string& body,
                                  absl::string_view content_type, size_t max_bytes) const override;

 private:
  absl::StatusOr<HttpAnswer> Send(absl::string_view method, absl::string_view url,
                                  const std::string& body, absl::string_view content_type,
                                  size_t max_bytes) const;

  const HttpClientOptions options_;
};

}  // namespace sharedos::common::http

#endif  // SHAREDOS_COMMON_HTTP_HTTP_CLIENT_H_
