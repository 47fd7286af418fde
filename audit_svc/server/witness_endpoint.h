// A witness's HTTP endpoint (docs/adr/0023): POST /v1/checkpoints takes one signed checkpoint
// (core::Witness::Receive) on the bounded HTTP server (common/http, ADR 0017) — plaintext only on
// loopback, HTTPS with the service's own certificate (--tls_cert, --tls_key) otherwise. Answers:
// 200 {"accepted":true,...}; 400 {"error":"<field>: …"}; 409 (older than or inconsistent with
// the checkpoint held: a rollback or a rewrite); 413 (a body over 16 KiB); 503 (this log cannot
// be written). No token: the signature under a pinned key is what admits a checkpoint (the ADR
// says why). Thread-safe; serves from Start until destroyed.
#ifndef SHAREDOS_AUDIT_SVC_SERVER_WITNESS_ENDPOINT_H_
#define SHAREDOS_AUDIT_SVC_SERVER_WITNESS_ENDPOINT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "audit_svc/core/witness.h"
#include "common/http/bounded_http_server.h"
#include "common/server/tls.h"

namespace sharedos::audit::server {

inline constexpr char kWitnessPath[] = "/v1/checkpoints";

struct WitnessEndpointOptions {
  std::string host = "127.0.0.1";
  // 0 picks a free port.
  int port = 0;
  // Set: HTTPS with this certificate and key (no client certificate is asked for).
  common::server::ServerTls tls;
};

class WitnessEndpoint {
 public:
  // Binds and serves. Errors: INVALID_ARGUMENT "--witness_host: …" (plaintext off loopback) and
  // those of CheckServerTls; UNAVAILABLE "--witness_port: cannot listen on …".
  static absl::StatusOr<std::unique_ptr<WitnessEndpoint>> Start(
      core::Witness& witness, const WitnessEndpointOptions& options);
  ~WitnessEndpoint();

  int port() const { return http_->port(); }
  // "http[s]://host:port/v1/checkpoints".
  std::string url() const { return url_; }

 private:
  WitnessEndpoint(std::unique_ptr<common::http::BoundedHttpServer> http, std::string url)
      : http_(std::move(http)), url_(std::move(url)) {}

  std::unique_ptr<common::http::BoundedHttpServer> http_;
  const std::string url_;
};

}  // namespace sharedos::audit::server

#endif  // SHAREDOS_AUDIT_SVC_SERVER_WITNESS_ENDPOINT_H_
