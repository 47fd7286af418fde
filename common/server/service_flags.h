// The flags every SharedOS service shares, defined once: --host, --port and --credentials here,
// the TLS flags (--tls_cert, --tls_key, --tls_client_ca, --tls_ca, ...) in tls_flags.h. A service's
// main links this library and reads them with ReadServiceFlags(); its own flags stay in its main.
// (sharedosd, whose listener flags differ, does not link it.)

#ifndef SHAREDOS_COMMON_SERVER_SERVICE_FLAGS_H_
#define SHAREDOS_COMMON_SERVER_SERVICE_FLAGS_H_

#include <memory>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "common/client/channel.h"
#include "common/metrics/metrics.h"
#include "common/oidc/bearer_verifier.h"
#include "common/server/auth.h"
#include "common/server/server_runner.h"
#include "common/server/service_main.h"

namespace sharedos::common::server {

// The shared flags, read and checked.
struct ServiceFlags {
  // --host, --port, --tls_cert, --tls_key, --tls_client_ca (ServerRunner::Start checks them).
  ServerOptions server;
  // --tls_ca, --tls_client_cert, --tls_client_key, --tls_server_name: every channel this service
  // opens (ReadUpstream, its audit writer, its providers).
  client::ChannelTls channel_tls;
  // --metrics_port ≥ 0: the process's metrics (server.metrics points at it; the service passes
  // it to its cores), served by RunService. Null otherwise.
  std::unique_ptr<metrics::Metrics> metrics;
  // --oidc_config: the identity provider's token verifier, attached to `authenticator` (declared
  // before it, so destroyed after it). Null without the flag.
  std::unique_ptr<oidc::OidcBearerVerifier> oidc;
  // The callers --credentials names (and, with --oidc_config, the provider's tokens).
  std::unique_ptr<Authenticator> authenticator;
};

// Errors: INVALID_ARGUMENT "--credentials: required"; those of Authenticator::FromFile and
// AttachOidcFromFlags (oidc_flags.h).
absl::StatusOr<ServiceFlags> ReadServiceFlags();

// Builds a service from the shared flags and its own; errors are refused start-ups.
using BuildService =
    absl::FunctionRef<absl::StatusOr<std::unique_ptr<Servable>>(const ServiceFlags& flags)>;

// The whole of a service's main: ParseServiceCommandLine, ReadServiceFlags, `build`, then
// ServeUntilTerminated. Returns the exit code (2 with "<name>: <error>" on stderr when a step
// fails).
int RunService(int argc, char** argv, const ServiceBinary& binary, BuildService build);

}  // namespace sharedos::common::server

#endif  // SHAREDOS_COMMON_SERVER_SERVICE_FLAGS_H_
