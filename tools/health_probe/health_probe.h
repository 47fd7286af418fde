// health_probe: one grpc.health.v1.Health/Check call — what a container HEALTHCHECK and a
// Kubernetes exec probe run (the kubelet's own gRPC probe speaks plaintext only, and every
// SharedOS listener off loopback is TLS). SERVING exits 0; anything else (NOT_SERVING, a refused
// or unreachable call, a deadline) exits 1 with one line saying what was seen. With --mode=live
// any answer of the health service exits 0 (a liveness probe: the process runs and serves
// gRPC, even while a dependency it needs is down and it reports NOT_SERVING).
#ifndef SHAREDOS_TOOLS_HEALTH_PROBE_HEALTH_PROBE_H_
#define SHAREDOS_TOOLS_HEALTH_PROBE_HEALTH_PROBE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/client/channel.h"

namespace sharedos::health_probe {

struct Options {
  std::string target;   // --target=HOST:PORT (required)
  std::string service;  // --service: a registered service name; empty: the whole server
  absl::Duration timeout = absl::Seconds(5);  // --timeout
  // --mode=ready (default): healthy means SERVING. --mode=live: healthy means answering.
  bool live = false;
  common::client::ChannelTls
      tls;  // --tls_ca, --tls_client_cert/--tls_client_key, --tls_server_name
};

// Parses `args` (argv without argv[0]): --flag=value only. Errors: INVALID_ARGUMENT naming the
// flag (unknown, empty, over 4096 bytes, a --timeout that is not a positive duration of at most
// 60s, a --mode other than ready or live, no --target).
absl::StatusOr<Options> ParseArgs(const std::vector<std::string>& args);

// The serving status the server reported ("SERVING", "NOT_SERVING", "UNKNOWN",
// "SERVICE_UNKNOWN"). Errors: those of the call (UNAVAILABLE, DEADLINE_EXCEEDED, NOT_FOUND for a
// service the server does not know, …) and of common::client::NewChannel.
absl::StatusOr<std::string> Check(const Options& options);

// Whether `status` (Check's answer) is healthy under `options` (--mode).
bool Healthy(const Options& options, const absl::StatusOr<std::string>& status);

}  // namespace sharedos::health_probe

#endif  // SHAREDOS_TOOLS_HEALTH_PROBE_HEALTH_PROBE_H_
